/**
 * The bar sample model and its trails.
 *
 * A *bar* is one plan window of one seat (provider + window: Claude's five_hour / seven_day / seven_day_opus …,
 * Codex primary / secondary). Every reading of it is a {@link BarSample} that keeps its source and time.
 *
 * A *trail* is the run of readings of one bar within one window instance: it ends at a rollover, when `resets_at`
 * moves. Inside a trail the bar never goes down: a lower reading comes from a stale session (a statusline
 * re-rendered from old data, a lagging source) and does not lower the bar (the high-water mark).
 *
 * *Active time* is wall time with the idle stretches squeezed out: a stretch longer than `idleGapMs` in which the
 * bar moved by less than `idleMovePct` (a lunch, a night, a long test run) counts as `idleKeepMs` of active
 * time. Slopes are fitted against active time, so an idle lunch does not flatten the rate.
 *
 * Pure: no clock, no I/O.
 */

export interface BarSample {
  /** "claude" | "codex" | … */
  provider: string;
  /** "five_hour", "seven_day", "seven_day_opus", "seven_day_sonnet", "codex_primary", "codex_secondary", … */
  window: string;
  /** 0–100 (sources cap it at 100). */
  usedPct: number;
  /** When this window instance resets, epoch ms; null when the source does not say. */
  resetsAtMs: number | null;
  /** When the reading was taken, epoch ms. */
  observedAtMs: number;
  /** Which adapter produced it: "statusline", "oauth-usage", "codex-rollout", … */
  source: string;
  /** The window's length when the source states it (Codex window_minutes); otherwise see {@link windowLengthMs}. */
  windowMs?: number | null;
}

const HOUR = 3_600_000;
const MINUTE = 60_000;

/** The length of a named window, or null when the name does not say (Codex windows carry their own length). */
export function windowLengthMs(window: string): number | null {
  if (window === 'five_hour') return 5 * HOUR;
  if (window === 'seven_day' || window.startsWith('seven_day_') || window === 'weekly' || window.startsWith('weekly_')) return 7 * 24 * HOUR;
  return null;
}

/** A bar's identity: "claude:five_hour". */
export function barKey(s: Pick<BarSample, 'provider' | 'window'>): string {
  return `${s.provider}:${s.window}`;
}

/** Splits mixed readings into bars, keeping each bar's readings in the given order. */
export function groupByBar(samples: readonly BarSample[]): Map<string, BarSample[]> {
  const out = new Map<string, BarSample[]>();
  for (const s of samples) {
    const key = barKey(s);
    const list = out.get(key);
    if (list) list.push(s);
    else out.set(key, [s]);
  }
  return out;
}

export interface TrailOptions {
  /** `resets_at` moving later by more than this is a rollover; moving less is jitter. Default 2 min. */
  resetToleranceMs: number;
  /**
   * A drop of at least this many points below the high-water mark counts as a rollover when the reset moved
   * later (by any amount) or, with no reset known, when the next reading confirms it. Otherwise it is stale.
   * Default 10.
   */
  rolloverDropPct: number;
  /** A stretch longer than this in which the bar barely moves is idle. */
  idleGapMs: number;
  /** "Barely moves": by less than this many points from the stretch's first reading. */
  idleMovePct: number;
  /** How much active time an idle stretch keeps. */
  idleKeepMs: number;
}

/**
 * Defaults by window length. Five-hour (and unknown) windows: idle after 10 min with under 0.5 points of
 * movement. Weekly windows move ~20× slower, so a quiet half hour is still work: idle after 30 min with under
 * 0.2 points of movement.
 */
export function trailDefaults(windowMs: number | null): TrailOptions {
  const long = windowMs !== null && windowMs > 24 * HOUR;
  return {
    resetToleranceMs: 2 * MINUTE,
    rolloverDropPct: 10,
    idleGapMs: long ? 30 * MINUTE : 10 * MINUTE,
    idleMovePct: long ? 0.2 : 0.5,
    idleKeepMs: MINUTE,
  };
}

export interface TrailPoint {
  /** Wall-clock time of the reading, epoch ms. */
  atMs: number;
  /** Active time since the trail's first reading, ms (see the module note). */
  activeMs: number;
  /** The bar after the high-water mark: never lower than an earlier point of the trail. */
  usedPct: number;
  source: string;
}

