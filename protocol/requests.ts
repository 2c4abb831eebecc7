import { z } from 'zod';

/**
 * The request bodies musher's routes take, where musher/ had them inline: one schema each, used by the route that
 * parses the body and by the clients' types. Those already in core/ (TaskIntake, ParkRequest, DispatchRequest, …)
 * stay there; the route table names them.
 */

/** `POST /v1/estimate`: a prompt's text (and what is known of it), or a task by id. Unknown fields tolerated. */
export const EstimateRequest = z.looseObject({
  text: z.string().max(1_000_000).optional(),
  taskId: z.string().min(1).optional(),
  type: z.string().trim().toLowerCase().min(1).max(60).optional(),
  model: z.string().trim().min(1).max(200).optional(),
  repo: z.string().min(1).optional(),
});
export type EstimateRequest = z.infer<typeof EstimateRequest>;

/** `POST /v1/handoffs`: the session to hand over now, and to whom (the roster's handle; `@dana` is dana). */
export const HandOffRequest = z.object({
  sessionId: z.string().trim().min(1).max(200),
  to: z
    .string()
    .trim()
    .transform((s) => s.replace(/^@/, '').toLowerCase())
    .pipe(z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, "a teammate's handle, as the roster spells it (e.g. dana)"))
    .optional(),
});

/** `POST /v1/jobs`: kind, when (epoch ms, or as the user typed it), payload. */
export const NewJobRequest = z.looseObject({
  kind: z.string().min(1),
  /** Epoch ms, or `when` as the user typed it (+2h, 9am, an ISO time) in musher's time zone. */
  runAt: z.number().int().optional(),
  when: z.string().optional(),
  wallId: z.string().nullish(),
  sessionId: z.string().nullish(),
  payload: z.record(z.string(), z.unknown()),
});

/** `POST /v1/handoffs/pickup`. */
export const PickupRequest = z.looseObject({ id: z.string(), cwd: z.string() });
/** `POST /v1/handoffs/prune`. */
export const PruneRequest = z.looseObject({ cwd: z.string() });
/** `POST /v1/gateway/tokens` (musher/gateway/service.ts checks the limits: ttl, lengths). */
export const MintTokenRequest = z.looseObject({
  sessionId: z.string(),
  seat: z.string().optional(),
  project: z.string().nullish(),
  wallId: z.string().nullish(),
  ttlMs: z.number().optional(),
  /** 'batch': the half-price tier (slower answers); default 'standard'. */
  tier: z.enum(['standard', 'batch']).optional(),
});

/** The bodies of the POST routes that take none (`{}` is sent). */
export const EmptyRequest = z.looseObject({});

/** Query strings. */
export const LimitQuery = z.looseObject({ limit: z.string().optional() });
export const TasksQuery = z.looseObject({ state: z.string().optional(), limit: z.string().optional() });
export const QuestionsQuery = z.looseObject({ state: z.string().optional(), task: z.string().optional(), limit: z.string().optional() });

/** `GET /v1/report`: `sleds report <period>` (core/report/report.ts); dates are local, inclusive. */
export const ReportQuery = z.looseObject({
  period: z.enum(['daily', 'weekly', 'monthly', 'session'], { message: 'a report is daily, weekly, monthly or session' }),
  by: z.enum(['model', 'project', 'seat'], { message: '--by takes model, project or seat' }).optional(),
  since: z.string().max(20).optional(),
  until: z.string().max(20).optional(),
  tz: z.string().max(100).optional(),
  start_of_week: z.enum(['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'], { message: '--start-of-week takes a day of the week' }).optional(),
});

