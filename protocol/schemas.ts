import { z } from 'zod';
import { Band } from '../core/estimate/band.js';
import { SignedReceipt } from '../core/receipt/receipt.js';
import { SnapshotManifestSchema, SnapshotRowSchema } from '../core/snapshot.js';
import type { StatusSnapshot } from '../core/status.js';
import type { BindingWall, Forecast, WallHint } from '../core/forecast/forecast.js';
import type { Calibration } from '../core/forecast/calibration.js';
import type { Task } from '../core/task/task.js';
import type { Question } from '../core/question/question.js';
import { EXIT_ORDER } from '../core/exits/types.js';
import type { WallCard } from '../core/wall/view.js';
import type { ExitOutcome } from '../core/exits/outcome.js';

/**
 * The shapes musher answers with, as zod schemas: what a client may rely on. Replies are objects that may carry
 * more fields than listed (a newer musher adds some); every field listed is checked. The contract test
 * (tests/integration/protocol-contract.test.ts) calls a real musher and parses each reply by these.
 */

/**
 * An object checked on the fields `shape` lists, typed as the core type `T` it is on the wire. For the large core
 * interfaces (the status snapshot, a forecast) that have no schema of their own: the fields listed are the ones a
 * client reads; the rest is the core type's word.
 */
export function wire<T>(shape: { [K in keyof T]?: z.ZodType }): z.ZodType<T> {
  return z.looseObject(shape as z.ZodRawShape) as unknown as z.ZodType<T>;
}

const epochMs = z.number();
const nullableMs = z.number().nullable();

/** Every refusal: `{error}` in one line, sometimes with more (`kind`, `handle` for an untrusted sender). */
export const ErrorBody = z.looseObject({ error: z.string() });
export type ErrorBody = z.infer<typeof ErrorBody>;

export const TaskRow = wire<Task>({
  id: z.string(),
  title: z.string(),
  worth: z.string().nullable(),
  type: z.string().nullable(),
  repo: z.string().nullable(),
  source: z.string(),
  sourceRef: z.string().nullable(),
  state: z.enum(['open', 'parked', 'done']),
  promptChars: z.number(),
  turns: z.number(),
  createdAt: epochMs,
  updatedAt: epochMs,
  endedAt: nullableMs,
});

export const QuestionRow = wire<Question>({
  id: z.string(),
  taskId: z.string(),
  sessionId: z.string().nullable(),
  question: z.string(),
  options: z.tuple([z.string(), z.string()]),
  state: z.enum(['open', 'answered']),
  choice: z.enum(['A', 'B']).nullable(),
  answeredBy: z.string().nullable(),
  askedAt: epochMs,
  answeredAt: nullableMs,
  deliveredAt: nullableMs,
});

export const BarStatusRow = z.looseObject({
  provider: z.string(),
  window: z.string(),
  label: z.string(),
  usedPct: z.number(),
  resetsAt: nullableMs,
  observedAt: epochMs,
  ageMs: z.number(),
  stale: z.boolean(),
  source: z.string(),
  // Whose bar (core/account.ts): two accounts' bars are told apart by these.
  account: z.string(),
  accountLabel: z.string().nullable(),
});
export type BarStatusRow = z.infer<typeof BarStatusRow>;

export const StatusReply = wire<StatusSnapshot>({
  now: epochMs,
  musher: z.looseObject({ pid: z.number(), version: z.string(), startedAt: epochMs }),
  bars: z.array(BarStatusRow),
  today: z.looseObject({ since: epochMs, costMicros: z.number(), unpricedRecords: z.number(), byModel: z.array(z.looseObject({ model: z.string(), costMicros: z.number() })) }),
  sessions: z.array(z.looseObject({ sessionId: z.string(), harness: z.string(), costMicros: z.number() })),
  walls: z.array(z.looseObject({ sessionId: z.string(), at: epochMs, message: z.string() })),
  ingest: z.looseObject({ files: z.number(), bytesRead: z.number(), pendingBytes: z.number(), backfilling: z.boolean() }),
  totals: z.looseObject({ usageRecords: z.number(), costMicros: z.number() }),
  hookEvents: z.record(z.string(), z.number()),
  usageEndpoint: z.string(),
  credits: z.array(z.looseObject({ provider: z.string(), observedAt: epochMs })),
  platformKey: z.looseObject({ todayMicros: z.number(), unpricedRecords: z.number(), bySeatModel: z.array(z.looseObject({ seat: z.string(), model: z.string() })) }),
  wallBook: z.array(z.looseObject({ wallId: z.string(), sessionId: z.string(), hitAt: epochMs, state: z.string() })),
  handoffs: z.array(z.looseObject({ id: z.string(), direction: z.enum(['sent', 'received']), peer: z.string(), state: z.string() })).optional(),
  nextWall: z.looseObject({ name: z.string(), provider: z.string(), window: z.string(), atMs: epochMs, dollarsToWallMicros: z.number().nullable() }).nullable(),
});

