import type { Trail } from './trail.js';

/**
 * When will the seat be active? The rate of a bar is fitted against active time; turning "N more minutes of
 * activity" into a wall-clock time needs a guess of the breaks to come. Nobody knows the next idle gap, but people
 * keep hours: they stop in the evening, have lunch, sleep, and work less at weekends. So:
 *
 * - An **activity profile**: for each local hour of a weekday, and of a weekend day (48 buckets), the share of
 *   wall time that was active in the bar's own history (active time as in trail.ts), shrunk toward the trail's own duty
 *   cycle where a bucket has seen little time. Only days with some activity count (the forecast runs
 *   on a day someone works), and time spent blocked at 100% does not count as idle. No profile without
 *   `minHistoryMs` of history.
 * - The **expected activity** at a future time s blends the current pace into the profile:
 *       a(s) = d_now·e^(−u/T) + p(s)·(1 − e^(−u/T)),   u = s − now,
 *   where d_now is the active share of the last hour (someone working now is likely working in ten minutes) and
 *   p(s) the profile (or, without one, the trail's duty cycle). The wall time to the next N active minutes is
 *   where ∫ a reaches N (closed form per hour bucket, bisection inside the last one).
 *
 * Pure: the clock and the time zone offset are passed in.
 */

export interface ActivityDay {
  /** Local day number (days since 1970-01-01 in the seat's zone). */
  day: number;
  weekend: boolean;
  /** Active and observed wall time per local hour, ms. */
  activeMs: number[];
  observedMs: number[];
}

export interface ActivityProfile {
  /** Days with some activity, oldest first. */
  days: ActivityDay[];
  /** Active time seen per bucket (48: local hours 0–23 of weekdays, then of weekend days), ms. */
  activeMs: number[];
  /** Wall time of history seen per bucket, ms. */
  observedMs: number[];
  /** Active ÷ wall time over the history's working days. */
  overall: number;
  /** Whole or partial local days the history covers, by kind (with or without activity). */
  daysSeen: { weekday: number; weekend: number };
  /** The history the profile was built from, ms of wall time. */
  historyMs: number;
  tzOffsetMinutes: number;
}

