import { formatAge, formatClock, formatMinorUnits as minor, formatReset, formatUsd } from './format.js';
import { STALE_AFTER_MS, windowLabel, windowOrder } from './statusline-render.js';
import { barName } from './forecast/forecast.js';

/** What `sleds status --json` prints and the /sled status card shows. */
export interface BarStatus {
  provider: string;
  /** Whose bar (core/account.ts). */
  account: string;
  accountLabel: string | null;
  window: string;
  label: string;
  usedPct: number;
  resetsAt: number | null;
  observedAt: number;
  ageMs: number;
  stale: boolean;
  source: string;
}

export interface ModelSpend {
  model: string;
  costMicros: number;
  unpricedRecords: number;
  records: number;
}

export interface SessionStatus {
  sessionId: string;
  harness: string;
  cwd: string | null;
  model: string | null;
  firstSeenAt: number;
  lastSeenAt: number;
  endedAt: number | null;
  costMicros: number;
  unpricedRecords: number;
  usageRecords: number;
  models: string[];
}

export interface WallStatus {
  source: string;
  sessionId: string;
  at: number;
  window: string | null;
  resetsAt: number | null;
  message: string;
}

export interface StatusSnapshot {
  now: number;
  musher: { pid: number; version: string; startedAt: number };
  bars: BarStatus[];
  today: { since: number; costMicros: number; unpricedRecords: number; byModel: ModelSpend[] };
  sessions: SessionStatus[];
  walls: WallStatus[];
  ingest: { files: number; bytesRead: number; pendingBytes: number; backfilling: boolean };
  /** Everything priced so far, all time. */
  totals: { usageRecords: number; costMicros: number; unpricedRecords: number; inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number };
  /** Hook events received, by event name. */
  hookEvents: Record<string, number>;
  /** One line on Claude's usage endpoint: polling, backing off, or why not. */
  usageEndpoint: string;
  /** The seat-credits rail: the latest reading per provider. */
  credits: Array<{ provider: string; observedAt: number; enabled: boolean | null; unlimited: boolean | null; currency: string | null; exponent: number; usedMinor: number | null; limitMinor: number | null; balanceMinor: number | null; utilizationPct: number | null }>;
  /** The platform-key rail today: what the team's API key spent, per seat and model (metered by the gateway). */
  platformKey: { todayMicros: number; unpricedRecords: number; bySeatModel: Array<{ seat: string; model: string; costMicros: number; unpricedRecords: number; records: number }> };
  /** The walls sessions hit: what was chosen, by whom, and what came of it (newest first). */
  wallBook: Array<{ wallId: string; sessionId: string; window: string | null; hitAt: number; resetsAt: number | null; state: string; choice: string | null; chosenBy: string | null; outcome: string | null; snapshotId: string | null }>;
  /** Hand-offs sent and received (newest first). */
  handoffs?: Array<{ id: string; direction: 'sent' | 'received'; peer: string; state: string; pickedUpBy: string | null; pickedUpAt: number | null; createdAt: number }>;
  /** The binding wall, when one is forecast before its bar resets. */
  nextWall: { name: string; provider: string; window: string; atMs: number; dollarsToWallMicros: number | null } | null;
}

export function barStatus(
  bar: { provider: string; account: string; accountLabel: string | null; window: string; usedPct: number; resetsAt: number | null; observedAt: number; source: string },
  nowMs: number,
): BarStatus {
  const ageMs = Math.max(0, nowMs - bar.observedAt);
  return { ...bar, label: windowLabel(bar.window), ageMs, stale: ageMs > STALE_AFTER_MS };
}

/** Bars whose window has already reset say nothing about now: leave them out. */
export function liveBars(bars: BarStatus[], nowMs: number): BarStatus[] {
  return bars
    .filter((b) => b.resetsAt === null || b.resetsAt > nowMs)
    .sort((a, b) => windowOrder(a.window) - windowOrder(b.window) || a.window.localeCompare(b.window));
}

function money(costMicros: number, unpriced: number): string {
  if (unpriced > 0 && costMicros === 0) return 'unpriced';
  return unpriced > 0 ? `${formatUsd(costMicros)} + ${unpriced} unpriced` : formatUsd(costMicros);
}

/** Bars grouped by account, in the order they come (musher sends its own accounts' first). */
export function byAccount(bars: BarStatus[]): Array<[string, BarStatus[]]> {
  const groups = new Map<string, { label: string; bars: BarStatus[] }>();
  for (const b of bars) {
    const key = b.account;
    const g = groups.get(key) ?? { label: b.accountLabel ?? b.account, bars: [] };
    g.bars.push(b);
    groups.set(key, g);
  }
  return [...groups.values()].map((g) => [g.label, g.bars]);
}

