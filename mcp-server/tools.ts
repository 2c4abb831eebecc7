import { z } from 'zod';
import { renderStatusCard } from '../core/status.js';
import type { Task } from '../core/task/task.js';
import type { RouteInput, RouteName, RouteReply } from '../protocol/routes.js';
import { CHOICES, parseChoice } from '../core/question/question.js';
import { shellLine } from '../core/shell-quote.js';
import { MusherAway, type ApiReply, type MusherApi } from './musher-api.js';
import { PlanNode } from '../protocol/requests.js';
import { renderHandOffForTool } from './exit-view.js';

/**
 * The sleds MCP tools: each is a zod input schema and a handler that calls musher's socket API and answers in a
 * short paragraph a person can read and a model can use. A refusal is an error result whose text says what to fix.
 */

export interface ToolContext {
  api: MusherApi;
  /** The harness session that called (sessionOf), or null when the client did not say. */
  sessionId: string | null;
  /** The folder the server runs in: the session's project (a pickup checks out there). */
  cwd: string;
  /** The route node this session is, when `sleds engine` started it (SLEDS_ROUTE / SLEDS_NODE): park parks the node. */
  node?: { route: string; node: string } | null;
}

export interface ToolAnswer {
  text: string;
  isError: boolean;
}

const ok = (text: string): ToolAnswer => ({ text, isError: false });
const refuse = (text: string): ToolAnswer => ({ text, isError: true });

/** A refusal the handler raises; its text reaches the model as an error result. */
class Refusal extends Error {}

const taskId = z.string().trim().min(4, 'a task id has at least 4 characters (sleds tasks lists them)').max(64).optional()
  .describe("The task's id (or its first characters). Leave it out to use the task this session works on.");