export interface Trail {
  provider: string;
  window: string;
  /** The window instance's reset (the latest fresh reading's), or null when no reading said. */
  resetsAtMs: number | null;
  /** Readings accepted into the trail, in time order, non-decreasing in usedPct. */
  points: TrailPoint[];
  /** Readings that were left out: below the high-water mark, or belonging to an older window instance. */
  stale: number;
  /** The window's length, from the readings or the window name. */
  windowMs: number | null;
}

function sortByTime(samples: readonly BarSample[]): BarSample[] {
  let sorted = true;
  for (let i = 1; i < samples.length && sorted; i++) sorted = samples[i - 1]!.observedAtMs <= samples[i]!.observedAtMs;
  if (sorted) return [...samples];
  return samples
    .map((s, i) => ({ s, i }))
    .sort((a, b) => a.s.observedAtMs - b.s.observedAtMs || a.i - b.i)
    .map((x) => x.s);
}

/**
 * Splits one bar's readings into trails at rollovers and applies the high-water mark within each.
 *
 * Rules, for each reading in time order against the current trail (reset R, high-water mark H):
 * 1. Its reset is later than R by more than the tolerance → rollover: a new trail starts with it.
 * 2. Its reset is earlier than R by more than the tolerance, or it was taken after R (+ tolerance) with the
 *    same reset → a reading of an older window: stale.
 * 3. It was taken after R (+ tolerance) and its reset is unknown → the window is over: a new trail.
 * 4. Its reset is later than R (within the tolerance) and it is ≥ `rolloverDropPct` below H → rollover.
 * 5. No reset to compare with, ≥ `rolloverDropPct` below H, and the next reading is as low → rollover;
 *    a lone low reading is stale.
 * 6. Otherwise: below H → stale; else it joins the trail (and a known reset is adopted).
 *
 * All samples are taken to be of one bar (see {@link groupByBar}).
 */
export function splitTrails(samples: readonly BarSample[], opts?: Partial<TrailOptions>): Trail[] {
  const b = new TrailBuilder(opts);
  for (const s of sortByTime(samples)) b.push(s);
  return b.trails;
}

/**
 * The incremental form of {@link splitTrails}: push readings in time order, read the trails at any point. Each
 * push costs about the length of the current quiet stretch, so a replay stays linear.
 */
export class TrailBuilder {
  readonly trails: Trail[] = [];
  private o: TrailOptions | null = null;
  private cur: Trail | null = null;
  private hwm = -Infinity;
  /** A lone low reading without a reset to judge it by (rule 5): a rollover if the next reading is as low. */
  private pending: BarSample | null = null;
  /** Wall gaps before each point of the current trail, and the start of its open quiet stretch. */
  private gaps: number[] = [];
  private open = 0;
  private lastAtMs = -Infinity;

  constructor(private readonly opts?: Partial<TrailOptions>) {}

  /** The trail the last reading fell in. */
  current(): Trail | null {
    return this.cur;
  }

  /** The time of the last reading pushed. */
  get lastObservedAtMs(): number {
    return this.lastAtMs;
  }

  push(s: BarSample): void {
    if (s.observedAtMs < this.lastAtMs) throw new Error('TrailBuilder: readings must come in time order');
    this.lastAtMs = s.observedAtMs;
    const o = (this.o ??= { ...trailDefaults(s.windowMs ?? windowLengthMs(s.window)), ...this.opts });
    const t = this.cur;
    if (t === null) return this.start(s);
    const R = t.resetsAtMs;
    const pending = this.pending;
    this.pending = null;
    if (pending && s.usedPct <= this.hwm - o.rolloverDropPct && (s.resetsAtMs === null || R === null || s.resetsAtMs - R > o.resetToleranceMs)) {
      t.stale--;
      this.start(pending);
      return this.push2(s, o);
    }
    this.push2(s, o);
  }

  private push2(s: BarSample, o: TrailOptions): void {
    const t = this.cur!;
    const R = t.resetsAtMs;
    const dropped = s.usedPct <= this.hwm - o.rolloverDropPct;
    if (R !== null && s.resetsAtMs !== null) {
      if (s.resetsAtMs - R > o.resetToleranceMs) this.start(s);
      else if (R - s.resetsAtMs > o.resetToleranceMs || s.observedAtMs > R + o.resetToleranceMs) t.stale++;
      else if (s.resetsAtMs > R && dropped) this.start(s);
      else if (s.usedPct < this.hwm) t.stale++;
      else this.accept(s);
      return;
    }
    if (R !== null && s.observedAtMs > R + o.resetToleranceMs) return this.start(s);
    if (dropped) {
      t.stale++;
      this.pending = s;
      return;
    }
    if (s.usedPct < this.hwm) t.stale++;
    else this.accept(s);
  }