export const BarsReply = z.looseObject({ now: epochMs, bars: z.array(BarStatusRow) });

export const WallForecastRow = z.looseObject({
  provider: z.string(),
  window: z.string(),
  name: z.string(),
  usedPct: z.number(),
  resetsAt: nullableMs,
  forecast: wire<Forecast>({ kind: z.string() }),
  calibration: wire<Calibration>({ kind: z.string() }),
  dollarsToWallMicros: z.number().nullable(),
  dollarsToWallBand: z.tuple([z.number(), z.number()]).nullable(),
  account: z.string(),
  accountLabel: z.string().nullable(),
});
export type WallForecastRow = z.infer<typeof WallForecastRow>;

export const ForecastReply = z.looseObject({
  at: epochMs,
  walls: z.array(WallForecastRow),
  binding: wire<BindingWall>({ kind: z.string() }).nullable(),
  hint: wire<WallHint>({ wallAtMs: epochMs, amber: z.boolean() }).nullable(),
});
export type ForecastReply = z.infer<typeof ForecastReply>;

export const UsagePollerReply = z.looseObject({
  line: z.string(),
  state: z.looseObject({ role: z.string(), lastError: z.string().nullable() }).nullable(),
});

const ExitKindSchema = z.enum(EXIT_ORDER);
const MoneyBandSchema = z.looseObject({ loMicros: z.number(), hiMicros: z.number() });

/** The wall as a view model (core/wall/view.ts): what `sleds wall show` and `--json` render. Every field is checked. */
export const WallCardSchema = z.looseObject({
  wallId: z.string(),
  window: z.string().nullable(),
  windowTitle: z.string(),
  resetAtMs: nullableMs,
  nowMs: epochMs,
  timeZone: z.string(),
  snapshot: z.looseObject({ id: z.string().nullable(), note: z.string().nullable() }),
  remaining: z.looseObject({
    usd: MoneyBandSchema.nullable(),
    minutes: z.looseObject({ lo: z.number(), hi: z.number() }).nullable(),
    fit: z.number().nullable(),
    burnPerHourMicros: z.number().nullable(),
  }),
  exits: z.array(
    z.looseObject({
      number: z.number().int().min(1).max(6),
      kind: ExitKindSchema,
      title: z.string(),
      available: z.boolean(),
      detail: z.string().nullable(),
      whyNot: z.string().nullable(),
      short: z.string(),
      cost: MoneyBandSchema.nullable(),
    }),
  ),
  pick: z
    .looseObject({
      exit: ExitKindSchema,
      number: z.number().int(),
      title: z.string(),
      by: z.enum(['policy', 'user']),
      rule: z.string().nullable(),
      outcome: z.string().nullable(),
    })
    .nullable(),
}) satisfies z.ZodType<WallCard>;

const decided = { wallId: z.string(), atMs: epochMs, timeZone: z.string() };

/** What taking an exit did (core/exits/outcome.ts), one variant per exit. */
export const ExitOutcomeSchema = z.discriminatedUnion('exit', [
  z.looseObject({
    ...decided,
    exit: z.enum(['continue', 'switch']),
    result: z.literal('continuing'),
    where: z.enum(['pane', 'terminal']),
    harnessName: z.string().nullable(),
    model: z.string().nullable(),
    allowanceLeftMicros: z.number().nullable(),
  }),
  z.looseObject({
    ...decided,
    exit: z.literal('hold'),
    result: z.enum(['held', 'scheduled']),
    resumesAtMs: epochMs,
    resumedBy: z.enum(['harness', 'sleds']),
    harnessName: z.string(),
    ownContinueHeldBack: z.boolean(),
  }),
  z.looseObject({ ...decided, exit: z.literal('overnight'), result: z.literal('scheduled'), startMs: epochMs, endMs: epochMs, job: z.string(), lowMicros: z.number(), highMicros: z.number(), capMicros: z.number() }),
  z.looseObject({ ...decided, exit: z.literal('defer'), result: z.literal('scheduled'), runsAtMs: epochMs }),
  z.looseObject({ ...decided, exit: z.literal('handoff'), result: z.literal('handed-off'), handoffId: z.string(), words: z.string() }),
]) satisfies z.ZodType<ExitOutcome>;

