import { describe, expect, it } from 'vitest';
import { cappedLine } from '../../core/overnight/night-gate.js';
import { timelineText, type TimelineEvent, type TimelineInput } from '../../core/overnight/timeline.js';

const H = 3_600_000;
const M = 60_000;
/** 23:02 is 23 h 2 min after the day's start; the clock is UTC here. */
const at = (h: number, m: number) => h * H + m * M;
const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
const ev = (t: number, eventType: string, fromState: string | null, toState: string, payload: Record<string, unknown> = {}): TimelineEvent => ({ at: t, eventType, fromState, toState, payload });

const base: TimelineInput = {
  job: 'night-4f2a',
  events: [],
  questions: [],
  decisions: [],
  capMicros: 12_000_000,
  spentMicros: 0,
  lastError: null,
  prNumber: null,
  receiptLine: null,
  time: hhmm,
};
const started = [ev(at(21, 0), 'created', null, 'QUEUED'), ev(at(23, 2), 'claim', 'QUEUED', 'CLAIMING'), ev(at(23, 2), 'claimed', 'CLAIMING', 'PREPARING'), ev(at(23, 3), 'prepared', 'PREPARING', 'RUNNING')];

describe('jobTimeline: an overnight job’s night in words', () => {
  it.each<[string, Partial<TimelineInput>, string[]]>([
    ['queued, then started on the batch tier under its cap (the lease and the worktree are not news)', { events: started }, ['21:00 queued · job night-4f2a', '23:02 start · job night-4f2a · batch tier · cap $12']],
    [
      'delivered: its PR, its checks and its receipt',
      {
        events: [...started, ev(at(5, 0) + 24 * H, 'turn-completed', 'RUNNING', 'VERIFYING', { sessionId: 's' }), ev(at(5, 12) + 24 * H, 'verified', 'VERIFYING', 'AWAITING_MERGE', { checks: '340/340 tests' })],
        prNumber: 41,
        receiptLine: '$6 actual · est $9–24 · signed',
      },
      ['21:00 queued · job night-4f2a', '23:02 start · job night-4f2a · batch tier · cap $12', '05:00 turn done · checks running', '05:12 delivered · PR #41 · 340/340 tests · $6 actual · est $9–24 · signed'],
    ],
    [
      'a question answered: the answer and who gave it on the question’s own line, at its time',
      {
        events: [...started, ev(at(0, 41) + 24 * H, 'question', 'RUNNING', 'WAITING_FOR_INPUT', { questionId: 'q1' }), ev(at(1, 0) + 24 * H, 'answered', 'WAITING_FOR_INPUT', 'RUNNING')],
        questions: [{ id: 'q1', question: 'Which export format?', askedAt: at(0, 41) + 24 * H, state: 'answered', answer: 'CSV', answeredBy: 'dana', answeredAt: at(1, 0) + 24 * H }],
        decisions: [{ question: 'Which export format?', answer: 'CSV', answeredBy: 'dana', answeredAt: at(1, 0) + 24 * H, source: 'slack' }],
      },
      ['21:00 queued · job night-4f2a', '23:02 start · job night-4f2a · batch tier · cap $12', '00:41 question: Which export format? → CSV (dana via slack)'],
    ],
    [
      'the ladder’s rung and reason when the decision keeps them; a decision no question carried has its own line',
      {
        events: started,
        decisions: [{ question: 'Which export format?', answer: 'CSV', answeredBy: 'musher', answeredAt: at(0, 41) + 24 * H, source: 'ladder', rung: 'decided', reason: 'reversible' }],
      },
      ['21:00 queued · job night-4f2a', '23:02 start · job night-4f2a · batch tier · cap $12', '00:41 question: Which export format? → CSV (decided: reversible)'],
    ],
    [
      'no reply: the question open, the job parked',
      {
        events: [...started, ev(at(2, 36) + 24 * H, 'question', 'RUNNING', 'WAITING_FOR_INPUT', { questionId: 'q2' })],
        questions: [{ id: 'q2', question: 'Drop the v1 endpoint?', askedAt: at(2, 36) + 24 * H, state: 'open', answer: null, answeredBy: null, answeredAt: null }],
      },
      ['21:00 queued · job night-4f2a', '23:02 start · job night-4f2a · batch tier · cap $12', '02:36 question: Drop the v1 endpoint? → no reply yet · parked'],
    ],
    [
      'a limit with its reset, then the cap: only the last stop is the cap’s',
      {
        events: [
          ...started,
          ev(at(1, 0) + 24 * H, 'rate-limited', 'RUNNING', 'WAITING_FOR_LIMIT', { resetsAtMs: at(1, 30) + 24 * H }),
          ev(at(1, 30) + 24 * H, 'limit-reset', 'WAITING_FOR_LIMIT', 'RUNNING'),
          ev(at(3, 40) + 24 * H, 'rate-limited', 'RUNNING', 'WAITING_FOR_LIMIT', { resetsAtMs: at(22, 0) + 24 * H }),
        ],
        spentMicros: 12_040_000,
        lastError: cappedLine(12_040_000, 12_000_000),
      },
      [
        '21:00 queued · job night-4f2a',
        '23:02 start · job night-4f2a · batch tier · cap $12',
        '01:00 at a limit · resumes at 01:30',
        '01:30 goes on',
        '03:40 stopped at its cap: $12.04 of $12',
      ],
    ],
    [
      'lost and recovered, started again; then cancelled, saying who',
      {
        events: [
          ...started,
          ev(at(23, 30), 'lost', 'RUNNING', 'RECOVERY_REQUIRED', { reason: 'the session would not resume' }),
          ev(at(23, 40), 'recovered', 'RECOVERY_REQUIRED', 'QUEUED'),
          ev(at(23, 45), 'claim', 'QUEUED', 'CLAIMING'),
          ev(at(23, 50), 'cancel', 'CLAIMING', 'CANCELLED', { reason: 'cancelled by dana (sleds queue cancel)' }),
        ],
        capMicros: null,
      },
      [
        '21:00 queued · job night-4f2a',
        '23:02 start · job night-4f2a · batch tier',
        '23:30 needs a person: the session would not resume',
        '23:40 made safe · queued again',
        '23:45 started again · job night-4f2a · batch tier',
        '23:50 cancelled · cancelled by dana (sleds queue cancel)',
      ],
    ],
  ])('%s', (_what, over, want) => expect(timelineText({ ...base, ...over })).toEqual(want));
});