export const TOOL_INPUTS = {
  intake: z.object({
    title: z.string().trim().min(1, 'a task needs a title').max(500).describe('A short name for the unit of work.'),
    prompt: z.string().max(1_000_000).optional().describe('The full request, when there is more than the title: its size feeds the estimate.'),
    worth: z.string().trim().toLowerCase().min(1).max(30).optional().describe("What finishing it is worth: high, normal or low (the workspace policy's levels). Without one, the dispatcher holds it."),
    type: z.string().trim().toLowerCase().regex(/^[a-z0-9][a-z0-9._-]{0,59}$/, 'a type is one word: letters, digits, - or _ (e.g. bugfix)').optional().describe('The kind of work (bugfix, feature, refactor…): its band comes from past tasks of that kind.'),
    repo: z.string().min(1).optional().describe("The repository's folder; default the session's."),
  }),
  estimate: z.object({
    taskId,
    text: z.string().min(1).max(1_000_000).optional().describe('A request to size that is not a task yet.'),
    type: z.string().trim().toLowerCase().min(1).max(60).optional().describe('The kind of work, when sizing text.'),
    model: z.string().min(1).max(100).optional().describe('The model that would do it (default: the seat’s usual one).'),
    repo: z.string().min(1).optional().describe("The repository's folder, when sizing text."),
  }),
  dispatch: z.object({
    taskId,
    row: z.number().int().min(1).max(999).optional().describe("The picker row to take (from this tool's answer without a row)."),
    verb: z.string().trim().min(1).max(40).optional().describe('A verb instead of a row: Dispatch, Switch, Queue, Hand off, Offer.'),
  }),
  status: z.object({ taskId }),
  handoff: z.object({
    to: z
      .string()
      .trim()
      .regex(/^@?[a-z0-9][a-z0-9._-]*$/i, "a teammate's handle, as .sleds/roster.yml spells it (e.g. dana)")
      .optional()
      .describe("Hand this session to this teammate now: its work, branch and conversation, sealed to them. Only when the person asked for it."),
    now: z.boolean().optional().describe('With no `to`: hand this session now to the owner of the files it changed.'),
    limit: z.number().int().min(1).max(20).optional().describe('Without `to` or `now`: how many recent hand-offs to list (default 5).'),
  }),
  pickup: z.object({
    id: z.string().trim().regex(/^[a-z0-9]{6,64}$/i, "a hand-off id is letters and digits, e.g. jd7k2m9qa45p (it is in the teammate's message)").describe("The hand-off's id."),
    cwd: z.string().min(1).optional().describe('A checkout of the repository to pick it up into; default the folder this server runs in.'),
  }),
  park: z.object({
    taskId,
    question: z.string().trim().min(3, 'the question is empty — say what needs deciding').max(2000).describe('The one thing the person must decide.'),
    options: z
      .tuple([z.string().trim().min(3).max(500), z.string().trim().min(3).max(500)], { message: 'options holds exactly two sentences: [A, B]' })
      .describe('Exactly two answers, A then B, each one sentence saying what it does and its effect on the band (e.g. "Keep the old API: the band stays $4–11").'),
  }),
  ask: z.object({
    question: z.string().trim().min(3, 'the question is empty — say what needs deciding').max(2000).describe('The one thing that needs deciding.'),
    options: z
      .array(z.string().trim().min(3).max(500))
      .min(2, 'options holds 2 to 4 sentences, your recommended one first')
      .max(4, 'options holds 2 to 4 sentences, your recommended one first')
      .describe('2 to 4 answers, YOUR RECOMMENDED ONE FIRST, each one sentence saying what it does (e.g. "Email a CSV link: the export stays small").'),
    reversible: z.boolean().describe('true when the choice is easy to undo later (a default, a name, a layout); false when it is not (a migration, a public API, data sent out).'),
    risk: z.enum(['low', 'high']).optional().describe('high when a wrong choice could hurt users, data, money or security; default low.'),
  }),
  answer: z.object({
    questionId: z.string().trim().min(4).max(64).describe("The parked question's id."),
    choice: z
      .string()
      .refine((s) => parseChoice(s) !== null, { message: `choose ${CHOICES.join(' or ')}` })
      .describe('A or B.'),
  }),
  plan: z.object({
    key: z.string().regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'a route key: lowercase letters, digits and -, e.g. eng-503').describe('The route key: the file is .sleds/routes/<key>.yml and branches are sleds/<key>/<node>.'),
    title: z.string().trim().min(1).max(200).describe('What the whole route delivers.'),
    tracker: z.string().trim().min(1).max(100).optional().describe('The tracker item it is for (ENG-503).'),
    notes: z.string().max(100_000).optional().describe('Notes every node gets in its pack.'),
    nodes: z
      .array(PlanNode)
      .min(1)
      .max(100)
      .describe('The nodes: id (lowercase, digits, -), title, brief (what the agent does, on its own), depends_on (ids of nodes that must merge first), optional harness, model, area.'),
  }),
} as const;

export type ToolName = keyof typeof TOOL_INPUTS;

export const TOOL_DESCRIPTIONS: Record<ToolName, string> = {
  intake: 'Start a sleds task: a unit of work with a title, worth and type, sized before and receipted after. This session works on it from now on.',
  estimate: "The band of a task before it starts: dollars, minutes and how often similar tasks landed in their band — or 'no band yet' with a labelled prior.",
  dispatch: "The dispatcher's picker for a task: one row per seat (this seat's harnesses and models, the overnight batch, teammates) with band, headroom and the wall forecast. Give a row to take it.",
  status: "This seat's usage bars, today's spend, the next wall, and the task this session works on (with any parked question).",
  handoff: "Hand this session to a teammate (give `to`, or `now: true` for the owner of the changed files): its work-in-progress, branch and conversation go to them encrypted and signed, and they resume it with /sled pickup <id>. Without either, lists this seat's hand-offs. Hand off only when the person asks; stop working on the session afterwards.",
  pickup: "Pick up a teammate's hand-off into a checkout here: the work, its branch, and how to resume the session.",
  park: 'Park the task (or, in a route node that sleds engine started, the node) behind one question for the person, with exactly two answers (A and B), each a sentence with its effect on the band. It waits until they answer (from the CLI or a Slack button); stop and end your turn after parking — you are resumed with the answer.',
  plan: 'Write a route: a request too big for one session as nodes an agent can land one at a time, in waves (each node waits for the ones it depends_on to merge). Writes .sleds/routes/<key>.yml in this repository for review; nothing starts until the person arms it (sleds route arm <key>).',
  answer: 'Answer a parked question with A or B: the task is open again and its session carries on with the answer.',
  ask:
    'In a route node that sleds engine started: ask a question you cannot settle yourself, with 2 to 4 options, your recommended option FIRST, and whether the choice is reversible (and its risk). sleds works down a ladder: it looks for the answer in the spec, the route and earlier decisions (and says where it found it); a reversible, low-risk choice takes your first option; otherwise an overnight job asks its on-call and you end your turn (you are resumed with the answer), or the question is parked for a person. Every decision goes into the PR with its reason.',
};

