/**
 * The contract between musher and its clients (protocol/routes.ts), held to a real musher: every route in the table
 * is called through the one client (protocol/client) and its reply parses by the route's schema; and the table is
 * held to the server: musher/server.ts dispatches from the table to one handler per route (musher/api/handlers.ts),
 * so a route answered outside the table, or a table entry with no handler, fails here.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { musherClient, type CallResult, type MusherClient } from '../../protocol/client/client.js';
import { ROUTES, patternOf, routeOf, type RouteInput, type RouteName, type RouteSpec } from '../../protocol/routes.js';
import { ErrorBody } from '../../protocol/schemas.js';
import { HANDLERS, type RouteHandlers } from '../../musher/api/handlers.js';
import { matchRoute } from '../../musher/api/match.js';
import { REPO_ROOT, sleds, startMusher, waitFor, type SledsWorld } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';
import { writeSledsConfig } from '../support/sleds-config.js';
import { limitAhead } from '../support/limit-ahead.js';
import { handoffTeam, hookIn, writeTranscript } from '../support/handoff-team.js';

const newWorld = useWorlds({ SLEDS_NO_AUTOSTART: '1', SLEDS_SEAT: 'dana' });

const SERVER_SOURCE = readFileSync(join(REPO_ROOT, 'musher', 'server.ts'), 'utf8');
const TABLE = Object.entries(ROUTES) as Array<[RouteName, RouteSpec]>;
/** A concrete path for each entry: its parameters filled in. */
const SAMPLES = TABLE.map(([name, spec]) => ({ name, method: spec.method, path: spec.path.replace(/:[A-Za-z]+/g, 'x1') }));

/** Paths spelt by hand in a file: `'/v1/…'` literals and `/^\/v1…$/` route regexes. */
function handRoutes(source: string): string[] {
  return [...source.matchAll(/'(\/v1\/[^']*)'/g), ...source.matchAll(/\/\^(\\\/v1[^\n]*?)\$\//g)].map((m) => m[1]!);
}