export const WallReply = z.looseObject({
  wall: z.looseObject({ wallId: z.string(), sessionId: z.string(), state: z.string(), hitAtMs: epochMs }),
  /** The card in the prompt's words. */
  card: z.string(),
  wallCard: WallCardSchema,
  events: z.array(z.looseObject({ wallId: z.string(), at: epochMs, kind: z.string() })),
});

export const TextReply = z.looseObject({ text: z.string() });

/** A harness command to run in this terminal, with the gateway's environment (a token in it: never printed). */
export const GoReply = z.looseObject({
  cmd: z.looseObject({ file: z.string(), args: z.array(z.string()), env: z.record(z.string(), z.string()), cwd: z.string() }),
});

export const SnapshotListRow = SnapshotRowSchema.extend({ shortId: z.string() }).loose();
export const SnapshotListReply = z.looseObject({ snapshots: z.array(SnapshotListRow) });
export type SnapshotListReply = z.infer<typeof SnapshotListReply>;
export const SnapshotShowReply = z.looseObject({ snapshot: SnapshotListRow, manifest: SnapshotManifestSchema.loose(), brief: z.string() });
export type SnapshotShowReply = z.infer<typeof SnapshotShowReply>;

export const EstimateReply = z.looseObject({ band: Band.nullable(), prior: Band.nullable(), similar: z.number(), text: z.string() });
export type EstimateReply = z.infer<typeof EstimateReply>;

export const ReceiptLine = z.looseObject({ receipt: SignedReceipt, line: z.string() });
export const ReceiptListReply = z.looseObject({ receipts: z.array(ReceiptLine) });
/** `GET /v1/report` (core/report/report.ts's Report). */
const ReportTotals = {
  inputTokens: z.number(),
  outputTokens: z.number(),
  cacheCreationTokens: z.number(),
  cacheReadTokens: z.number(),
  totalTokens: z.number(),
  costMicros: z.number(),
  unpricedReplies: z.number(),
  unpricedModels: z.array(z.string()),
  keyCostMicros: z.number(),
  replies: z.number(),
};
export const ReportReply = z.looseObject({
  period: z.enum(['daily', 'weekly', 'monthly', 'session']),
  by: z.enum(['model', 'project', 'seat']),
  timeZone: z.string(),
  rows: z.array(
    z.looseObject({
      period: z.string(),
      ...ReportTotals,
      project: z.string().nullable().optional(),
      lastActivity: z.number().optional(),
      modelsUsed: z.array(z.string()),
      breakdown: z.array(z.looseObject({ name: z.string(), ...ReportTotals })),
    }),
  ),
  totals: z.looseObject(ReportTotals),
});
export type ReceiptListReply = z.infer<typeof ReceiptListReply>;

export const TaskListReply = z.looseObject({ now: epochMs, tasks: z.array(TaskRow) });
export type TaskListReply = z.infer<typeof TaskListReply>;
export const TaskReply = z.looseObject({ task: TaskRow });
export const TaskShowReply = z.looseObject({
  task: TaskRow,
  sessions: z.array(z.string()),
  band: Band.nullable(),
  receipt: SignedReceipt.nullable().optional(),
  receiptLine: z.string().nullable().optional(),
});

export const QuestionTurnReply = z.looseObject({ question: QuestionRow, task: TaskRow, text: z.string() });
export const QuestionListReply = z.looseObject({ questions: z.array(QuestionRow) });
export const QuestionReply = z.looseObject({ question: QuestionRow });
export const SessionTaskReply = z.looseObject({ task: TaskRow.nullable(), questions: z.array(QuestionRow) });

export const PrWatchReply = z.looseObject({ repos: z.array(z.string()), finished: z.array(z.looseObject({ taskId: z.string(), pr: z.string() })), errors: z.array(z.string()) });
export type PrWatchReply = z.infer<typeof PrWatchReply>;

export const TrackerRoundReply = z.looseObject({
  at: epochMs,
  adapters: z.array(
    z.looseObject({
      adapter: z.string(),
      configured: z.boolean(),
      items: z.number(),
      created: z.array(z.looseObject({ taskId: z.string(), ref: z.string() })),
      commented: z.array(z.looseObject({ taskId: z.string(), ref: z.string(), commentRef: z.string() })),
      errors: z.array(z.string()),
    }),
  ),
});
export type TrackerRoundReply = z.infer<typeof TrackerRoundReply>;
export const TrackerItemRow = z.looseObject({
  sourceRef: z.string(),
  adapter: z.string(),
  itemKey: z.string(),
  taskId: z.string(),
  commentRef: z.string().nullable(),
  commentBody: z.string().nullable(),
  commentedAt: nullableMs,
  receiptLine: z.string().nullable(),
  seenAt: epochMs,
});
export type TrackerItemRow = z.infer<typeof TrackerItemRow>;
export const TrackerItemsReply = z.looseObject({ now: epochMs, items: z.array(TrackerItemRow) });

