import { addDays, localDateTime } from '../zoned-time.js';

/**
 * `sleds report daily|weekly|monthly|session` (issue 16 § 3): the reports a ccusage user expects, from the usage
 * musher recorded. Tokens are summed as recorded (the same dedup, `message.id` + `requestId`); dollars are the
 * effective-dated price table's (recorded with each reply); a reply whose model has no price is counted and its model
 * named, never $0. Beside the seat's API-equivalent cost sits the platform-key rail: what the key really paid through
 * musher's gateway. Pure: the rows, the zone and the range come in.
 */

export const REPORT_PERIODS = ['daily', 'weekly', 'monthly', 'session'] as const;
export type ReportPeriod = (typeof REPORT_PERIODS)[number];
export const REPORT_DIMENSIONS = ['model', 'project', 'seat'] as const;
export type ReportDimension = (typeof REPORT_DIMENSIONS)[number];
export const WEEK_DAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;
export type WeekDay = (typeof WEEK_DAYS)[number];

/** One recorded reply (a usage record). */
export interface UsageRow {
  ts: number;
  sessionId: string;
  model: string;
  /** The session's folder; null when it is not known. */
  project: string | null;
  seat: string;
  inputTokens: number;
  outputTokens: number;
  cacheCreationTokens: number;
  cacheReadTokens: number;
  /** Null: the model has no price at that time. */
  costMicros: number | null;
}

/** One reply paid on the platform key through the gateway. */
export interface KeyRow {
  ts: number;
  sessionId: string | null;
  model: string;
  project: string | null;
  seat: string;
  costMicros: number | null;
}

export interface ReportOptions {
  period: ReportPeriod;
  /** The breakdown inside each row (ccusage's modelBreakdowns is `model`). */
  by: ReportDimension;
  timeZone: string;
  /** Local dates, inclusive (`2026-11-01`); null: unbounded. */
  since: string | null;
  until: string | null;
  startOfWeek: WeekDay;
}

export interface Totals {
  inputTokens: number;
  outputTokens: number;
  cacheCreationTokens: number;
  cacheReadTokens: number;
  totalTokens: number;
  /** API-equivalent dollars of the priced replies (micros). */
  costMicros: number;
  /** Replies whose model had no price (not counted in costMicros, never as $0). */
  unpricedReplies: number;
  unpricedModels: string[];
  /** What the platform key paid through the gateway (micros). */
  keyCostMicros: number;
  replies: number;
}

export interface Breakdown extends Totals {
  name: string;
}

export interface ReportRow extends Totals {
  /** The day (`2026-11-30`), the week's first day, the month (`2026-11`), or the session id. */
  period: string;
  /** Session reports: the session's folder and its last reply. */
  project?: string | null;
  lastActivity?: number;
  modelsUsed: string[];
  breakdown: Breakdown[];
}

export interface Report {
  period: ReportPeriod;
  by: ReportDimension;
  timeZone: string;
  rows: ReportRow[];
  totals: Totals;
}

const pad = (n: number) => String(n).padStart(2, '0');
const isoDate = (d: { year: number; month: number; day: number }) => `${d.year}-${pad(d.month)}-${pad(d.day)}`;

/** `20261130` or `2026-11-30` → `2026-11-30`; null when it is neither (the CLI says so). */
export function parseReportDate(text: string): string | null {
  const m = /^(\d{4})-?(\d{2})-?(\d{2})$/.exec(text.trim());
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const probe = new Date(Date.UTC(y, mo - 1, d));
  if (probe.getUTCFullYear() !== y || probe.getUTCMonth() !== mo - 1 || probe.getUTCDate() !== d) return null;
  return `${m[1]}-${m[2]}-${m[3]}`;
}

function periodOf(ts: number, sessionId: string | null, o: ReportOptions): { day: string; key: string | null } {
  const local = localDateTime(ts, o.timeZone);
  const day = isoDate(local);
  switch (o.period) {
    case 'daily':
      return { day, key: day };
    case 'monthly':
      return { day, key: `${local.year}-${pad(local.month)}` };
    case 'weekly': {
      const weekday = new Date(Date.UTC(local.year, local.month - 1, local.day)).getUTCDay();
      const back = (weekday - WEEK_DAYS.indexOf(o.startOfWeek) + 7) % 7;
      return { day, key: isoDate(addDays(local.year, local.month, local.day, -back)) };
    }
    case 'session':
      return { day, key: sessionId };
  }
}

