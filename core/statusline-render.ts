import { formatAge, formatClock, formatReset, formatUsd } from './format.js';

/**
 * The statusline, rendered from a view both musher and the degraded local path can build.
 * Pure and import-light: the statusline client loads it on every render.
 */

export const AMBER = '\x1b[38;5;214m';
export const RED = '\x1b[38;5;196m';
export const RESET = '\x1b[0m';

/** Any bar at or above this is amber, unless the workspace policy's `amber_at` says otherwise. */
export const AMBER_AT_PCT = 90;
/** A bar's age is shown once its data is older than this. */
export const STALE_AFTER_MS = 10 * 60_000;

export interface BarView {
  /** "5h", "wk", "wk opus", … */
  label: string;
  usedPct: number;
  resetsAtMs: number | null;
  /** How old the reading is; null when it came with this very render. */
  ageMs: number | null;
  /** Set when the figure is musher's, not this render's (they differ): shown with its source and age. */
  source?: string | null;
}

export interface MoneyView {
  costMicros: number;
  /** Records whose model has no price: shown as such, never as $0. */
  unpricedRecords: number;
}

export interface StatuslineView {
  modelName: string | null;
  /** null: the seat shows no plan bars (an API-key session, or none reported yet). */
  bars: BarView[] | null;
  noBarsReason: 'api-key' | 'not-yet';
  session: MoneyView | null;
  today: MoneyView | null;
  musherAway: boolean;
  /** The binding wall, when it is forecast before its bar resets; `soon` (under 30 minutes) turns the line amber. */
  wall?: { atMs: number; soon: boolean } | null;
  nowMs: number;
  timeZone?: string;
  color: boolean;
  /** At a wall: the second line, `⛔ wall jd7k2m9qa41p · 1 key $38 left · 2 hold → 9:00am · …` (always red). */
  wallLine?: string | null;
  /** At amber: what the wall would offer, e.g. `at 100%: key $38 left · hold → 9:00am`. */
  exitsHint?: string | null;
  /** The workspace policy's amber threshold; default AMBER_AT_PCT. */
  amberAtPct?: number;
}

export type Severity = 'ok' | 'amber' | 'red';

export function severityOf(bars: BarView[] | null, wallSoon = false, amberAtPct = AMBER_AT_PCT): Severity {
  const top = bars ? Math.max(...bars.map((b) => b.usedPct), 0) : 0;
  if (top >= 100) return 'red';
  if (top >= amberAtPct || wallSoon) return 'amber';
  return 'ok';
}

function formatPct(pct: number): string {
  return `${Number.isInteger(pct) ? pct : pct.toFixed(1)}%`;
}

function renderBar(bar: BarView, nowMs: number, timeZone?: string): string {
  let text = `${bar.label} ${formatPct(bar.usedPct)}`;
  if (bar.source) text += ` (${bar.source.replace(/-/g, ' ')}, ${formatAge(bar.ageMs ?? 0)} ago)`;
  else if (bar.ageMs !== null && bar.ageMs > STALE_AFTER_MS) text += ` (${formatAge(bar.ageMs)} old)`;
  if (bar.resetsAtMs !== null) text += ` ↻${formatReset(bar.resetsAtMs, nowMs, timeZone)}`;
  return text;
}

function renderMoney(money: MoneyView, label: string): string {
  if (money.unpricedRecords > 0 && money.costMicros === 0) return `unpriced ${label}`;
  const suffix = money.unpricedRecords > 0 ? ' + unpriced' : '';
  return `${formatUsd(money.costMicros)}${suffix} ${label}`;
}

export function renderStatusline(view: StatuslineView): string {
  const parts: string[] = [];
  if (view.modelName) parts.push(view.modelName);
  if (view.bars && view.bars.length > 0) {
    for (const bar of view.bars) parts.push(renderBar(bar, view.nowMs, view.timeZone));
    if (view.wall) parts.push(`→ wall ${formatClock(view.wall.atMs, view.timeZone)}`);
  } else {
    parts.push(view.noBarsReason === 'api-key' ? 'no plan bars (API key)' : 'no plan bars yet');
  }
  if (view.session) parts.push(renderMoney(view.session, 'session'));
  if (view.today) parts.push(renderMoney(view.today, 'today'));
  if (view.musherAway) parts.push('(musher away)');
  const severity = view.wallLine ? 'red' : severityOf(view.bars, view.wall?.soon ?? false, view.amberAtPct);
  if (severity === 'amber' && view.exitsHint) parts.push(view.exitsHint);
  const line = parts.join(' · ');
  const first = !view.color || severity === 'ok' ? line : `${severity === 'red' ? RED : AMBER}${line}${RESET}`;
  if (!view.wallLine) return first;
  return `${first}\n${view.color ? `${RED}${view.wallLine}${RESET}` : view.wallLine}`;
}

/** The short label of a plan window as Claude Code and the usage endpoint name them. */
export function windowLabel(window: string): string {
  switch (window) {
    case 'five_hour':
      return '5h';
    case 'seven_day':
      return 'wk';
    case 'seven_day_opus':
      return 'wk opus';
    case 'seven_day_sonnet':
      return 'wk sonnet';
    default:
      return window.replace(/_/g, ' ');
  }
}

/** Orders bars the way people read them: 5-hour first, then weekly, then the rest. */
export function windowOrder(window: string): number {
  return window === 'five_hour' ? 0 : window === 'seven_day' ? 1 : 2;
}
