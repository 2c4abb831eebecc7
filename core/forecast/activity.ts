import type { Trail, TrailPoint } from './trail.js';

/**
 * From active time to wall time. The rate of a bar is fitted against active time (trail.ts); turning "N more
 * minutes of activity" into a clock time needs a guess of the breaks to come. Nobody knows the next idle gap, but
 * people keep hours: they stop in the evening, sleep, and work less at weekends. The model:
 *
 *     expected active share at a future time s = session share × presence(s)
 *
 * - **session share**: how hard the seat works while at it — active time ÷ the wall time of the clock hours that
 *   saw any activity, over the current trail (breaks within a working hour count; hours away do not).
 * - **presence(s)**: the chance of any activity in that local hour. For the rest of today, among the past days of
 *   the same kind (weekday or weekend) that had activity in the current hour — "on days I work at 3pm, am I
 *   still at it at 6pm?"; for later days, among all past days of that kind, days off included. Each is shrunk
 *   toward 1 (today) or the history's overall presence (later days) by one pseudo-day. Hours spent blocked at
 *   100% are left out (blocked is not away).
 *
 * Without a day of history (a new install) there is no presence: the share is the trail's plain duty cycle
 * (active ÷ wall time since the trail began), as if today's pattern of breaks went on.
 *
 * The wall time at which N active minutes have accumulated follows in closed form hour by hour.
 * Pure: the clock and the time zone offset are passed in.
 */

export interface ActivityDay {
  /** Local day number (days since 1970-01-01 in the seat's zone). */
  day: number;
  weekend: boolean;
  /** Active time per local hour, ms. */
  activeMs: number[];
  /** Hours spent mostly at 100% (blocked, not away): left out of presence. */
  blocked: boolean[];
}