export interface ActivityOptions {
  /** The seat's offset from UTC, minutes (e.g. −420 for PDT). Default 0. */
  tzOffsetMinutes: number;
  /** Look back at most this far (default 28 days). */
  maxHistoryMs: number;
  /** No profile from less history than this (default 1 day). */
  minHistoryMs: number;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export const ACTIVITY_DEFAULTS: ActivityOptions = {
  tzOffsetMinutes: 0,
  maxHistoryMs: 28 * DAY,
  minHistoryMs: DAY,
};

function localDay(atMs: number, tzOffsetMinutes: number): number {
  return Math.floor((atMs + tzOffsetMinutes * 60_000) / DAY);
}

function localHour(atMs: number, tzOffsetMinutes: number): number {
  const local = atMs + tzOffsetMinutes * 60_000;
  return Math.floor((local - Math.floor(local / DAY) * DAY) / HOUR);
}

function isWeekend(day: number): boolean {
  const dow = (((day + 4) % 7) + 7) % 7; // 1970-01-01 was a Thursday; 0 = Sunday
  return dow === 0 || dow === 6;
}

/** The bucket of a time: local hour, +24 at weekends. */
export function bucketOf(atMs: number, tzOffsetMinutes: number): number {
  return (isWeekend(localDay(atMs, tzOffsetMinutes)) ? 24 : 0) + localHour(atMs, tzOffsetMinutes);
}

/** The next bucket boundary (local hour) after `atMs`. */
function nextHour(atMs: number, tzOffsetMinutes: number): number {
  const off = tzOffsetMinutes * 60_000;
  return Math.floor((atMs + off) / HOUR) * HOUR + HOUR - off;
}

/** Activity per local day and hour from the trails' readings up to `nowMs`; null with too little history. */
export function activityProfile(trails: readonly Trail[], nowMs: number, opts?: Partial<ActivityOptions>): ActivityProfile | null {
  const o = { ...ACTIVITY_DEFAULTS, ...opts };
  const tz = o.tzOffsetMinutes;
  let first = Infinity;
  for (const t of trails) first = Math.min(first, t.points[0]?.atMs ?? Infinity);
  const from = Math.max(nowMs - o.maxHistoryMs, first);
  if (!Number.isFinite(from) || nowMs - from < o.minHistoryMs) return null;
  const byDay = new Map<number, ActivityDay>();
  const dayOf = (d: number): ActivityDay => {
    let x = byDay.get(d);
    if (!x) byDay.set(d, (x = { day: d, weekend: isWeekend(d), activeMs: new Array<number>(24).fill(0), observedMs: new Array<number>(24).fill(0) }));
    return x;
  };
  const walls: Array<[number, number]> = [];
  let totalActive = 0;
  for (const t of trails) {
    const pts = t.points;
    const hit = pts.find((p) => p.usedPct >= 100);
    if (hit) walls.push([hit.atMs, Math.min(nowMs, t.resetsAtMs ?? pts[pts.length - 1]!.atMs)]);
    for (let i = 1; i < pts.length; i++) {
      const b = pts[i]!;
      if (b.atMs <= from || b.atMs > nowMs) continue;
      const gap = b.activeMs - pts[i - 1]!.activeMs;
      if (gap <= 0) continue;
      dayOf(localDay(b.atMs, tz)).activeMs[localHour(b.atMs, tz)]! += gap;
      totalActive += gap;
    }
  }
  // Wall time counts only on days with some activity (a day off says nothing about the hours of a working day),
  // and not while a bar sat at 100% (blocked, not idle by choice).
  let counted = 0;
  for (let s = from; s < nowMs; ) {
    const e = Math.min(nowMs, nextHour(s, tz));
    const d = byDay.get(localDay(s, tz));
    if (d) {
      let len = e - s;
      for (const [ws, we] of walls) len -= Math.max(0, Math.min(e, we) - Math.max(s, ws));
      d.observedMs[localHour(s, tz)]! += Math.max(0, len);
      counted += Math.max(0, len);
    }
    s = e;
  }
  const days = [...byDay.values()].sort((a, b) => a.day - b.day);
  const activeMs = new Array<number>(48).fill(0);
  const observedMs = new Array<number>(48).fill(0);
  for (const d of days) {
    for (let h = 0; h < 24; h++) {
      activeMs[(d.weekend ? 24 : 0) + h]! += d.activeMs[h]!;
      observedMs[(d.weekend ? 24 : 0) + h]! += d.observedMs[h]!;
    }
  }
  const daysSeen = { weekday: 0, weekend: 0 };
  for (let d = localDay(from, tz); d < localDay(nowMs, tz); d++) daysSeen[isWeekend(d) ? 'weekend' : 'weekday']++;
  return { days, activeMs, observedMs, overall: counted > 0 ? Math.min(1, totalActive / counted) : 0, daysSeen, historyMs: nowMs - from, tzOffsetMinutes: tz };
}

/** Where future activity comes from: the profile (or a flat share without one), and the current pace. */
export interface ActivityModel {
  profile: ActivityProfile | null;
  /**
   * The share used without a profile, and the prior of each hour with one: an hour's share is
   * (active + flat × priorMs) ÷ (observed + priorMs), so an hour never seen falls back to the flat share.
   */
  flat: number;
  priorMs: number;
  /** The profile's shares are scaled by this (how much busier than usual the current trail has been). */
  level: number;
  /** The active share of the recent past. */
  now: number;
  /** How fast the current pace gives way to the profile, ms. */
  persistMs: number;
  /** The rest of today, from the past days of the same kind that were active at this hour. */
  today?: { day: number; shares: number[] } | null;
  /** Presence mode: share = level × flat × P(some activity in that hour), from the history's days. */
  presence?: { today: number; hours: number[]; later: number[] } | null;
}

/**
 * Presence: the chance of any activity in each local hour. For the rest of today, among the past days of the
 * same kind that had activity in the current hour; for later days, among all past days of that kind (days off
 * included). Each shrunk toward 1 (today) or the overall presence (later) with a prior of one day.
 */
export function presence(profile: ActivityProfile, nowMs: number): { today: number; hours: number[]; later: number[] } {
  const tz = profile.tzOffsetMinutes;
  const today = localDay(nowMs, tz);
  const hour = localHour(nowMs, tz);
  const weekend = isWeekend(today);
  const past = profile.days.filter((d) => d.day < today);
  const like = past.filter((d) => d.weekend === weekend && d.activeMs[hour]! > 0);
  const hours = new Array<number>(24).fill(1);
  for (let h = hour; h < 24; h++) hours[h] = (like.filter((d) => d.activeMs[h]! > 0).length + 1) / (like.length + 1);
  const later = new Array<number>(48).fill(0);
  let any = 0;
  let slots = 0;
  for (const k of [0, 24]) {
    const n = k === 24 ? profile.daysSeen.weekend : profile.daysSeen.weekday;
    const kind = past.filter((d) => d.weekend === (k === 24));
    for (let h = 0; h < 24; h++) {
      const c = kind.filter((d) => d.activeMs[h]! > 0).length;
      later[k + h] = c;
      any += c;
    }
    slots += 24 * n;
    for (let h = 0; h < 24; h++) later[k + h] = later[k + h]! / Math.max(1, n);
  }
  const base = slots > 0 ? any / slots : 0.3;
  for (const k of [0, 24]) {
    const n = k === 24 ? profile.daysSeen.weekend : profile.daysSeen.weekday;
    for (let h = 0; h < 24; h++) later[k + h] = (later[k + h]! * n + base) / (n + 1);
  }
  return { today, hours, later };
}

/**
 * Today's hourly shares conditioned on working now: from the past days (of the same kind, weekday or weekend)
 * with activity in the current local hour, the active share of each hour, shrunk toward `flat`. Null when no
 * past day was active at this hour.
 */
export function todayShares(profile: ActivityProfile, nowMs: number, flat: number, priorMs: number): { day: number; shares: number[] } | null {
  const tz = profile.tzOffsetMinutes;
  const today = localDay(nowMs, tz);
  const hour = localHour(nowMs, tz);
  const weekend = isWeekend(today);
  const like = profile.days.filter((d) => d.day < today && d.weekend === weekend && d.activeMs[hour]! > 0);
  if (like.length === 0) return null;
  const shares = new Array<number>(24).fill(flat);
  for (let h = hour; h < 24; h++) {
    let a = 0;
    let o = 0;
    for (const d of like) {
      a += d.activeMs[h]!;
      o += d.observedMs[h]!;
    }
    shares[h] = Math.min(1, (a + flat * priorMs) / (o + priorMs));
  }
  return { day: today, shares };
}

/** ∫ a(s) ds over [fromMs, toMs] for a constant profile share p, u measured from `originMs`. */
function integral(m: ActivityModel, p: number, originMs: number, fromMs: number, toMs: number): number {
  const T = m.persistMs;
  const u0 = fromMs - originMs;
  const u1 = toMs - originMs;
  if (T <= 0) return p * (u1 - u0);
  return p * (u1 - u0) + (m.now - p) * T * (Math.exp(-u0 / T) - Math.exp(-u1 / T));
}

export function share(m: ActivityModel, atMs: number): number {
  if (!m.profile) return m.flat;
  const tz = m.profile.tzOffsetMinutes;
  if (m.presence) {
    const q = localDay(atMs, tz) === m.presence.today ? m.presence.hours[localHour(atMs, tz)]! : m.presence.later[bucketOf(atMs, tz)]!;
    return Math.min(1, m.level * m.flat * q);
  }
  if (m.today && localDay(atMs, tz) === m.today.day) return Math.min(1, m.level * m.today.shares[localHour(atMs, tz)]!);
  const b = bucketOf(atMs, tz);
  return Math.min(1, (m.level * (m.profile.activeMs[b]! + m.flat * m.priorMs)) / (m.profile.observedMs[b]! + m.priorMs));
}

/** Expected active time between `nowMs` and `toMs`. */
export function expectedActiveMs(m: ActivityModel, nowMs: number, toMs: number): number {
  let acc = 0;
  for (let s = nowMs; s < toMs; ) {
    const e = Math.min(toMs, nextHour(s, m.profile?.tzOffsetMinutes ?? 0));
    acc += integral(m, share(m, s), nowMs, s, e);
    s = e;
  }
  return acc;
}

/**
 * The wall time at which the expected active time since `nowMs` reaches `neededMs`, or null if it does not
 * within `maxMs`.
 */
export function wallTimeForActive(m: ActivityModel, nowMs: number, neededMs: number, maxMs: number): number | null {
  if (neededMs <= 0) return nowMs;
  const end = nowMs + maxMs;
  let acc = 0;
  for (let s = nowMs; s < end; ) {
    const e = Math.min(end, nextHour(s, m.profile?.tzOffsetMinutes ?? 0));
    const p = share(m, s);
    const seg = integral(m, p, nowMs, s, e);
    if (acc + seg >= neededMs) {
      let lo = s;
      let hi = e;
      for (let i = 0; i < 40 && hi - lo > 1000; i++) {
        const mid = (lo + hi) / 2;
        if (acc + integral(m, p, nowMs, s, mid) >= neededMs) hi = mid;
        else lo = mid;
      }
      return hi;
    }
    acc += seg;
    s = e;
  }
  return null;
}

/** The active share of wall time over [fromMs, toMs] in the trails (activity between readings in that span). */
export function activeShare(trails: readonly Trail[], fromMs: number, toMs: number): number {
  if (toMs <= fromMs) return 0;
  let active = 0;
  for (let ti = trails.length - 1; ti >= 0; ti--) {
    const pts = trails[ti]!.points;
    if (pts.length === 0) continue;
    if (pts[pts.length - 1]!.atMs <= fromMs) break;
    for (let i = pts.length - 1; i >= 1; i--) {
      const b = pts[i]!;
      if (b.atMs <= fromMs) break;
      if (b.atMs > toMs) continue;
      const a = pts[i - 1]!;
      // Only the part of the gap inside the span counts.
      const f = a.atMs >= fromMs ? 1 : (b.atMs - fromMs) / (b.atMs - a.atMs);
      active += f * (b.activeMs - a.activeMs);
    }
  }
  return Math.min(1, active / (toMs - fromMs));
}

/**
 * The active share of the hours that saw any activity, over [fromMs, toMs] (whole clock hours, the last one
 * cut at toMs): how hard someone works while at it, leaving out the hours they were away.
 */
export function sessionShare(trails: readonly Trail[], fromMs: number, toMs: number, tzOffsetMinutes: number): { activeMs: number; wallMs: number } | null {
  const perHour = new Map<number, number>();
  const off = tzOffsetMinutes * 60_000;
  for (let ti = trails.length - 1; ti >= 0; ti--) {
    const pts = trails[ti]!.points;
    if (pts.length === 0) continue;
    if (pts[pts.length - 1]!.atMs <= fromMs) break;
    for (let i = pts.length - 1; i >= 1; i--) {
      const b = pts[i]!;
      if (b.atMs <= fromMs) break;
      if (b.atMs > toMs) continue;
      const gap = b.activeMs - pts[i - 1]!.activeMs;
      if (gap <= 0) continue;
      const h = Math.floor((b.atMs + off) / HOUR);
      perHour.set(h, (perHour.get(h) ?? 0) + gap);
    }
  }
  if (perHour.size === 0) return null;
  let active = 0;
  let wall = 0;
  for (const [h, a] of perHour) {
    const start = Math.max(fromMs, h * HOUR - off);
    const end = Math.min(toMs, (h + 1) * HOUR - off);
    active += a;
    wall += Math.max(end - start, a);
  }
  return wall > 0 ? { activeMs: active, wallMs: wall } : null;
}

/** The profile's active share of the hours that saw any activity. */
export function profileSessionShare(profile: ActivityProfile): number | null {
  let a = 0;
  let o = 0;
  for (const d of profile.days) {
    for (let h = 0; h < 24; h++) {
      if (d.activeMs[h]! <= 0) continue;
      a += d.activeMs[h]!;
      o += Math.max(d.observedMs[h]!, d.activeMs[h]!);
    }
  }
  return o > 0 ? Math.min(1, a / o) : null;
}