// ---------------------------------------------------------------------------------------------------------------
// Asking musher: each call names a route of the protocol (protocol/routes.ts) and gets its reply, checked.

/** A reply that is not 2xx as one line; a route this musher does not have yet says so. */
function failure(reply: Exclude<ApiReply<RouteName>, { ok: true }>, what: string): string {
  if (reply.kind === 'unreadable') return `sleds: musher answered ${what} with something this version cannot read (HTTP ${reply.status}) — update sleds, then retry`;
  if (reply.status === 404 && /^no route /.test(reply.error)) return `sleds: ${what} is not available in this version of musher — update sleds and restart musher ('sleds musher stop')`;
  return `sleds: ${reply.error}`;
}

/** Route `name`'s reply, or a Refusal saying why there is none. */
async function ask<N extends RouteName>(api: MusherApi, name: N, input: RouteInput<N>, what: string): Promise<RouteReply<N>> {
  const reply = await api.call(name, input);
  if (!reply.ok) throw new Refusal(failure(reply, what));
  return reply.body;
}

/** Rows listed in the dispatch answer (the rest: `sleds pick`). */
const MAX_ROWS = 8;

/** The task a tool works on: the one named, else the calling session's. */
async function taskFor(ctx: ToolContext, given: string | undefined): Promise<Task> {
  if (given) return (await ask(ctx.api, 'task', { params: { id: given } }, 'tasks')).task;
  if (!ctx.sessionId) throw new Refusal('sleds: no task given and the client did not say which session calls — pass taskId (sleds tasks lists them; intake starts one)');
  const task = (await ask(ctx.api, 'sessionTask', { params: { id: ctx.sessionId } }, "a session's task")).task;
  if (!task) throw new Refusal('sleds: this session has no task yet — call intake with a title first, or pass taskId');
  return task;
}

function describeTask(t: Task): string {
  return `task ${t.id} "${t.title}" (${t.state}; worth ${t.worth ?? 'not set'}; type ${t.type ?? 'not set'})`;
}

// ---------------------------------------------------------------------------------------------------------------
// The handlers.

type Handlers = { [K in ToolName]: (args: z.infer<(typeof TOOL_INPUTS)[K]>, ctx: ToolContext) => Promise<string> };