export const JobRow = z.looseObject({
  id: z.string(),
  kind: z.string(),
  wallId: z.string().nullable(),
  sessionId: z.string().nullable(),
  runAt: epochMs,
  state: z.string(),
  payload: z.record(z.string(), z.unknown()),
  result: z.looseObject({ ok: z.boolean(), summary: z.string() }).nullable(),
  handle: z.record(z.string(), z.unknown()).nullable(),
  attempts: z.number(),
  lastCheck: z.string().nullable(),
  createdAt: epochMs,
  updatedAt: epochMs,
  startedAt: nullableMs,
  finishedAt: nullableMs,
  reportedAt: nullableMs,
});
export type JobRow = z.infer<typeof JobRow>;
export const JobsListReply = z.looseObject({ now: epochMs, jobs: z.array(JobRow) });
export type JobsListReply = z.infer<typeof JobsListReply>;
export const JobReply = z.looseObject({ job: JobRow });
export const JobCancelReply = z.looseObject({ ok: z.literal(true), job: JobRow });

export const GatewayStateReply = z.looseObject({ running: z.boolean(), url: z.string().nullable() });
export const GatewayTokenReply = z.looseObject({ token: z.string(), baseUrl: z.string(), openaiBaseUrl: z.string(), expiresAtMs: epochMs, tier: z.enum(['standard', 'batch']), claudeEnv: z.record(z.string(), z.string()) });

export const HandoffRow = z.looseObject({
  id: z.string(),
  direction: z.enum(['sent', 'received']),
  wallId: z.string().nullable(),
  sessionId: z.string().nullable(),
  harness: z.string().nullable(),
  peer: z.string(),
  createdAt: epochMs,
  expiresAt: epochMs,
  transport: z.string(),
  ref: z.string().nullable(),
  branch: z.string().nullable(),
  state: z.string(),
  pickedUpBy: z.string().nullable(),
  pickedUpAt: nullableMs,
  note: z.string().nullable(),
});
export type HandoffRow = z.infer<typeof HandoffRow>;
export const HandoffListReply = z.looseObject({ now: epochMs, handoffs: z.array(HandoffRow) });
export type HandoffListReply = z.infer<typeof HandoffListReply>;
/** A hand-off made now; at a wall it is exit 5, and `outcome` is what that exit did (absent mid-work). */
export const HandOffReply = z.looseObject({ id: z.string().nullable(), line: z.string(), handoff: HandoffRow.nullable(), outcome: ExitOutcomeSchema.optional() });
export const PruneReply = z.looseObject({ pruned: z.array(z.string()) });
export const PickupReply = z.looseObject({ received: HandoffRow.nullable(), again: z.boolean() });

export const HealthReply = z.looseObject({ ok: z.literal(true), pid: z.number(), startedAt: epochMs });
export const OkReply = z.looseObject({ ok: z.literal(true) });

/** A hook's answer in musher's words (hooks/ turns it into the harness's dialect); hooks read it raw. */
export const HookAnswerReply = z.looseObject({});

// ---- routes (issue 14) ----
const RouteBandReply = z.object({ lowUsd: z.number(), highUsd: z.number(), lowMin: z.number(), highMin: z.number(), confidence: z.number() });
export const RouteRowReply = z.looseObject({
  key: z.string(),
  title: z.string(),
  tracker: z.string().nullable(),
  mode: z.enum(['approve', 'auto']),
  notes: z.string().nullable(),
  repoRoot: z.string(),
  filePath: z.string(),
});
export const RouteNodeReply = z.looseObject({
  nodeId: z.string(),
  title: z.string(),
  dependsOn: z.array(z.string()),
  wave: z.number().int(),
  state: z.string(),
  armed: z.boolean(),
  approved: z.boolean(),
  band: RouteBandReply.nullable(),
  harness: z.string().nullable(),
  model: z.string().nullable(),
  prNumber: z.number().nullable(),
  prUrl: z.string().nullable(),
  /** The node's signed receipt in one line once it landed; absent from older musher replies. */
  receipt: z.string().nullish(),
});
export const RouteSummaryReply = RouteRowReply.extend({ nodes: z.number().int(), landed: z.number().int(), band: RouteBandReply.nullable(), line: z.string() });
export const RouteListReply = z.looseObject({ routes: z.array(RouteSummaryReply) });
export const RouteShowReply = z.looseObject({ route: RouteRowReply, waves: z.array(z.array(RouteNodeReply)), band: RouteBandReply.nullable(), line: z.string() });
export const RouteLoadReply = z.looseObject({ repoRoot: z.string(), loaded: z.array(z.string()) });
export const RouteArmReply = z.looseObject({ key: z.string(), armed: z.array(z.string()), mode: z.enum(['approve', 'auto']) });
export const RouteAnswerReply = z.looseObject({ key: z.string(), node: z.string(), question: z.string(), answer: z.string() });
export const RouteParkReply = z.looseObject({ questionId: z.string(), key: z.string(), node: z.string(), question: z.string(), options: z.array(z.string()), text: z.string() });
/**
 * `POST /v1/routes/ask`: the ladder's rung and what the agent does next — `answer` (the option taken, resolved or
 * decided: go on with it), or `wait` (escalated or parked: end the turn; sleds resumes the session with the answer).
 */
