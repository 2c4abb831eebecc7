/**
 * Issue 15's first acceptance, end to end: `sleds engine` (the real CLI) runs a route's overnight nodes with the REAL
 * claude, through musher's gateway on the half-price tier, against a fake Anthropic API that answers only as Message
 * Batches (create, poll, results as JSONL). The window is the repository's policy made to cover the real "now" (the
 * `sleds engine` process reads the wall clock; the engine's clock is injected only in-process, see
 * tests/integration/engine-overnight.test.ts for the window's edges on a test clock).
 *
 * The first job: claude writes its file through its own tool and gets ordinary answers; musher is killed (kill -9)
 * while claude waits on a batch, and claude's retry reaches the musher that comes back, which follows the batch already
 * sent (no second batch, nothing billed twice); its spend is half the standard price. The second job, its cap below
 * what one answer costs, is stopped by the cap with its state kept (WAITING_FOR_LIMIT, session and worktree), and
 * `sleds queue --json` shows its spend and the capped line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { priceUsage } from '../../core/pricing.js';
import { ensureClaudeBinary, makeClaudeHome, startFakeAnthropic, waitFor, type RecordedRequest } from './harness/index.js';
import { startFakeGithub } from '../support/fake-github.js';
import { AGENT_GIT_IDENTITY, git, routeRepo } from '../support/route-repo.js';
import { writeSledsConfig } from '../support/sleds-config.js';
import { prices } from '../support/gateway-world.js';
import { CLI, musherPid, processGone, sleds, startMusher, type SledsWorld } from '../support/sleds-env.js';
import { openStore } from '../../musher/store/db.js';
import { RouteStore } from '../../musher/engine/route-store.js';

const TOKEN = 'ghp_e2e_night_token';
const PLATFORM_KEY = 'sk-ant-api03-E2E-NIGHT-PLATFORM-KEY-0123456789abcdef';
const SLUG = 'acme/shop';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

// Every answer: 100k input and 30k output tokens of claude-opus-5-5, $1.00 at the standard price, $0.50 as a batch.
const USAGE = { input_tokens: 100_000, output_tokens: 30_000, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
const ROUTE = `title: Night chores
nodes:
  - id: first
    title: First chore
    overnight: true
    model: claude-opus-5-5
    band: { low_usd: 0.2, high_usd: 4, low_min: 1, high_min: 30, confidence: 0.5 }
    brief: Write first.txt.
  - id: second
    title: Second chore
    overnight: true
    cap: $0.40
    model: claude-opus-5-5
    depends_on: [first]
    band: { low_usd: 0.1, high_usd: 0.6, low_min: 1, high_min: 30, confidence: 0.5 }
    brief: Write second.txt.
`;

const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
const nodeOf = (text: string) => /\(node ([a-z0-9-]+) of route night/.exec(text)?.[1] ?? null;
function lastUser(body: { messages?: Array<{ role: string; content: unknown }> }): Array<Record<string, unknown>> {
  const content = (body.messages ?? []).filter((m) => m.role === 'user').at(-1)?.content;
  return Array.isArray(content) ? (content as Array<Record<string, unknown>>) : [{ type: 'text', text: String(content ?? '') }];
}

type Queue = { jobs: Array<{ job: string; state: string; capMicros: number | null; spentMicros: number; note: string | null; log: string[] }> };

describe('the night, end to end with the real claude and the engine', { timeout: 300_000 }, () => {
  it('an overnight job runs through the batch route (ordinary answers, half price, a crash billed once); a second one is stopped by its cap with its state kept', async () => {
    const claudeBin = await ensureClaudeBinary();
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'sl-e2e-night-')));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const now = Date.now();
    const { bare, repo } = routeRepo(root, {
      '.sleds/routes/night.yml': ROUTE,
      // Tonight's window around now (UTC), a policy cap above the first job's cost, one job at a time.
      '.sleds/policy.yml': `engine:\n  mode: auto\n  harness: claude-code\n  concurrency: 1\n  verify:\n    test: node check.mjs\novernight:\n  from: "${hhmm(now - 3_600_000)}"\n  to: "${hhmm(now + 3 * 3_600_000)}"\n  time_zone: UTC\n  cap: $5\n  concurrency: 1\n`,
      'check.mjs': "console.log('1 passing');\n",
    });
    const gh = await startFakeGithub({ token: TOKEN });
    cleanups.push(() => gh.close());
    gh.createRepo(SLUG);
    gh.linkRemote(SLUG, bare);

    // The model, as Message Batches only: each node's agent writes its file through its Write tool, then says it is done.
    let firstHeld = true;
    let secondHeld = true;
    const anthropic = await startFakeAnthropic({
      usage: USAGE,
      reply: (req: RecordedRequest) => {
        const all = JSON.stringify(req.body);
        const cwd = /Primary working directory: ([^\s\\]+)/.exec(all)?.[1] ?? '';
        const node = nodeOf(all);
        const results = lastUser(req.body as never).filter((b) => b.type === 'tool_result');
        if (results.length > 0) return `Done: ${node}.txt is written.`;
        return [{ type: 'tool_use', name: 'Write', input: { file_path: join(cwd, `${node}.txt`), content: `${node} done overnight\n` } }];
      },
    });
    cleanups.push(() => anthropic.close());
    const batchNode = (b: { created: RecordedRequest }) => nodeOf(JSON.stringify(b.created.body));
    const answersTo = (b: { created: RecordedRequest }) => JSON.stringify(b.created.body).includes('"tool_result"');
    // The first job's first batch stays in progress until the test has killed and restarted musher; the second job's
    // answer after its tool call, until the cap has stopped it.
    anthropic.setBatchBehaviour({
      endWhen: (b) => {
        if (batchNode(b) === 'first' && !answersTo(b)) return !firstHeld;
        if (batchNode(b) === 'second' && answersTo(b)) return !secondHeld;
        return true;
      },
    });

    const claudeHome = await makeClaudeHome({ mode: 'apiKey', fakeUrl: 'http://127.0.0.1:9', cwd: repo });
    cleanups.push(() => claudeHome.cleanup());
    const sledsHome = join(root, 's');
    mkdirSync(join(sledsHome, 'config'), { recursive: true });
    const env: Record<string, string> = {
      ...claudeHome.env,
      SLEDS_HOME: sledsHome,
      SLEDS_KEYRING: 'file',
      SLEDS_SEAT: 'dana',
      TZ: 'UTC',
      // Claude Code's own retries as a user has them (the test home turns them off): its dropped request is sent
      // again to the musher that comes back.
      CLAUDE_CODE_MAX_RETRIES: '10',
      ...AGENT_GIT_IDENTITY,
    };
    // The home's own ANTHROPIC_API_KEY stays in the environment, as in a user's shell: the node's claude sends it beside
    // the night tier's ANTHROPIC_AUTH_TOKEN, and the gateway goes by the token.
    expect(env.ANTHROPIC_API_KEY).toBeTruthy();
    const world: SledsWorld = { root, home: claudeHome.home, sledsHome, claudeDir: join(claudeHome.home, '.claude'), env, socket: join(sledsHome, 'run', 'musher.sock'), logFile: join(sledsHome, 'state', 'musher.log'), spoolDir: join(sledsHome, 'state', 'spool') };
    writeSledsConfig(world, {
      upstreams: { github: gh.apiUrl, anthropic: anthropic.url },
      binaries: { claude: claudeBin },
      gateway: { batchPollMs: 100, batchMaxPollMs: 200, batchKeepaliveMs: 100 },
    });
    cleanups.push(async () => void (await sleds(world, ['musher', 'stop'])));
    expect((await sleds(world, ['github', 'set-token'], TOKEN)).code).toBe(0);
    expect((await sleds(world, ['key', 'set', 'anthropic'], PLATFORM_KEY)).code).toBe(0);
    await startMusher(world);
    const loaded = await sleds(world, ['route', 'load', '--json'], undefined, {}, repo);
    expect(loaded.code, loaded.stderr + loaded.stdout).toBe(0);
    expect((await sleds(world, ['route', 'arm', 'night', '--json'], undefined, {}, repo)).code).toBe(0);

    const db = openStore(join(sledsHome, 'data', 'sleds.db'));
    cleanups.push(() => void db.close());
    const store = new RouteStore(db, { now: () => Date.now() });
    const node = (id: string) => store.node('night', id);
    const states = () => store.nodes('night').map((n) => `${n.nodeId}=${n.run.state}${n.run.problem ? ` (${n.run.problem})` : ''}${n.lastError ? ` [${n.lastError}]` : ''}`).join(', ');
    let output = '';
    const engine: ChildProcess = spawn(process.execPath, [...CLI, 'engine', '--every', '1s'], { env, cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
    engine.stdout!.on('data', (d) => (output += d));
    engine.stderr!.on('data', (d) => (output += d));
    cleanups.push(() => void (engine.exitCode === null && engine.kill('SIGKILL')));
    const musherLog = () => (existsSync(world.logFile) ? readFileSync(world.logFile, 'utf8') : '');
    const until = <T>(what: string, cond: () => T | null | undefined | false, timeoutMs = 120_000) =>
      waitFor(cond, { timeoutMs, intervalMs: 200, description: what, onTimeout: () => `${states()}\n${output.slice(-3000)}\n${musherLog().slice(-3000)}` });

    // The first job starts in the window, on the batch tier: its first request is a Message Batch, held in progress.
    await until('the first job waiting on its batch', () => (anthropic.batches[0]?.polls ?? 0) >= 2);
    expect(node('first')!.run.state).toBe('RUNNING');
    expect(anthropic.messageRequests()).toHaveLength(0);

    // kill -9 of musher while claude waits; musher again on the same home, store, socket and gateway port.
    const pid = musherPid(world);
    process.kill(pid, 'SIGKILL');
    await until('musher gone', () => processGone(pid), 10_000);
    await startMusher(world);
    await until("claude's retry following the batch already sent", () => musherLog().includes(`follows Message Batch ${anthropic.batches[0]!.id}, sent before musher restarted — not sent again`));
    firstHeld = false;

    // claude saw ordinary answers: its tool wrote the file, the engine verified it and opened the PR.
    await until('the first job awaiting its merge', () => node('first')!.run.state === 'AWAITING_MERGE' && node('first')!.prNumber != null, 180_000);
    expect(git(bare, 'show', 'sleds/night/first:first.txt')).toBe('first done overnight');
    expect(anthropic.messageRequests()).toHaveLength(0);
    const firstBatches = anthropic.batches.filter((b) => batchNode(b) === 'first');
    // One batch per request claude made: the re-sent one was not bought again.
    expect(firstBatches.length).toBe(2);
    expect(new Set(firstBatches.map((b) => JSON.stringify(b.created.body.requests[0].params))).size).toBe(firstBatches.length);

    // Its spend, metered under the job's own session: each answer once, at half the standard price.
    const standard = priceUsage(prices, { inputTokens: USAGE.input_tokens, outputTokens: USAGE.output_tokens, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, cacheReadTokens: 0, webSearchRequests: 0, serviceTier: 'standard', inferenceGeo: null, source: 'gateway', dedupKey: '', sessionId: '', model: 'claude-opus-5-5', timestampMs: now, cwd: null });
    expect(standard).toEqual({ priced: true, costMicros: 1_000_000 });
    const charges = () => db.prepare(`SELECT request_id, cost_micros FROM platform_key_usage WHERE session_id = ? ORDER BY ts`).all('night:night/first') as Array<{ request_id: string; cost_micros: number }>;
    expect(charges()).toEqual(firstBatches.map((b) => ({ request_id: b.id, cost_micros: 500_000 })));

    // The person merges; the second job starts, and its first answer ($0.50) is past its $0.40 cap.
    gh.mergePull(SLUG, node('first')!.prNumber!, 'dana');
    await until('the cap stopped the second job', () => node('second')!.run.state === 'WAITING_FOR_LIMIT');
    const stopped = node('second')!;
    expect(stopped.lastError).toBe('the cap $0.40 stopped it at $0.50 — its work and session are kept; raise cap: in its route file to let it go on');
    expect(stopped.sessionId).not.toBeNull();
    expect(stopped.worktree).not.toBeNull();
    expect(existsSync(stopped.worktree!)).toBe(true);
    secondHeld = false;

    const q = await sleds(world, ['queue', '--json']);
    expect(q.code, q.stderr).toBe(0);
    const job = (JSON.parse(q.stdout) as Queue).jobs.find((j) => j.job === 'night/second')!;
    expect(job).toMatchObject({ state: 'WAITING_FOR_LIMIT', capMicros: 400_000, spentMicros: 500_000 });
    expect([job.note, ...job.log].join('\n')).toContain('the cap $0.40 stopped it at $0.50');
  });
});