const HANDLERS: Handlers = {
  async intake(args, ctx) {
    const { task } = await ask(
      ctx.api,
      'taskCreate',
      { body: { title: args.title, prompt: args.prompt, worth: args.worth === 'none' ? null : args.worth, type: args.type, repo: args.repo, source: 'mcp', ...(ctx.sessionId ? { sessionId: ctx.sessionId } : {}) } },
      'task intake',
    );
    const parts = [`Started ${describeTask(task)}${ctx.sessionId ? '; this session works on it now' : ''}.`];
    // The band at once, when this musher sizes tasks; intake stands without it.
    const band = await ctx.api.call('estimate', { body: { taskId: task.id } }).catch(() => null);
    if (band?.ok && band.status === 200) parts.push(`Estimate: ${band.body.text}`);
    if (!task.worth) parts.push('It has no worth yet, so the dispatcher holds it: give one with /sled worth high|normal|low.');
    return parts.join(' ');
  },

  async estimate(args, ctx) {
    const task = args.taskId || !args.text ? await taskFor(ctx, args.taskId) : null;
    const { text } = await ask(
      ctx.api,
      'estimate',
      { body: task ? { taskId: task.id, type: args.type, model: args.model } : { text: args.text, type: args.type, model: args.model, repo: args.repo } },
      'the estimate',
    );
    return task ? `Estimate for ${describeTask(task)}: ${text}` : `Estimate: ${text}`;
  },

  async dispatch(args, ctx) {
    const task = await taskFor(ctx, args.taskId);
    if (args.row === undefined && args.verb === undefined) {
      const picker = await ask(ctx.api, 'picker', { params: { id: task.id } }, 'the picker');
      const extra = [picker.wallLine, picker.held ? `Held: ${picker.held}.` : null].filter((x): x is string => !!x && !picker.text.includes(x.replace(/^Held: |\.$/g, '')));
      const rows = picker.rows
        .slice(0, MAX_ROWS)
        .map((r) => `${r.index}: ${[r.seat, r.harness, r.model].filter(Boolean).join(' · ')} — ${r.bandText} → ${r.verb}${r.reason && !(picker.held && r.reason.includes(picker.held)) ? ` (${r.reason})` : ''}`);
      const more = picker.rows.length > MAX_ROWS ? ` (${picker.rows.length - MAX_ROWS} more: sleds pick ${task.id})` : '';
      return [`Picker for ${describeTask(task)}: ${picker.text}`, ...extra, `Rows — ${rows.join('; ')}${more}.`, picker.held ? 'Every row waits for a worth: /sled worth high|normal|low, then dispatch a row.' : 'Call dispatch with row <n> to take that row.'].join(' ');
    }
    // The tool's verb is free text; musher checks it against the picker's verbs (and says which ones it takes).
    const body = (args.row !== undefined ? { row: args.row } : { verb: args.verb }) as RouteInput<'dispatch'>['body'];
    const r = await ask(ctx.api, 'dispatch', { params: { id: task.id }, body }, 'dispatch');
    if (!r.ok) throw new Refusal(r.line);
    return r.line;
  },

  async status(args, ctx) {
    const snapshot = await ask(ctx.api, 'status', {}, 'status');
    const parts = [renderStatusCard(snapshot, ctx.sessionId)];
    const task = await taskFor(ctx, args.taskId).catch((e: unknown) => {
      if (e instanceof Refusal && !args.taskId) return null; // no task in this session: the seat's status alone
      throw e;
    });
    if (task) {
      parts.push(`This session works on ${describeTask(task)}.`);
      const { questions } = await ask(ctx.api, 'questions', { query: { task: task.id, state: 'open' } }, 'parked questions');
      for (const q of questions) {
        parts.push(`It waits on question ${q.id}: ${q.question} (A: ${q.options[0]} B: ${q.options[1]}) — /sled answer ${q.id} A|B.`);
      }
    }
    return parts.join('\n');
  },

  async handoff(args, ctx) {
    if (args.to || args.now) {
      if (!ctx.sessionId) throw new Refusal('sleds handoff: the client did not say which session calls — in a terminal, type /sled handoff <teammate> in the session instead');
      const r = await ask(ctx.api, 'handOff', { body: { sessionId: ctx.sessionId, ...(args.to ? { to: args.to } : {}) } }, 'the hand-off');
      return renderHandOffForTool(r);
    }
    const rows = (await ask(ctx.api, 'handoffs', {}, 'hand-offs')).handoffs.slice(0, args.limit ?? 5);
    const how = "To hand this session to a teammate, call this tool with `to` (or the person types /sled handoff <teammate>); it seals the work and the conversation for them, and they run /sled pickup <id> or this server's pickup tool.";
    if (rows.length === 0) return `No hand-offs sent or received on this seat yet. ${how}`;
    const list = rows.map((h) => `${h.id} ${h.direction === 'sent' ? `to ${h.peer}` : `from ${h.peer}`} (${h.state.replace('_', ' ')}${h.pickedUpBy ? ` by ${h.pickedUpBy}` : ''})`);
    return `Hand-offs, newest first: ${list.join('; ')}. ${how}`;
  },

  async pickup(args, ctx) {
    const r = (await ask(ctx.api, 'pickup', { body: { id: args.id.toLowerCase(), cwd: args.cwd ?? ctx.cwd } }, 'pickup')).received;
    if (!r) throw new Refusal(`sleds: hand-off ${args.id} was not picked up — sleds handoffs shows its state`);
    const branch = r.branch ? ` on branch ${r.branch}` : '';
    const note = r.note ? ` ${r.note}` : '';
    return `Picked up hand-off ${r.id} from ${r.peer}${branch}.${note} Run ${shellLine(['sleds', 'pickup', r.id])} in a terminal to resume its ${r.harness === 'codex' ? 'Codex' : 'Claude Code'} session there.`;
  },

  async park(args, ctx) {
    // A route node's agent (no task of its own): the node waits for the answer, its siblings go on.
    if (ctx.node && !args.taskId) return (await ask(ctx.api, 'routePark', { body: { route: ctx.node.route, node: ctx.node.node, question: args.question, options: args.options } }, 'route questions')).text;
    const task = await taskFor(ctx, args.taskId);
    const r = await ask(ctx.api, 'park', { params: { id: task.id }, body: { question: args.question, options: args.options, ...(ctx.sessionId ? { sessionId: ctx.sessionId } : {}) } }, 'parked questions');
    return r.text;
  },

  async ask(args, ctx) {
    if (!ctx.node) throw new Refusal('sleds ask: this session is not a route node sleds engine started (no SLEDS_ROUTE / SLEDS_NODE) — in your own session, park the question with the park tool');
    const r = await ask(ctx.api, 'routeAsk', { body: { route: ctx.node.route, node: ctx.node.node, question: args.question, options: args.options, reversible: args.reversible, ...(args.risk ? { risk: args.risk } : {}) } }, 'route questions');
    return r.text;
  },

  async plan(args, ctx) {
    const r = await ask(ctx.api, 'routePlan', { body: { cwd: ctx.cwd, ...args } }, 'routes');
    const waves = r.waves.map((w, i) => `wave ${i}: ${w.join(', ')}`).join('; ');
    return `Wrote ${r.file} (${waves}). Nothing starts yet: the person reviews it, then runs sleds route arm ${r.key} (and sleds start ${r.key}/<node> in approve mode).`;
  },

  async answer(args, ctx) {
    const choice = parseChoice(args.choice);
    if (!choice) throw new Refusal(`sleds answer: choice: choose ${CHOICES.join(' or ')}`);
    const r = await ask(ctx.api, 'answer', { params: { id: args.questionId }, body: { choice, by: 'tool' } }, 'parked questions');
    return `${r.text.replace(/^sled: /, '')} The session that asked gets the answer with its next prompt.`;
  },
};

/** Runs one tool: arguments checked against its schema, musher asked, the answer (or what to fix) returned. */
export async function runTool(name: ToolName, rawArgs: unknown, ctx: ToolContext): Promise<ToolAnswer> {
  const parsed = TOOL_INPUTS[name].safeParse(rawArgs ?? {});
  if (!parsed.success) return refuse(`sleds ${name}: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'arguments'}: ${i.message}`).join('; ')}`);
  try {
    const handler = HANDLERS[name] as (args: unknown, ctx: ToolContext) => Promise<string>;
    return ok(await handler(parsed.data, ctx));
  } catch (e) {
    if (e instanceof Refusal || e instanceof MusherAway) return refuse(e.message);
    return refuse(`sleds ${name} failed: ${(e as Error).message} — retry, and run 'sleds doctor' if it keeps failing`);
  }
}