export const RouteAskReply = z.looseObject({
  key: z.string(),
  node: z.string(),
  rung: z.enum(['context', 'decided', 'escalated', 'parked']),
  next: z.enum(['answer', 'wait']),
  answer: z.string().nullable(),
  questionId: z.string().nullable(),
  reason: z.string(),
  text: z.string(),
});
/** `GET /v1/queue`: the overnight jobs (issue 15 § 1). */
export const QueueReply = z.looseObject({
  jobs: z.array(
    z.looseObject({
      job: z.string(),
      kind: z.enum(['route-node', 'job', 'wall']),
      title: z.string(),
      state: z.string(),
      band: RouteBandReply.nullable(),
      capMicros: z.number().nullable(),
      spentMicros: z.number(),
      note: z.string().nullable(),
      log: z.array(z.string()),
    }),
  ),
});
export const QueueCancelReply = z.looseObject({ job: z.string() });
/** A delivered overnight job pulled into a checkout: its branch (how it came here), what it did and decided. */
export const QueueResumeReply = z.looseObject({
  job: z.string(),
  repoRoot: z.string(),
  branch: z.string(),
  branchHere: z.enum(['local', 'fetched', 'elsewhere']),
  prUrl: z.string().nullable(),
  text: z.string(),
  context: z.string(),
});
/** One job's line in the morning digest (core/overnight/digest.ts DigestEntry). */
const DigestEntryReply = z.looseObject({ job: z.string(), title: z.string(), state: z.string(), line: z.string(), link: z.string().nullable() });
/** `GET /v1/digest`: the last night's digest of each repository with overnight jobs (issue 15 § 7), as Slack gets it. */
export const DigestReply = z.looseObject({
  digests: z.array(
    z.looseObject({
      repoRoot: z.string(),
      /** The policy's digest channel; null: the policy posts none. */
      channel: z.string().nullable(),
      night: z.looseObject({ startMs: epochMs, endMs: epochMs }),
      header: z.string(),
      delivered: z.array(DigestEntryReply),
      waiting: z.array(DigestEntryReply),
      atAWall: z.array(DigestEntryReply),
      atWork: z.array(DigestEntryReply),
      text: z.string(),
    }),
  ),
});
/** `GET /v1/needs`: what waits for a person — route nodes' parked questions and tasks' — oldest first. */
export const NeedsReply = z.looseObject({
  needs: z.array(
    z.looseObject({
      kind: z.enum(['node', 'task']),
      questionId: z.string(),
      /** `<route>/<node>`, or the task's id. */
      of: z.string(),
      title: z.string(),
      question: z.string(),
      options: z.array(z.string()),
      askedAt: epochMs,
      /** Posted to Slack as a two-button message. */
      inSlack: z.boolean(),
      answerWith: z.string(),
    }),
  ),
});
export const RouteStartReply = z.looseObject({ key: z.string(), node: z.string(), state: z.string(), ready: z.boolean(), waitingFor: z.array(z.string()) });
export const RouteDecisionsReply = z.looseObject({
  key: z.string(),
  decisions: z.array(z.looseObject({ nodeId: z.string(), question: z.string(), options: z.array(z.string()), answer: z.string(), answeredBy: z.string(), answeredAt: epochMs, source: z.string(), rung: z.enum(['context', 'decided', 'on-call', 'person']).nullish(), reason: z.string().nullish() })),
});
export const RoutePlanReply = z.looseObject({ key: z.string(), file: z.string(), waves: z.array(z.array(z.string())) });
