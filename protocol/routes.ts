import { z } from 'zod';
import { TaskIntake, TaskUpdate } from '../core/task/task.js';
import { AnswerRequest, ParkRequest } from '../core/question/question.js';
import { DispatchAnswer, DispatchRequest, PickerAnswer } from '../core/picker/row.js';
import * as R from './schemas.js';
import * as Q from './requests.js';

/**
 * musher's API, one entry per route: method, path (`:name` for a path parameter), what it takes (query, JSON body)
 * and what it answers on success (`reply`; `text` for the statusline's plain line). Every refusal is `ErrorBody`.
 * The server (musher/server.ts) routes these; the clients (cli/, mcp-server/) call them through protocol/client.
 * tests/integration/protocol-contract.test.ts holds a real musher to every entry, and the server to the table.
 */

export type Method = 'GET' | 'POST';

export interface RouteSpec {
  method: Method;
  path: `/v1/${string}`;
  /** What the body is: a JSON object checked by this schema (the server's own, where it parses one). */
  body?: z.ZodType;
  query?: z.ZodType;
  /** The success reply's schema, or 'text' (a plain-text answer). */
  reply: z.ZodType | 'text';
  /** Who calls it: the thin clients that forward raw bytes (hooks, statusline) are not given the typed client. */
  callers: ReadonlyArray<'cli' | 'mcp' | 'hooks' | 'statusline' | 'engine' | 'tests'>;
}

const route = <const S extends RouteSpec>(s: S): S => s;

