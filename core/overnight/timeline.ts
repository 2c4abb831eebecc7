import { formatUsd, formatUsdShort, oneLine } from '../format.js';
import { localDateTime } from '../zoned-time.js';
import { isCappedLine } from './night-gate.js';

/**
 * An overnight job's night in words (issue 15 § 7): its run's moves (lifecycle_events, kind 'run'), its questions and
 * decisions and its receipt, told as one line each — `23:02 start · job night-4f2a · batch tier · cap $12`,
 * `00:41 question: which export format? → decided (reversible)`, `03:40 stopped at its cap: $12.04 of $12`,
 * `05:12 delivered · PR #41 · 340/340 tests · $6 actual`. The bookkeeping moves a person does not need (the lease
 * held, the worktree ready) are left out. Pure: the time of day is formatted by the caller, in the window's zone.
 */

export interface TimelineEvent {
  at: number;
  eventType: string;
  fromState: string | null;
  toState: string;
  payload: Record<string, unknown>;
}

export interface TimelineQuestion {
  id: string;
  question: string;
  askedAt: number;
  state: 'open' | 'answered';
  answer: string | null;
  answeredBy: string | null;
  answeredAt: number | null;
}

/** A decision taken on the job's node; `rung` and `reason` when the ladder recorded them (issue 15 § 5). */
export interface TimelineDecision {
  question: string;
  answer: string;
  answeredBy: string;
  answeredAt: number;
  source: string;
  rung?: string | null;
  reason?: string | null;
}

export interface TimelineInput {
  /** `night-4f2a`, `eng-503/mailer`. */
  job: string;
  events: readonly TimelineEvent[];
  questions: readonly TimelineQuestion[];
  decisions: readonly TimelineDecision[];
  capMicros: number | null;
  spentMicros: number;
  /** The node's last error (the cap's line, when the cap stopped it). */
  lastError: string | null;
  prNumber: number | null;
  /** The node's receipt in one line (core/routes/node-receipt.ts receiptLineOf), once it landed. */
  receiptLine: string | null;
  /** `23:02`, in the window's zone. */
  time(ms: number): string;
}

export interface TimelineLine {
  at: number;
  text: string;
}

const said = (v: unknown): string | null => (typeof v === 'string' && v.trim().length > 0 ? oneLine(v, 160) : null);

/** How a decision was reached: the ladder's rung and reason when kept, else who answered and from where. */
function howDecided(d: TimelineDecision): string {
  const rung = said(d.rung);
  const reason = said(d.reason);
  if (rung) return reason ? `${rung}: ${reason}` : rung;
  return `${d.answeredBy}${d.source ? ` via ${d.source}` : ''}`;
}

function questionLine(q: TimelineQuestion, decisions: readonly TimelineDecision[]): string {
  const asked = `question: ${oneLine(q.question, 120)}`;
  if (q.state === 'open') return `${asked} → no reply yet · parked`;
  const d = decisions.find((x) => x.question === q.question && x.answeredAt === q.answeredAt);
  const answer = oneLine(q.answer ?? '', 80);
  return `${asked} → ${answer} (${d ? howDecided(d) : (q.answeredBy ?? 'answered')})`;
}