export interface ActivityProfile {
  /** Days with some activity, oldest first. */
  days: ActivityDay[];
  /** Local days the history covers (partial ones included, today excluded), by kind, with or without activity. */
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

export function localDay(atMs: number, tzOffsetMinutes: number): number {
  return Math.floor((atMs + tzOffsetMinutes * 60_000) / DAY);
}

export function localHour(atMs: number, tzOffsetMinutes: number): number {
  const local = atMs + tzOffsetMinutes * 60_000;
  return Math.floor((local - Math.floor(local / DAY) * DAY) / HOUR);
}

export function isWeekend(day: number): boolean {
  const dow = (((day + 4) % 7) + 7) % 7; // 1970-01-01 was a Thursday; 0 = Sunday
  return dow === 0 || dow === 6;
}

/** The next local hour boundary after `atMs`. */
function nextHour(atMs: number, tzOffsetMinutes: number): number {
  const off = tzOffsetMinutes * 60_000;
  return Math.floor((atMs + off) / HOUR) * HOUR + HOUR - off;
}

/**
 * The active time of the gap between two readings when the bar rose across it (someone was at work), else 0. An
 * hour counts as worked when it holds such a gap.
 */
function worked(a: TrailPoint, b: TrailPoint): number {
  return b.usedPct > a.usedPct ? Math.max(0, b.activeMs - a.activeMs) : 0;
}

/**
 * Active time per local day and hour, from the trails' readings up to `nowMs` (the active time of the gap before
 * each reading goes to that reading's hour). Null with less than `minHistoryMs` of history.
 */
export function activityProfile(trails: readonly Trail[], nowMs: number, opts?: Partial<ActivityOptions>): ActivityProfile | null {
  const o = { ...ACTIVITY_DEFAULTS, ...opts };
  const tz = o.tzOffsetMinutes;
  let first = Infinity;
  for (const t of trails) first = Math.min(first, t.points[0]?.atMs ?? Infinity);
  const from = Math.max(nowMs - o.maxHistoryMs, first);
  if (!Number.isFinite(from) || nowMs - from < o.minHistoryMs) return null;
  const byDay = new Map<number, ActivityDay>();
  const dayAt = (atMs: number): ActivityDay => {
    const d = localDay(atMs, tz);
    let day = byDay.get(d);
    if (!day) byDay.set(d, (day = { day: d, weekend: isWeekend(d), activeMs: new Array<number>(24).fill(0), blocked: new Array<boolean>(24).fill(false) }));
    return day;
  };
  for (const t of trails) {
    const pts = t.points;
    for (let i = 1; i < pts.length; i++) {
      const b = pts[i]!;
      if (b.atMs <= from || b.atMs > nowMs) continue;
      const gap = worked(pts[i - 1]!, b);
      if (gap > 0) dayAt(b.atMs).activeMs[localHour(b.atMs, tz)]! += gap;
    }
    const hit = pts.find((p) => p.usedPct >= 100);
    if (!hit) continue;
    const until = Math.min(nowMs, t.resetsAtMs ?? pts[pts.length - 1]!.atMs);
    for (let s = Math.max(from, hit.atMs); s < until; ) {
      const e = Math.min(until, nextHour(s, tz));
      if (e - s >= HOUR / 2) dayAt(s).blocked[localHour(s, tz)] = true;
      s = e;
    }
  }
  const daysSeen = { weekday: 0, weekend: 0 };
  for (let d = localDay(from, tz); d < localDay(nowMs, tz); d++) daysSeen[isWeekend(d) ? 'weekend' : 'weekday']++;
  return { days: [...byDay.values()].sort((a, b) => a.day - b.day), daysSeen, historyMs: nowMs - from, tzOffsetMinutes: tz };
}

export interface Presence {
  /** The local day the `today` shares are for. */
  day: number;
  /** P(some activity) per local hour for the rest of today (hours before now: 1). */
  today: number[];
  /** P(some activity) per local hour of later days: 0–23 weekdays, 24–47 weekend days. */
  later: number[];
  tzOffsetMinutes: number;
}

/** Presence by hour, as of `nowMs` (see the module note). */
export function presence(profile: ActivityProfile, nowMs: number, priorDays = 1): Presence {
  const tz = profile.tzOffsetMinutes;
  const today = localDay(nowMs, tz);
  const hour = localHour(nowMs, tz);
  const past = profile.days.filter((d) => d.day < today);
  const like = past.filter((d) => d.weekend === isWeekend(today) && d.activeMs[hour]! > 0);
  const todayShares = new Array<number>(24).fill(1);
  for (let h = hour; h < 24; h++) {
    const open = like.filter((d) => !d.blocked[h]);
    todayShares[h] = (open.filter((d) => d.activeMs[h]! > 0).length + priorDays) / (open.length + priorDays);
  }
  // Later days: every day seen counts (days off too), less the hours spent blocked.
  const counts = new Array<number>(48).fill(0);
  const blocked = new Array<number>(48).fill(0);
  for (const d of past) {
    for (let h = 0; h < 24; h++) {
      const k = (d.weekend ? 24 : 0) + h;
      if (d.blocked[h]) blocked[k]!++;
      else if (d.activeMs[h]! > 0) counts[k]!++;
    }
  }
  const seen = (k: number): number => Math.max(0, (k >= 24 ? profile.daysSeen.weekend : profile.daysSeen.weekday) - blocked[k]!);
  let slots = 0;
  for (let k = 0; k < 48; k++) slots += seen(k);
  const base = slots > 0 ? counts.reduce((a, b) => a + b, 0) / slots : 0;
  const later = counts.map((c, k) => (c + base * priorDays) / (seen(k) + priorDays));
  return { day: today, today: todayShares, later, tzOffsetMinutes: tz };
}

/** Where future activity comes from: the session share, times presence when there is a profile. */
export interface ActivityModel {
  share: number;
  presence: Presence | null;
}

/** The expected active share at a time. */
export function activeShareAt(m: ActivityModel, atMs: number): number {
  const p = m.presence;
  if (!p) return m.share;
  const d = localDay(atMs, p.tzOffsetMinutes);
  const h = localHour(atMs, p.tzOffsetMinutes);
  const q = d === p.day ? p.today[h]! : p.later[(isWeekend(d) ? 24 : 0) + h]!;
  return Math.min(1, m.share * q);
}

/** The wall time at which `neededMs` of activity is expected to have accumulated since `nowMs`; null beyond `maxMs`. */
export function wallTimeForActive(m: ActivityModel, nowMs: number, neededMs: number, maxMs: number): number | null {
  if (neededMs <= 0) return nowMs;
  const end = nowMs + maxMs;
  const tz = m.presence?.tzOffsetMinutes ?? 0;
  let acc = 0;
  for (let s = nowMs; s < end; ) {
    const e = Math.min(end, nextHour(s, tz));
    const a = activeShareAt(m, s);
    if (a > 0 && acc + a * (e - s) >= neededMs) return s + (neededMs - acc) / a;
    acc += a * (e - s);
    s = e;
  }
  return null;
}

/**
 * Active time, and the wall time of the clock hours in which the bar rose, over [fromMs, toMs] of the trails (the
 * last hour cut at toMs): how hard someone works while at it. Null when the bar never rose.
 */
export function sessionShare(trails: readonly Trail[], fromMs: number, toMs: number, tzOffsetMinutes: number): { activeMs: number; wallMs: number } | null {
  const hours = new Set<number>();
  let active = 0;
  const off = tzOffsetMinutes * 60_000;
  for (let ti = trails.length - 1; ti >= 0; ti--) {
    const pts = trails[ti]!.points;
    if (pts.length === 0) continue;
    if (pts[pts.length - 1]!.atMs <= fromMs) break;
    for (let i = pts.length - 1; i >= 1; i--) {
      const b = pts[i]!;
      if (b.atMs <= fromMs) break;
      if (b.atMs > toMs) continue;
      const a = pts[i - 1]!;
      const gap = Math.max(0, b.activeMs - a.activeMs);
      active += gap;
      if (worked(a, b) > 0) hours.add(Math.floor((b.atMs + off) / HOUR));
    }
  }
  if (hours.size === 0) return null;
  let wall = 0;
  for (const h of hours) wall += Math.min(toMs, (h + 1) * HOUR - off) - Math.max(fromMs, h * HOUR - off);
  return { activeMs: active, wallMs: Math.max(wall, active) };
}