/** The short card `/sled status` answers with, in the prompt. */
export function renderStatusCard(s: StatusSnapshot, sessionId: string | null, timeZone?: string): string {
  const lines: string[] = ['sleds · seat status'];
  const bars = liveBars(s.bars, s.now);
  if (bars.length === 0) {
    // A subscriber whose bars have not been read yet is the common case: say where they will come from.
    lines.push(`Bars: not read yet — they come with the statusline of Claude Code's next reply, or the usage endpoint's poll (${s.usageEndpoint})`);
  }
  // Two accounts' bars are two seats' (a second config dir, another login): each under its own name, never mixed.
  const groups = byAccount(bars);
  let anyFull = false;
  for (const [label, group] of groups) {
    if (groups.length > 1) lines.push(`${label}:`);
    for (const b of group) {
      const reset = b.resetsAt !== null ? `resets ${formatReset(b.resetsAt, s.now, timeZone)}` : 'reset unknown';
      lines.push(`${groups.length > 1 ? '  ' : ''}${b.label.padEnd(9)} ${`${b.usedPct}%`.padStart(6)}  ${reset} · data ${formatAge(b.ageMs)} old${b.stale ? ' (stale)' : ''}`);
    }
    const full = group.filter((b) => b.usedPct >= 100).sort((a, b) => (b.resetsAt ?? Infinity) - (a.resetsAt ?? Infinity))[0];
    if (full) {
      anyFull = true;
      const until = full.resetsAt !== null ? `until it resets ${formatReset(full.resetsAt, s.now, timeZone)}` : 'until it resets (the reset is not known yet)';
      lines.push(`${groups.length > 1 ? '  ' : ''}→ ${barName(full.window)} wall now: the bar is full ${until}`);
    }
  }
  if (!anyFull && s.nextWall) {
    const more = s.nextWall.dollarsToWallMicros !== null ? ` · ${formatUsd(s.nextWall.dollarsToWallMicros)} more` : '';
    lines.push(`→ ${s.nextWall.name} wall at ${formatClock(s.nextWall.atMs, timeZone)}${more}`);
  } else if (!anyFull && bars.length > 0) lines.push('→ no wall forecast before the resets');
  for (const c of s.credits) lines.push(creditLine(c));
  if (s.platformKey.bySeatModel.length > 0) lines.push(`Platform key today: ${money(s.platformKey.todayMicros, s.platformKey.unpricedRecords)}`);
  const session = sessionId ? s.sessions.find((x) => x.sessionId === sessionId) : undefined;
  if (session) lines.push(`This session: ${money(session.costMicros, session.unpricedRecords)} (API-equivalent)`);
  lines.push(`Today: ${money(s.today.costMicros, s.today.unpricedRecords)} (API-equivalent)`);
  for (const m of s.today.byModel) lines.push(`  ${m.model.padEnd(24)} ${money(m.costMicros, m.unpricedRecords)}`);
  for (const w of s.wallBook.filter((x) => s.now - x.hitAt < 24 * 3_600_000).slice(0, 3)) {
    const what = w.choice ? `${w.choice} (${w.chosenBy ?? 'user'})${w.outcome ? ` — ${w.outcome}` : ''}` : 'waiting for a choice: /sled exits';
    lines.push(`Wall ${w.wallId} · ${w.window ? windowLabel(w.window) : 'limit'} · ${w.state} · ${what}`);
  }
  const wall = s.walls[0];
  if (wall && s.wallBook.length === 0 && s.now - wall.at < 24 * 3_600_000) {
    const resets = wall.resetsAt !== null ? `, resets ${formatReset(wall.resetsAt, s.now, timeZone)}` : '';
    lines.push(`Last wall: ${wall.window ? windowLabel(wall.window) : 'limit'} ${formatAge(s.now - wall.at)} ago${resets}`);
  }
  for (const h of (s.handoffs ?? []).filter((x) => s.now - x.createdAt < 7 * 86_400_000).slice(0, 3)) {
    const picked = h.pickedUpBy ? ` · picked up by ${h.pickedUpBy} ${formatClock(h.pickedUpAt ?? s.now, timeZone)}` : ` · ${h.state.replace('_', ' ')}`;
    lines.push(`Hand-off ${h.id} ${h.direction === 'sent' ? `to ${h.peer}` : `from ${h.peer}`}${picked}`);
  }
  if (s.ingest.backfilling) lines.push(`(still reading history: ${Math.round(s.ingest.pendingBytes / 1e6)} MB to go)`);
  return lines.join('\n');
}

/** "Extra usage: $10.00 of $50.00 used (20%)", "Codex credits: 12.34 left". */
export function creditLine(c: StatusSnapshot['credits'][number]): string {
  if (c.provider === 'openai') {
    if (c.unlimited) return 'Codex credits: unlimited';
    return c.balanceMinor !== null ? `Codex credits: ${minor(c.balanceMinor, c.exponent, c.currency)} left` : 'Codex credits: none';
  }
  if (c.enabled === false) return 'Extra usage: off';
  const used = c.usedMinor !== null ? minor(c.usedMinor, c.exponent, c.currency ?? 'USD') : '?';
  const limit = c.limitMinor !== null ? ` of ${minor(c.limitMinor, c.exponent, c.currency ?? 'USD')}` : '';
  const pct = c.utilizationPct !== null ? ` (${Math.round(c.utilizationPct)}%)` : '';
  return `Extra usage: ${used}${limit} used${pct}`;
}