/** `POST /v1/routes/load`: the route files of the repository `cwd` is in (one, with `key`). */
export const RouteLoadRequest = z.object({ cwd: z.string().min(1), key: z.string().regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'a route key like eng-503').optional() });
/** `POST /v1/routes/:key/arm`: the nodes to arm; none named: every node. */
export const RouteArmRequest = z.object({ nodes: z.array(z.string().min(1)).nullable().optional() });
/** `POST /v1/routes/:key/mode`. */
export const RouteModeRequest = z.object({ mode: z.enum(['approve', 'auto'], { error: 'approve or auto' }) });
/** `POST /v1/routes/start`: `<route>/<node>`, or a node id alone when one route has it. */
export const RouteStartRequest = z.object({ node: z.string().min(1).max(81) });
/** `sleds queue cancel <job>`: a route node (`<route>/<node>`) or a wall's job id. */
export const QueueCancelRequest = z.object({ job: z.string().min(1).max(81) });
/** `POST /v1/queue/resume` (`sleds resume [<job>]`, `/sled resume`): a delivered job pulled into the checkout at `cwd`. */
export const QueueResumeRequest = z.object({ job: z.string().min(1).max(81).optional(), cwd: z.string().min(1).max(4096) });
/** A person's answer to a node's parked question (`sleds route answer <route>/<node> <answer…>`). */
/** `POST /v1/routes/answer`: `node` is `<route>/<node>`, a node id, or the question's id; `answer` A, B or words. */
export const RouteAnswerRequest = z.object({ node: z.string().min(1).max(81), answer: z.string().trim().min(1).max(4000), by: z.string().trim().min(1).max(80).optional() });
/** `POST /v1/routes/park`: a route node's agent parks one question with two answers (the MCP park verb, in the node's session). */
export const RouteParkRequest = z.object({
  route: z.string().regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'a route key like eng-503'),
  node: z.string().regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'a node id like mailer'),
  question: z.string().trim().min(3, 'the question is empty — say what you need decided').max(2000),
  options: z.tuple([z.string().trim().min(3).max(500), z.string().trim().min(3).max(500)], { message: 'options holds exactly two sentences: [A, B]' }),
});

/**
 * `POST /v1/routes/ask`: a route node's agent asks one question with 2–4 options, its recommended one first (the MCP
 * ask verb, in the node's session), and sleds works down the ladder: resolve it from context, decide it, escalate it
 * to the overnight on-call, or park it (issue 15 § 5).
 */
export const RouteAskRequest = z.object({
  route: z.string().regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'a route key like eng-503'),
  node: z.string().regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'a node id like mailer'),
  question: z.string().trim().min(3, 'the question is empty — say what you need decided').max(2000),
  options: z.array(z.string().trim().min(3).max(500)).min(2, 'options holds 2 to 4 sentences, your recommended one first').max(4, 'options holds 2 to 4 sentences, your recommended one first'),
  reversible: z.boolean({ message: 'reversible: true when the choice is easy to undo later, else false' }),
  risk: z.enum(['low', 'high']).optional(),
});

/** A node as the MCP `plan` verb takes it (the route file's own field names). */
export const PlanNode = z.object({
  id: z.string().min(1).max(40),
  title: z.string().min(1).max(200).optional(),
  brief: z.string().min(1).max(100_000),
  depends_on: z.array(z.string().min(1)).max(100).optional(),
  area: z.string().min(1).max(100).optional(),
  harness: z.string().min(1).max(60).optional(),
  model: z.string().min(1).max(200).optional(),
  overnight: z.boolean().optional(),
  band: z.object({ low_usd: z.number(), high_usd: z.number(), low_min: z.number(), high_min: z.number(), confidence: z.number() }).optional(),
});
/** `POST /v1/routes/new`: `sleds route new <key> --from <tracker item>` (owner/repo#12, #12, or the URL). */
export const RouteNewRequest = z.object({
  cwd: z.string().min(1),
  key: z.string().regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'a route key: lowercase letters, digits and -, e.g. eng-503'),
  from: z.string().trim().min(1).max(300),
});
/** `POST /v1/routes/plan`: writes `.sleds/routes/<key>.yml` in the repository `cwd` is in, checked as a file is, and loads it. */
export const RoutePlanRequest = z.object({
  cwd: z.string().min(1),
  key: z.string().min(1).max(40),
  title: z.string().min(1).max(200),
  tracker: z.string().min(1).max(100).optional(),
  mode: z.enum(['approve', 'auto']).optional(),
  notes: z.string().max(100_000).optional(),
  nodes: z.array(PlanNode).min(1).max(100),
});