describe('the route table and the server', () => {
  it('the server routes nothing by hand: musher/server.ts and musher/api/ name no path, they dispatch from the table', () => {
    const files = ['server.ts', ...readdirSync(join(REPO_ROOT, 'musher', 'api')).map((f) => join('api', f))];
    expect(files).toContain(join('api', 'handlers.ts'));
    for (const f of files) expect(handRoutes(readFileSync(join(REPO_ROOT, 'musher', f), 'utf8')), `musher/${f}`).toEqual([]);
    expect(SERVER_SOURCE).toMatch(/matchRoute\(/);
  });

  it('every route of the table has a handler in musher/api/handlers.ts, and every handler a route', () => {
    expect(Object.keys(HANDLERS).sort()).toEqual(TABLE.map(([name]) => name).sort());
  });

  it('the handler map is typed from the table: a route left out, or a handler for no route, does not compile', () => {
    const { hook, ...withoutHook } = HANDLERS;
    // @ts-expect-error a route of the table without its handler
    const missing: RouteHandlers = withoutHook;
    // @ts-expect-error a handler for a route the table does not have
    const extra = { ...HANDLERS, notARoute: hook } satisfies RouteHandlers;
    expect(Object.keys(missing)).not.toContain('hook');
    expect(Object.keys(extra)).toContain('notARoute');
  });

  it("a request is matched to its route with the route's parameters, decoded", () => {
    expect(matchRoute('POST', '/v1/tasks/a%20b/park')).toEqual({ name: 'park', params: { id: 'a b' }, rawParams: { id: 'a%20b' } });
    expect(matchRoute('GET', '/v1/hook/SessionStart')).toBeNull();
    expect(matchRoute('POST', '/v1/hook/SessionStart')?.params).toEqual({ event: 'SessionStart' });
    expect(matchRoute('GET', '/v1/health')).toEqual({ name: 'health', params: {}, rawParams: {} });
  });

  it('no two entries claim the same method and path', () => {
    const claimed = SAMPLES.map((s) => `${s.method} ${s.path}`);
    expect(claimed.filter((c, i) => claimed.indexOf(c) !== i)).toEqual([]);
    for (const s of SAMPLES) expect(routeOf(s.method, s.path)).toBe(s.name);
  });

  it('a path pattern matches its own parameters and nothing deeper', () => {
    expect(patternOf('/v1/tasks/:id').test('/v1/tasks/k3m9x2qa')).toBe(true);
    expect(patternOf('/v1/tasks/:id').test('/v1/tasks/k3m9x2qa/park')).toBe(false);
  });
});

/** Calls route `name` and holds its reply to the table: the success schema, or the `{error}` of a refusal. */
async function held<N extends RouteName>(client: MusherClient, name: N, input: RouteInput<N>, expectStatus: number, seen: Map<RouteName, number>): Promise<CallResult<N>> {
  const r = await client.call(name, input, { timeoutMs: 30_000 });
  if (!r.ok && r.kind !== 'refused') throw new Error(`${name}: ${r.kind} — ${'reason' in r ? r.reason : ''}`);
  expect({ name, status: r.status }, r.ok ? undefined : r.error).toEqual({ name, status: expectStatus });
  if (!r.ok) {
    expect(ErrorBody.safeParse(r.body).success).toBe(true);
    // A refusal of the route's own, never the server's "no route" for a table entry it does not have.
    expect(r.error).not.toMatch(/^no route /);
  }
  seen.set(name, r.status);
  return r;
}

function must<N extends RouteName>(r: CallResult<N>): Extract<CallResult<N>, { ok: true }>['body'] {
  if (!r.ok) throw new Error(`expected a reply, got ${r.kind}`);
  return r.body;
}

/** Routes the one-seat world reaches only as a refusal: a hand-off needs a roster and a remote (the team below). */
const REFUSED_ONLY: RouteName[] = ['handOff', 'handoffsPrune', 'pickup'];
/** An answer needs a node that asks, and parking a node at work (tests/integration/engine.test.ts does both): here they are refused. */
const ANSWER_REFUSED: RouteName[] = ['routeAnswer', 'routePark', 'routeAsk', 'queueResume'];
/** A route drafted from a tracker item reads it from GitHub (tests/integration/route-from-item.test.ts): here, with no token, it is refused. */
const NEEDS_GITHUB: RouteName[] = ['routeNew'];

describe('a real musher answers every route as the table says', { timeout: 120_000 }, () => {
  it('each reply parses by its route schema', async () => {
    const w: SledsWorld = newWorld();
    // `go` gives the command to run, not runs it: any claude will do.
    writeSledsConfig(w, { binaries: { claude: process.execPath } });
    // A platform key (never sent anywhere here): musher starts its gateway, so a gateway token can be minted.
    expect((await sleds(w, ['key', 'set', 'anthropic'], 'sk-ant-api03-CONTRACT-test-key-0001\n')).code).toBe(0);
    await startMusher(w);
    const client = musherClient({ socketPath: w.socket });
    const seen = new Map<RouteName, number>();
    const SESSION = '1098c2f4-aaaa-bbbb-cccc-0000000000c1';
    const LIMIT = limitAhead();
    const hookBody = (event: string, more: Record<string, unknown>) => ({ session_id: SESSION, cwd: '/tmp', hook_event_name: event, ...more });

    await held(client, 'health', {}, 200, seen);
    await held(client, 'hook', { params: { event: 'SessionStart' }, body: hookBody('SessionStart', { source: 'startup', model: 'claude-opus-5-5' }) }, 200, seen);
    const line = must(await held(client, 'statusline', { body: { session_id: SESSION, model: { id: 'claude-opus-5-5', display_name: 'Opus' }, workspace: { current_dir: '/tmp' } } }, 200, seen));
    expect(typeof line).toBe('string');

    // A wall, and the snapshot taken at it.
    await held(client, 'hook', { params: { event: 'StopFailure' }, body: hookBody('StopFailure', { error: 'rate_limit', last_assistant_message: LIMIT.message }) }, 200, seen);
    const wallId = await waitFor('the wall to open', async () => {
      const s = await client.call('status', {});
      return s.ok ? s.body.wallBook[0]?.wallId : null;
    });
    const snapshotId = await waitFor('the snapshot', async () => {
      const s = await client.call('status', {});
      return s.ok ? s.body.wallBook[0]?.snapshotId : null;
    });
    await held(client, 'status', {}, 200, seen);
    await held(client, 'usagePoller', {}, 200, seen);
    await held(client, 'walls', {}, 200, seen);
    await held(client, 'bars', {}, 200, seen);
    expect(must(await held(client, 'wall', { params: { id: wallId } }, 200, seen)).wall.wallId).toBe(wallId);
    await held(client, 'wallExplain', { params: { id: wallId } }, 200, seen);
    // Go runs the chosen continue (exit 1) on the platform key, in this terminal.
    await held(client, 'hook', { params: { event: 'UserPromptSubmit' }, body: hookBody('UserPromptSubmit', { prompt: '/sled 1' }) }, 200, seen);
    expect(must(await held(client, 'wallGo', { params: { id: wallId }, body: {} }, 200, seen)).cmd.args.length).toBeGreaterThan(0);
    expect(must(await held(client, 'snapshots', {}, 200, seen)).snapshots.map((s) => s.id)).toContain(snapshotId);
    await held(client, 'snapshot', { params: { id: snapshotId } }, 200, seen);

    // A task's life: intake, worth, estimate, picker, dispatch, a parked question and its answer, done, its receipt.
    const task = must(await held(client, 'taskCreate', { body: { title: 'Fix the login test', sessionId: 'contract-sess-2' } }, 201, seen)).task;
    await held(client, 'tasks', { query: { state: 'open' } }, 200, seen);
    await held(client, 'task', { params: { id: task.id } }, 200, seen);
    await held(client, 'taskUpdate', { params: { id: task.id }, body: { worth: 'high' } }, 200, seen);
    await held(client, 'estimate', { body: { taskId: task.id } }, 200, seen);
    await held(client, 'picker', { params: { id: task.id } }, 200, seen);
    await held(client, 'dispatch', { params: { id: task.id }, body: { verb: 'Queue' } }, 200, seen);
    const parked = must(await held(client, 'park', { params: { id: task.id }, body: { question: 'Keep the old API?', options: ['Keep it: the band stays', 'Drop it: smaller band'] } }, 201, seen));
    await held(client, 'questions', { query: { task: task.id, state: 'open' } }, 200, seen);
    await held(client, 'question', { params: { id: parked.question.id } }, 200, seen);
    await held(client, 'sessionTask', { params: { id: 'contract-sess-2' } }, 200, seen);
    await held(client, 'answer', { params: { id: parked.question.id }, body: { choice: 'A' } }, 200, seen);
    const done = must(await held(client, 'taskDone', { params: { id: task.id }, body: {} }, 200, seen));
    await held(client, 'receipts', {}, 200, seen);
    await held(client, 'receipt', { params: { id: done.receipt.body.id } }, 200, seen);

    // A job scheduled and cancelled.
    const job = must(await held(client, 'jobCreate', { body: { kind: 'hold', when: '+2h', payload: { harness: 'claude-code', sessionId: SESSION, cwd: '/tmp', prompt: 'continue' } } }, 201, seen)).job;
    await held(client, 'jobs', {}, 200, seen);
    await held(client, 'jobCancel', { params: { id: job.id }, body: {} }, 200, seen);

    // GitHub and the tracker answer with an empty round (no checkout on GitHub, no tracker configured); what this
    // world has not set up (a roster, a hand-off remote) refuses in one line.
    await held(client, 'githubWatch', { body: {} }, 200, seen);
    await held(client, 'trackerPoll', { body: {} }, 200, seen);
    await held(client, 'tracker', {}, 200, seen);
    await waitFor('the gateway', async () => {
      const g = await client.call('gateway', {});
      return g.ok && g.body.running;
    });
    await held(client, 'gateway', {}, 200, seen);
    // A tier the gateway does not sell is refused in one line; the half-price tier is minted and said in the reply.
    const badTier = await held(client, 'gatewayToken', { body: { sessionId: SESSION, tier: 'nightly' as 'batch' } }, 400, seen);
    expect(!badTier.ok && badTier.kind === 'refused' ? badTier.error : '').toMatch(/^tier: .* — send \{sessionId, .*tier\?: standard\|batch\}$/);
    const night = must(await held(client, 'gatewayToken', { body: { sessionId: SESSION, tier: 'batch' } }, 200, seen));
    expect(night.tier).toBe('batch');
    // A harness on the batch tier is told to wait through minutes of a silent stream.
    expect(night.claudeEnv).toMatchObject({ CLAUDE_STREAM_IDLE_TIMEOUT_MS: '1800000', API_FORCE_IDLE_TIMEOUT: '0' });
    const day = must(await held(client, 'gatewayToken', { body: { sessionId: SESSION } }, 200, seen));
    expect(day.tier).toBe('standard');
    expect(day.claudeEnv.CLAUDE_STREAM_IDLE_TIMEOUT_MS).toBeUndefined();
    await held(client, 'handoffs', {}, 200, seen);
    await held(client, 'handOff', { body: { sessionId: SESSION, to: 'sam' } }, 409, seen);
    await held(client, 'handoffsPrune', { body: { cwd: '/tmp' } }, 409, seen);
    await held(client, 'pickup', { body: { id: 'jd7k2m9qa45p', cwd: '/tmp' } }, 409, seen);

    // A route (issue 14): a repository with one route file, loaded, shown, armed, put in auto, a node started.
    const repo = join(w.home, 'route-repo');
    mkdirSync(join(repo, '.sleds', 'routes'), { recursive: true });
    execFileSync('git', ['init', '-q', repo]);
    writeFileSync(join(repo, '.sleds', 'routes', 'eng-503.yml'), 'title: Exports\nnodes:\n  - id: schema\n    brief: a table\n  - id: mailer\n    brief: mail\n    depends_on: [schema]\n  - id: nightly\n    overnight: true\n    brief: by night\n');
    expect(must(await held(client, 'routeLoad', { body: { cwd: repo } }, 200, seen)).loaded).toEqual(['eng-503']);
    await held(client, 'routes', {}, 200, seen);
    expect(must(await held(client, 'route', { params: { key: 'eng-503' } }, 200, seen)).waves.map((wave) => wave.map((n) => n.nodeId))).toEqual([['schema', 'nightly'], ['mailer']]);
    await held(client, 'routeArm', { params: { key: 'eng-503' }, body: {} }, 200, seen);
    await held(client, 'routeMode', { params: { key: 'eng-503' }, body: { mode: 'auto' } }, 200, seen);
    await held(client, 'routeStart', { body: { node: 'mailer' } }, 200, seen);
    // mailer asks nothing: an answer to it is refused (the engine's test answers a node that asks).
    await held(client, 'routeAnswer', { body: { node: 'eng-503/mailer', answer: 'a link' } }, 409, seen);
    // Only a node at work parks a question (its agent, from the session the engine started).
    await held(client, 'routePark', { body: { route: 'eng-503', node: 'mailer', question: 'File or link?', options: ['A file: band stays', 'A link: band grows'] } }, 409, seen);
    // The same for the ladder's ask (tests/integration/engine-ladder.test.ts asks from a node at work).
    await held(client, 'routeAsk', { body: { route: 'eng-503', node: 'mailer', question: 'File or link?', options: ['A file: band stays', 'A link: band grows', 'Both: band doubles'], reversible: false, risk: 'high' } }, 409, seen);
    // The task's question was answered above: nothing waits.
    expect(must(await held(client, 'needs', {}, 200, seen)).needs).toEqual([]);
    await held(client, 'routeDecisions', { params: { key: 'eng-503' } }, 200, seen);
    // The overnight queue (issue 15): the route's overnight node, then cancelled. (The task queued above names no
    // repository to run in: its Queue was refused, and nothing of it is listed.)
    expect(must(await held(client, 'queue', {}, 200, seen)).jobs.map((j) => j.kind === 'route-node' ? j.job : j.kind)).toEqual(['eng-503/nightly']);
    await held(client, 'queueCancel', { body: { job: 'eng-503/nightly' } }, 200, seen);
    // Nothing was delivered overnight: resume says so (the engine's tests resume a delivered job).
    await held(client, 'queueResume', { body: { cwd: repo } }, 404, seen);
    // The morning digest (issue 15 § 7): the repository's last night; its one overnight job was cancelled before it.
    const digest = must(await held(client, 'digest', {}, 200, seen)).digests;
    expect(digest.map((d) => [d.repoRoot.endsWith('route-repo'), d.channel, d.header.replace(/^\d\d:\d\d /, '')])).toEqual([[true, null, 'digest · 0 delivered · 0 waiting · 0 at a wall']]);
    await held(client, 'routePlan', { body: { cwd: repo, key: 'eng-600', title: 'Planned', nodes: [{ id: 'one', brief: 'do one' }] } }, 200, seen);
    await held(client, 'routeNew', { body: { cwd: repo, key: 'eng-601', from: 'acme/app#12' } }, 503, seen);

    // The ccusage-style report over what this musher has seen (issue 16 § 3).
    expect(must(await held(client, 'report', { query: { period: 'daily', by: 'model' } }, 200, seen)).period).toBe('daily');

    await held(client, 'shutdown', {}, 200, seen);

    // Every entry was called; all but the few this world cannot set up answered with their success reply.
    expect(TABLE.map(([n]) => n).filter((n) => !seen.has(n))).toEqual([]);
    expect([...seen].filter(([, status]) => status >= 300).map(([n]) => n).sort()).toEqual([...REFUSED_ONLY, ...ANSWER_REFUSED, ...NEEDS_GITHUB].sort());
  });
});

describe('a team answers the hand-off routes as the table says', { timeout: 120_000 }, () => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('sam hands a session to dana, dana picks it up and prunes: each reply parses by its route schema', async () => {
    const t = await handoffTeam([{ handle: 'sam', name: 'Sam' }, { handle: 'dana', name: 'Dana' }], cleanups);
    const [sam, dana] = t.seats as [SledsWorld, SledsWorld];
    expect((await sleds(dana, ['keys', 'trust', 'sam', '--yes', '--json'], undefined, {}, t.b)).code).toBe(0);
    const seen = new Map<RouteName, number>();
    const sessionId = '3c1e5f7a-2b4d-4e6f-8a1c-5d7e9f0a1b2d';
    const tx = join(sam.claudeDir, 'projects', t.a.replace(/[^A-Za-z0-9]/g, '-'), `${sessionId}.jsonl`);
    writeTranscript(tx, sessionId, t.a, 'fix the cart total');
    await hookIn(sam, 'UserPromptSubmit', sessionId, t.a, { prompt: 'fix the cart total', transcript_path: tx });

    const sent = must(await held(musherClient({ socketPath: sam.socket }), 'handOff', { body: { sessionId, to: '@Dana' } }, 200, seen));
    expect(sent.id).toMatch(/^[2-9a-km-np-z]{12}$/);
    const picked = must(await held(musherClient({ socketPath: dana.socket }), 'pickup', { body: { id: sent.id!, cwd: t.b } }, 200, seen));
    expect(picked.received?.peer).toBe('sam');
    await held(musherClient({ socketPath: dana.socket }), 'handoffsPrune', { body: { cwd: t.b } }, 200, seen);
    expect([...seen.keys()].sort()).toEqual([...REFUSED_ONLY].sort());
  });
});