export const ROUTES = {
  // The hot paths: forwarded raw by hooks/ and statusline/ (they load no zod); here so the table is whole.
  hook: route({ method: 'POST', path: '/v1/hook/:event', body: z.unknown(), reply: R.HookAnswerReply, callers: ['hooks'] }),
  statusline: route({ method: 'POST', path: '/v1/statusline', body: z.unknown(), reply: 'text', callers: ['statusline'] }),

  status: route({ method: 'GET', path: '/v1/status', reply: R.StatusReply, callers: ['cli'] }),
  usagePoller: route({ method: 'GET', path: '/v1/usage-poller', reply: R.UsagePollerReply, callers: ['cli'] }),
  walls: route({ method: 'GET', path: '/v1/walls', reply: R.ForecastReply, callers: ['cli'] }),
  bars: route({ method: 'GET', path: '/v1/bars', reply: R.BarsReply, callers: ['cli'] }),
  wall: route({ method: 'GET', path: '/v1/wall/:id', reply: R.WallReply, callers: ['cli'] }),
  wallExplain: route({ method: 'GET', path: '/v1/wall/:id/explain', reply: R.TextReply, callers: ['cli'] }),
  wallGo: route({ method: 'POST', path: '/v1/wall/:id/go', body: Q.EmptyRequest, reply: R.GoReply, callers: ['cli'] }),

  snapshots: route({ method: 'GET', path: '/v1/snapshots', reply: R.SnapshotListReply, callers: ['cli'] }),
  snapshot: route({ method: 'GET', path: '/v1/snapshots/:id', reply: R.SnapshotShowReply, callers: ['cli'] }),

  estimate: route({ method: 'POST', path: '/v1/estimate', body: Q.EstimateRequest, reply: R.EstimateReply, callers: ['cli', 'mcp'] }),
  taskDone: route({ method: 'POST', path: '/v1/tasks/:id/done', body: Q.EmptyRequest, reply: R.ReceiptLine, callers: ['cli', 'mcp'] }),
  report: route({ method: 'GET', path: '/v1/report', query: Q.ReportQuery, reply: R.ReportReply, callers: ['cli'] }),
  receipts: route({ method: 'GET', path: '/v1/receipts', query: Q.LimitQuery, reply: R.ReceiptListReply, callers: ['cli'] }),
  receipt: route({ method: 'GET', path: '/v1/receipts/:id', reply: R.ReceiptLine, callers: ['cli'] }),

  picker: route({ method: 'GET', path: '/v1/tasks/:id/picker', reply: PickerAnswer, callers: ['cli', 'mcp'] }),
  dispatch: route({ method: 'POST', path: '/v1/tasks/:id/dispatch', body: DispatchRequest, reply: DispatchAnswer, callers: ['cli', 'mcp'] }),

  tasks: route({ method: 'GET', path: '/v1/tasks', query: Q.TasksQuery, reply: R.TaskListReply, callers: ['cli'] }),
  taskCreate: route({ method: 'POST', path: '/v1/tasks', body: TaskIntake, reply: R.TaskReply, callers: ['mcp'] }),
  task: route({ method: 'GET', path: '/v1/tasks/:id', reply: R.TaskShowReply, callers: ['cli', 'mcp'] }),
  taskUpdate: route({ method: 'POST', path: '/v1/tasks/:id', body: TaskUpdate, reply: R.TaskReply, callers: ['cli', 'mcp'] }),

  park: route({ method: 'POST', path: '/v1/tasks/:id/park', body: ParkRequest, reply: R.QuestionTurnReply, callers: ['mcp'] }),
  questions: route({ method: 'GET', path: '/v1/questions', query: Q.QuestionsQuery, reply: R.QuestionListReply, callers: ['mcp'] }),
  question: route({ method: 'GET', path: '/v1/questions/:id', reply: R.QuestionReply, callers: ['mcp'] }),
  answer: route({ method: 'POST', path: '/v1/questions/:id/answer', body: AnswerRequest, reply: R.QuestionTurnReply, callers: ['mcp'] }),
  sessionTask: route({ method: 'GET', path: '/v1/sessions/:id/task', reply: R.SessionTaskReply, callers: ['mcp'] }),

  githubWatch: route({ method: 'POST', path: '/v1/github/watch', body: Q.EmptyRequest, reply: R.PrWatchReply, callers: ['cli'] }),
  trackerPoll: route({ method: 'POST', path: '/v1/tracker/poll', body: Q.EmptyRequest, reply: R.TrackerRoundReply, callers: ['cli'] }),
  tracker: route({ method: 'GET', path: '/v1/tracker', reply: R.TrackerItemsReply, callers: ['cli'] }),

  jobs: route({ method: 'GET', path: '/v1/jobs', query: Q.LimitQuery, reply: R.JobsListReply, callers: ['cli'] }),
  jobCreate: route({ method: 'POST', path: '/v1/jobs', body: Q.NewJobRequest, reply: R.JobReply, callers: ['tests'] }),
  jobCancel: route({ method: 'POST', path: '/v1/jobs/:id/cancel', body: Q.EmptyRequest, reply: R.JobCancelReply, callers: ['cli'] }),

  gateway: route({ method: 'GET', path: '/v1/gateway', reply: R.GatewayStateReply, callers: ['tests'] }),
  gatewayToken: route({ method: 'POST', path: '/v1/gateway/tokens', body: Q.MintTokenRequest, reply: R.GatewayTokenReply, callers: ['engine', 'tests'] }),

  handoffs: route({ method: 'GET', path: '/v1/handoffs', reply: R.HandoffListReply, callers: ['cli'] }),
  handOff: route({ method: 'POST', path: '/v1/handoffs', body: Q.HandOffRequest, reply: R.HandOffReply, callers: ['mcp'] }),
  handoffsPrune: route({ method: 'POST', path: '/v1/handoffs/prune', body: Q.PruneRequest, reply: R.PruneReply, callers: ['cli'] }),
  pickup: route({ method: 'POST', path: '/v1/handoffs/pickup', body: Q.PickupRequest, reply: R.PickupReply, callers: ['cli', 'mcp'] }),

  routes: route({ method: 'GET', path: '/v1/routes', reply: R.RouteListReply, callers: ['cli'] }),
  routeLoad: route({ method: 'POST', path: '/v1/routes/load', body: Q.RouteLoadRequest, reply: R.RouteLoadReply, callers: ['cli'] }),
  routePlan: route({ method: 'POST', path: '/v1/routes/plan', body: Q.RoutePlanRequest, reply: R.RoutePlanReply, callers: ['mcp'] }),
  routeNew: route({ method: 'POST', path: '/v1/routes/new', body: Q.RouteNewRequest, reply: R.RoutePlanReply, callers: ['cli'] }),
  routeStart: route({ method: 'POST', path: '/v1/routes/start', body: Q.RouteStartRequest, reply: R.RouteStartReply, callers: ['cli'] }),
  routeAnswer: route({ method: 'POST', path: '/v1/routes/answer', body: Q.RouteAnswerRequest, reply: R.RouteAnswerReply, callers: ['cli'] }),
  routePark: route({ method: 'POST', path: '/v1/routes/park', body: Q.RouteParkRequest, reply: R.RouteParkReply, callers: ['mcp'] }),
  routeAsk: route({ method: 'POST', path: '/v1/routes/ask', body: Q.RouteAskRequest, reply: R.RouteAskReply, callers: ['mcp'] }),
  needs: route({ method: 'GET', path: '/v1/needs', reply: R.NeedsReply, callers: ['cli'] }),
  queue: route({ method: 'GET', path: '/v1/queue', reply: R.QueueReply, callers: ['cli'] }),
  queueCancel: route({ method: 'POST', path: '/v1/queue/cancel', body: Q.QueueCancelRequest, reply: R.QueueCancelReply, callers: ['cli'] }),
  queueResume: route({ method: 'POST', path: '/v1/queue/resume', body: Q.QueueResumeRequest, reply: R.QueueResumeReply, callers: ['cli'] }),
  digest: route({ method: 'GET', path: '/v1/digest', reply: R.DigestReply, callers: ['cli'] }),
  route: route({ method: 'GET', path: '/v1/routes/:key', reply: R.RouteShowReply, callers: ['cli'] }),
  routeArm: route({ method: 'POST', path: '/v1/routes/:key/arm', body: Q.RouteArmRequest, reply: R.RouteArmReply, callers: ['cli'] }),
  routeMode: route({ method: 'POST', path: '/v1/routes/:key/mode', body: Q.RouteModeRequest, reply: R.RouteArmReply, callers: ['cli'] }),
  routeDecisions: route({ method: 'GET', path: '/v1/routes/:key/decisions', reply: R.RouteDecisionsReply, callers: ['cli'] }),

  health: route({ method: 'GET', path: '/v1/health', reply: R.HealthReply, callers: ['cli'] }),
  shutdown: route({ method: 'POST', path: '/v1/shutdown', reply: R.OkReply, callers: ['cli'] }),
} as const satisfies Record<string, RouteSpec>;