function emptyTotals(): Totals {
  return { inputTokens: 0, outputTokens: 0, cacheCreationTokens: 0, cacheReadTokens: 0, totalTokens: 0, costMicros: 0, unpricedReplies: 0, unpricedModels: [], keyCostMicros: 0, replies: 0 };
}

function addUsage(t: Totals, r: UsageRow): void {
  t.inputTokens += r.inputTokens;
  t.outputTokens += r.outputTokens;
  t.cacheCreationTokens += r.cacheCreationTokens;
  t.cacheReadTokens += r.cacheReadTokens;
  t.totalTokens += r.inputTokens + r.outputTokens + r.cacheCreationTokens + r.cacheReadTokens;
  t.replies += 1;
  if (r.costMicros === null) {
    t.unpricedReplies += 1;
    if (!t.unpricedModels.includes(r.model)) t.unpricedModels.push(r.model);
  } else t.costMicros += r.costMicros;
}

function dimensionOf(r: { model: string; project: string | null; seat: string }, by: ReportDimension): string {
  return by === 'model' ? r.model : by === 'project' ? (r.project ?? '(unknown folder)') : r.seat;
}

export function buildReport(usage: readonly UsageRow[], key: readonly KeyRow[], o: ReportOptions): Report {
  const rows = new Map<string, ReportRow & { parts: Map<string, Breakdown> }>();
  const totals = emptyTotals();
  const inRange = (day: string) => (o.since === null || day >= o.since) && (o.until === null || day <= o.until);
  const rowFor = (k: string) => {
    let row = rows.get(k);
    if (!row) {
      row = { period: k, ...emptyTotals(), modelsUsed: [], breakdown: [], parts: new Map() };
      rows.set(k, row);
    }
    return row;
  };
  const partFor = (row: ReportRow & { parts: Map<string, Breakdown> }, name: string) => {
    let part = row.parts.get(name);
    if (!part) {
      part = { name, ...emptyTotals() };
      row.parts.set(name, part);
    }
    return part;
  };
  for (const r of usage) {
    const p = periodOf(r.ts, r.sessionId, o);
    if (!inRange(p.day) || p.key === null) continue;
    const row = rowFor(p.key);
    addUsage(row, r);
    addUsage(totals, r);
    addUsage(partFor(row, dimensionOf(r, o.by)), r);
    if (!row.modelsUsed.includes(r.model)) row.modelsUsed.push(r.model);
    if (o.period === 'session') {
      row.project ??= r.project;
      row.lastActivity = Math.max(row.lastActivity ?? 0, r.ts);
    }
  }
  for (const k of key) {
    const p = periodOf(k.ts, k.sessionId, o);
    if (!inRange(p.day) || p.key === null) continue;
    const row = rowFor(p.key);
    const cost = k.costMicros ?? 0;
    row.keyCostMicros += cost;
    totals.keyCostMicros += cost;
    partFor(row, dimensionOf(k, o.by)).keyCostMicros += cost;
    if (o.period === 'session') {
      row.project ??= k.project;
      row.lastActivity = Math.max(row.lastActivity ?? 0, k.ts);
    }
  }
  const ordered = [...rows.values()].sort((a, b) => (o.period === 'session' ? (a.lastActivity ?? 0) - (b.lastActivity ?? 0) : a.period.localeCompare(b.period)));
  return {
    period: o.period,
    by: o.by,
    timeZone: o.timeZone,
    rows: ordered.map(({ parts, ...row }) => ({
      ...row,
      modelsUsed: [...row.modelsUsed].sort(),
      unpricedModels: [...row.unpricedModels].sort(),
      breakdown: [...parts.values()].map((b) => ({ ...b, unpricedModels: [...b.unpricedModels].sort() })).sort((a, b) => b.costMicros + b.keyCostMicros - (a.costMicros + a.keyCostMicros) || a.name.localeCompare(b.name)),
    })),
    totals: { ...totals, unpricedModels: [...totals.unpricedModels].sort() },
  };
}