/** The line of one move, or null for a move a person does not need to read. */
function moveLine(e: TimelineEvent, i: TimelineInput, q: ReadonlyMap<string, TimelineQuestion>, lastLimit: boolean, starts: number): string | null {
  const reason = said(e.payload.reason);
  switch (e.eventType) {
    case 'created':
      return `queued · job ${i.job}`;
    case 'claim': {
      const cap = i.capMicros === null ? '' : ` · cap ${formatUsdShort(i.capMicros)}`;
      return `${starts > 1 ? 'started again' : 'start'} · job ${i.job} · batch tier${cap}`;
    }
    case 'claim-lost':
      return 'another engine took it · back in the queue';
    case 'turn-completed':
      return 'turn done · checks running';
    case 'verification-failed':
      return 'checks failed · back at work';
    case 'verified': {
      const checks = said(e.payload.checks);
      const parts = [i.prNumber === null ? 'verified · its PR opening' : `delivered · PR #${i.prNumber}`, checks, i.receiptLine].filter((p): p is string => p !== null);
      return parts.join(' · ');
    }
    case 'merged':
      return i.prNumber === null ? 'merged' : `merged · PR #${i.prNumber}`;
    case 'sent-back':
      return `sent back: ${said(e.payload.why) ?? 'its PR'}`;
    case 'rate-limited': {
      // The cap stops a job as a limit does (it waits for the next window); only its last stop is known to be the cap's.
      if (lastLimit && isCappedLine(i.lastError)) return `stopped at its cap: ${formatUsd(i.spentMicros)} of ${i.capMicros === null ? '?' : formatUsdShort(i.capMicros)}`;
      const resets = typeof e.payload.resetsAtMs === 'number' ? ` · resumes at ${i.time(e.payload.resetsAtMs)}` : '';
      return `at a limit${resets}`;
    }
    case 'limit-reset':
      return 'goes on';
    case 'question': {
      const asked = typeof e.payload.questionId === 'string' ? q.get(e.payload.questionId) : undefined;
      return asked ? null : 'question parked'; // a known question has its own line, at its time
    }
    case 'answered':
      return null; // told on the question's line
    case 'lost':
      return `needs a person${reason ? `: ${reason}` : ''}`;
    case 'recovered':
      return 'made safe · queued again';
    case 'fail':
      return `failed${reason ? `: ${reason}` : ''}`;
    case 'cancel':
      return `cancelled${reason ? ` · ${reason}` : ''}`;
    case 'ladder':
      // A rung of the ladder (a question resolved, decided, escalated, parked), written as its line.
      return said(e.payload.line);
    case 'slept':
      return typeof e.payload.sinceMs === 'number' ? `the machine slept from ${i.time(e.payload.sinceMs)} · not runtime` : 'the machine slept · not runtime';
    default:
      return null; // claimed, prepared: bookkeeping
  }
}

/** The job's timeline, oldest first. */
export function jobTimeline(i: TimelineInput): TimelineLine[] {
  const byId = new Map(i.questions.map((q) => [q.id, q]));
  const lastLimitAt = i.events.reduce((last, e, n) => (e.eventType === 'rate-limited' ? n : last), -1);
  const lines: TimelineLine[] = [];
  let starts = 0;
  i.events.forEach((e, n) => {
    if (e.eventType === 'claim') starts++;
    const text = moveLine(e, i, byId, n === lastLimitAt, starts);
    if (text !== null) lines.push({ at: e.at, text });
  });
  for (const q of i.questions) lines.push({ at: q.askedAt, text: questionLine(q, i.decisions) });
  // Decisions no parked question carried (the ladder's "decide and log", an answer from resolve-from-context).
  const asked = new Set(i.questions.filter((q) => q.state === 'answered').map((q) => `${q.question}\u0000${q.answeredAt}`));
  for (const d of i.decisions) {
    if (asked.has(`${d.question}\u0000${d.answeredAt}`)) continue;
    lines.push({ at: d.answeredAt, text: `question: ${oneLine(d.question, 120)} → ${oneLine(d.answer, 80)} (${howDecided(d)})` });
  }
  // Stable: moves before the questions asked at the same millisecond.
  return lines.map((l, n) => ({ l, n })).sort((a, b) => a.l.at - b.l.at || a.n - b.n).map(({ l }) => l);
}

/** The timeline as the lines `sleds queue` prints: `23:02 start · job …`. */
export function timelineText(i: TimelineInput): string[] {
  return jobTimeline(i).map((l) => `${i.time(l.at)} ${l.text}`);
}

/** `23:02`: the time of day on a 24-hour clock in `timeZone` (the window's), as the timeline tells it. */
export function clock24(ms: number, timeZone: string): string {
  const t = localDateTime(ms, timeZone);
  return `${String(t.hour).padStart(2, '0')}:${String(t.minute).padStart(2, '0')}`;
}