export type Routes = typeof ROUTES;
export type RouteName = keyof Routes;

/** `{ id: string }` for `/v1/tasks/:id/park`; `{}` for a path without parameters. */
type ParamsOf<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? { [K in Name]: string } & ParamsOf<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? { [K in Name]: string }
    : {};

type BodyOf<S> = S extends { body: infer B extends z.ZodType } ? { body: z.input<B> } : {};
type QueryOf<S> = S extends { query: infer Q extends z.ZodType } ? { query?: z.input<Q> } : {};
type HasParams<S extends RouteSpec> = keyof ParamsOf<S['path']> extends never ? {} : { params: ParamsOf<S['path']> };

/** What a call to route `N` takes: its path parameters, its body, its query. */
export type RouteInput<N extends RouteName> = HasParams<Routes[N]> & BodyOf<Routes[N]> & QueryOf<Routes[N]>;

/** What route `N` answers on success. */
export type RouteReply<N extends RouteName> = Routes[N]['reply'] extends z.ZodType ? z.output<Routes[N]['reply']> : string;

/** The path a call goes to: parameters encoded into the template, the query appended. */
export function pathOf(spec: RouteSpec, params: Record<string, string> = {}, query: Record<string, string | undefined> = {}): string {
  const path = spec.path.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    const v = params[name];
    if (v === undefined) throw new Error(`${spec.method} ${spec.path}: parameter ${name} is missing`);
    return encodeURIComponent(v);
  });
  const q = Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined);
  return q.length ? `${path}?${new URLSearchParams(q).toString()}` : path;
}

/** The route a method and a concrete path name (as the server sees it), or null. */
export function routeOf(method: string, pathname: string): RouteName | null {
  for (const [name, spec] of Object.entries(ROUTES) as Array<[RouteName, RouteSpec]>) {
    if (spec.method === method && patternOf(spec.path).test(pathname)) return name;
  }
  return null;
}

/** `/v1/tasks/:id/park` → /^\/v1\/tasks\/[^/]+\/park$/ */
export function patternOf(path: string): RegExp {
  const escaped = path.split('/').map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')));
  return new RegExp(`^${escaped.join('\\/')}$`);
}