  private start(s: BarSample): void {
    const windowMs = s.windowMs ?? windowLengthMs(s.window);
    this.cur = { provider: s.provider, window: s.window, resetsAtMs: s.resetsAtMs, points: [], stale: 0, windowMs };
    this.trails.push(this.cur);
    this.hwm = -Infinity;
    this.gaps = [];
    this.open = 0;
    this.accept(s);
  }

  private accept(s: BarSample): void {
    const t = this.cur!;
    if (s.resetsAtMs !== null) t.resetsAtMs = s.resetsAtMs;
    this.hwm = Math.max(this.hwm, s.usedPct);
    const prev = t.points[t.points.length - 1];
    this.gaps.push(prev ? s.observedAtMs - prev.atMs : 0);
    t.points.push({ atMs: s.observedAtMs, activeMs: prev?.activeMs ?? 0, usedPct: this.hwm, source: s.source });
    this.open = squeeze(t.points, this.gaps, this.open, this.o!);
  }
}

/**
 * Recomputes `activeMs` from the quiet stretch starting at `from` to the end (see the module note): each maximal
 * stretch in which the bar moves by less than `idleMovePct` from its first point and that lasts longer than
 * `idleGapMs` keeps `idleKeepMs` of active time, its gaps scaled alike. Returns where the last (open) stretch
 * starts, the point to restart from when more readings come.
 */
function squeeze(points: TrailPoint[], gaps: readonly number[], from: number, o: Pick<TrailOptions, 'idleGapMs' | 'idleMovePct' | 'idleKeepMs'>): number {
  const n = points.length;
  const active = gaps.slice(from);
  let s = from;
  let open = from;
  while (s < n - 1) {
    open = s;
    let e = s;
    while (e + 1 < n && points[e + 1]!.usedPct - points[s]!.usedPct < o.idleMovePct) e++;
    const length = points[e]!.atMs - points[s]!.atMs;
    if (length > o.idleGapMs) {
      const scale = o.idleKeepMs / length;
      for (let i = s + 1; i <= e; i++) active[i - from] = gaps[i]! * scale;
    }
    s = e > s ? e : s + 1;
  }
  let acc = from === 0 ? 0 : points[from]!.activeMs - active[0]!;
  for (let i = from; i < n; i++) {
    acc += active[i - from]!;
    points[i]!.activeMs = acc;
  }
  return open;
}

/** Fills in `activeMs` for points in time order (see the module note). */
export function assignActiveTime(points: TrailPoint[], o: Pick<TrailOptions, 'idleGapMs' | 'idleMovePct' | 'idleKeepMs'>): void {
  const gaps = points.map((p, i) => (i === 0 ? 0 : p.atMs - points[i - 1]!.atMs));
  squeeze(points, gaps, 0, o);
}

/**
 * Active time at `nowMs` on a trail: the last point's, plus the time since it, squeezed like an idle stretch
 * when the bar has been quiet longer than `idleGapMs` (no reading since is taken as no movement since).
 */
export function activeAt(trail: Trail, nowMs: number, o: Pick<TrailOptions, 'idleGapMs' | 'idleMovePct' | 'idleKeepMs'>): number {
  const pts = trail.points;
  const last = pts[pts.length - 1];
  if (!last) return 0;
  const since = Math.max(0, nowMs - last.atMs);
  if (since === 0) return last.activeMs;
  // The quiet stretch that ends at now started at the first point within idleMovePct of the last value.
  let s = pts.length - 1;
  while (s > 0 && last.usedPct - pts[s - 1]!.usedPct < o.idleMovePct) s--;
  const quietWall = nowMs - pts[s]!.atMs;
  if (quietWall <= o.idleGapMs) return last.activeMs + since;
  // The whole quiet stretch, up to now, is squeezed to idleKeepMs (as it would be with a reading taken now).
  return pts[s]!.activeMs + o.idleKeepMs;
}

/** The trail that `nowMs` falls in: the last trail with a reading at or before `nowMs`. */
export function currentTrail(samples: readonly BarSample[], nowMs: number, opts?: Partial<TrailOptions>): Trail | null {
  const upTo = samples.filter((s) => s.observedAtMs <= nowMs);
  const trails = splitTrails(upTo, opts);
  return trails[trails.length - 1] ?? null;
}
