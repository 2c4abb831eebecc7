import { formatUsd, formatUsdShort, oneLine } from '../format.js';
import { addDays, localDateTime, zonedTimeToEpoch } from '../zoned-time.js';
import { isCappedLine } from './night-gate.js';

/**
 * The morning digest (issue 15 § 7): the last night's overnight jobs sorted into what landed, what waits and what hit
 * a wall, under one header — `08:00 digest → #eng · 6 delivered · 1 waiting · 0 at a wall` — and one line per job
 * with its link. The same words go to Slack and to `sleds digest`. Pure: which jobs and which night are the caller's;
 * `lastNight` and `digestTime` say which night a digest is of and when it is due.
 */

export interface DigestJob {
  job: string;
  title: string;
  /** The run's state (core/lifecycle/run.ts). */
  state: string;
  prNumber: number | null;
  prUrl: string | null;
  receiptLine: string | null;
  /** The open question it waits on (WAITING_FOR_INPUT). */
  question: string | null;
  /** Why a queued one has not started (the engine's gate, as `sleds queue` says it). */
  note: string | null;
  /** Why it needs a person (RECOVERY_REQUIRED), why it ended (FAILED). */
  problem: string | null;
  /** Its last error: the cap's line, a limit's. */
  lastError: string | null;
  capMicros: number | null;
  spentMicros: number;
}

export type DigestGroup = 'delivered' | 'waiting' | 'atAWall' | 'atWork';

export interface DigestEntry {
  job: string;
  title: string;
  state: string;
  /** The job's line, without its group. */
  line: string;
  /** Its pull request, when it has one. */
  link: string | null;
}

export interface Digest {
  header: string;
  delivered: DigestEntry[];
  waiting: DigestEntry[];
  atAWall: DigestEntry[];
  /** Still at work when the digest was made (not counted in the header). */
  atWork: DigestEntry[];
  /** The header and every job's line, as posted. */
  text: string;
}

const WORKING = new Set(['CLAIMING', 'PREPARING', 'RUNNING', 'VERIFYING']);

const words = (s: string | null, max = 160): string | null => (s && s.trim().length > 0 ? oneLine(s, max) : null);

function pr(j: DigestJob): string | null {
  if (j.prUrl === null) return null;
  return j.prNumber === null ? j.prUrl : `PR #${j.prNumber} ${j.prUrl}`;
}

/** Which group a job is in and its line; null: not for the digest (cancelled). */
export function digestEntry(j: DigestJob): { group: DigestGroup; line: string } | null {
  const join = (...parts: Array<string | null>) => parts.filter((p): p is string => p !== null).join(' · ');
  switch (j.state) {
    case 'AWAITING_MERGE':
    case 'COMPLETED':
      if (j.prUrl !== null) return { group: 'delivered', line: join(j.state === 'COMPLETED' ? 'merged' : null, pr(j), words(j.receiptLine)) };
      return { group: 'atAWall', line: join('verified, but no pull request was opened', words(j.lastError)) };
    case 'WAITING_FOR_INPUT':
      return { group: 'waiting', line: join(`asks: ${words(j.question) ?? 'a question — sleds needs shows it'}`, pr(j)) };
    case 'QUEUED':
      return { group: 'waiting', line: join('queued for the next night', words(j.note)) };
    case 'WAITING_FOR_LIMIT':
      if (isCappedLine(j.lastError)) return { group: 'atAWall', line: `stopped at its cap: ${formatUsd(j.spentMicros)} of ${j.capMicros === null ? '?' : formatUsdShort(j.capMicros)} — raise cap: in its route file to let it go on` };
      return { group: 'atAWall', line: `at a limit${words(j.lastError) ? `: ${words(j.lastError)}` : ''}` };
    case 'RECOVERY_REQUIRED':
      return { group: 'atAWall', line: `needs a person: ${words(j.problem) ?? 'its run was lost'}` };
    case 'FAILED':
      return { group: 'atAWall', line: `failed: ${words(j.problem) ?? 'no reason kept'}` };
    case 'CANCELLED':
      return null;
    default:
      return WORKING.has(j.state) ? { group: 'atWork', line: `still at work (${j.state})` } : null;
  }
}

const GROUP_WORD: Record<DigestGroup, string> = { delivered: 'delivered', waiting: 'waiting', atAWall: 'at a wall', atWork: 'at work' };

/** The digest of these jobs, headed with its time of day (`08:00`) and its channel (none: `sleds digest` alone). */
export function composeDigest(jobs: readonly DigestJob[], at: string, channel: string | null): Digest {
  const groups: Record<DigestGroup, DigestEntry[]> = { delivered: [], waiting: [], atAWall: [], atWork: [] };
  for (const j of jobs) {
    const e = digestEntry(j);
    if (e) groups[e.group].push({ job: j.job, title: oneLine(j.title, 80), state: j.state, line: e.line, link: j.prUrl });
  }
  const header = `${at} digest${channel ? ` → ${channel}` : ''} · ${groups.delivered.length} delivered · ${groups.waiting.length} waiting · ${groups.atAWall.length} at a wall`;
  const order: DigestGroup[] = ['delivered', 'waiting', 'atAWall', 'atWork'];
  // A node with no title of its own is titled by its id: said once.
  const named = (e: DigestEntry) => (e.title && e.title !== e.job.slice(e.job.lastIndexOf('/') + 1) ? ` · ${e.title}` : '');
  const lines = order.flatMap((g) => groups[g].map((e) => `${GROUP_WORD[g]} · ${e.job}${named(e)}${e.line ? ` · ${e.line}` : ''}`));
  return { header, ...groups, text: [header, ...lines].join('\n') };
}

export interface Span {
  startMs: number;
  endMs: number;
}

/**
 * The night a digest at `now` is of: the window in progress, else the one that ended most recently. `windowAt(ms)`
 * is the policy's window in progress at `ms`, else the next one (core/policy/queries.ts nextOvernightWindow).
 */
export function lastNight(windowAt: (ms: number) => Span | null, now: number): Span | null {
  const current = windowAt(now);
  if (!current) return null;
  if (current.startMs <= now) return current;
  // The window that ends after this time yesterday and not after now: the one that ended last (any window is < 24 h).
  const before = windowAt(now - 86_400_000);
  return before && before.endMs <= now ? before : null;
}

/** When a night's digest is due: the first `minute` of the day (in `timeZone`) at or after the night's end. */
export function digestTime(night: Span, minute: number, timeZone: string): number {
  const end = localDateTime(night.endMs, timeZone);
  const same = zonedTimeToEpoch(end.year, end.month, end.day, minute, timeZone);
  if (same >= night.endMs) return same;
  const next = addDays(end.year, end.month, end.day, 1);
  return zonedTimeToEpoch(next.year, next.month, next.day, minute, timeZone);
}
