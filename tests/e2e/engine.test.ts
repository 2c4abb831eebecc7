/**
 * Issue 14's acceptance, end to end: `sleds engine` (the real CLI) runs a route of four nodes in three waves with the
 * REAL claude and codex binaries against the fake model APIs, in worktrees of a real repository with a bare remote,
 * and a fake GitHub in which the test plays the person who merges. The agents' own tool calls write the files; waves
 * advance only on a merge; a failing check sends its node back and it lands on the second try; `kill -9` of the
 * engine mid-wave and a restart leave nothing started twice; a node whose agent parks a question (the MCP park verb,
 * through the sleds MCP server the engine hands the real claude) waits while its sibling lands and resumes in its own
 * session with the answer, given by a button press from a fake Slack Socket Mode server (the card went to the owner of
 * the node's area in .sleds/roster.yml); no merge endpoint is ever called.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureClaudeBinary, makeClaudeHome, startFakeAnthropic, waitFor, type RecordedRequest } from './harness/index.js';
import { ensureCodexBinary } from './harness/codex-binary.js';
import { makeCodexHome } from './harness/codex-env.js';
import { startFakeOpenAI } from './harness/fake-openai.js';
import { startFakeGithub } from '../support/fake-github.js';
import { startFakeSlackSocket } from '../support/fake-slack-socket.js';
import { AGENT_GIT_IDENTITY, git, routeRepo } from '../support/route-repo.js';
import { CLI, sleds, type SledsWorld } from '../support/sleds-env.js';
import { openStore } from '../../musher/store/db.js';
import { RouteStore } from '../../musher/engine/route-store.js';

const TOKEN = 'ghp_e2e_engine_token';
const SLACK_BOT = 'xoxb-e2e-engine-SECRET';
const SLACK_APP = 'xapp-1-A0E2E-SECRET';
const DANA = { id: 'U0DANA001', name: 'dana.w' };
const SLUG = 'acme/shop';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const ROUTE = `title: Large exports by email
tracker: ENG-503
nodes:
  - id: schema
    title: Export jobs table
    model: claude-sonnet-5-5
    brief: Add the export_jobs table in schema.sql.
  - id: api
    title: Export API
    harness: codex
    model: gpt-5.4
    depends_on: [schema]
    brief: Add the export endpoint in api.txt.
  - id: ui
    title: Export button
    area: web
    model: claude-sonnet-5-5
    depends_on: [schema]
    brief: Add the export button in ui.txt.
  - id: mailer
    title: Mailer
    model: claude-sonnet-5-5
    depends_on: [api, ui]
    brief: Email the link, in mailer.txt.
`;

const UI_QUESTION = 'One Export button (CSV), or a menu of formats?';
const UI_OPTIONS = ['One CSV button: the band stays $2-5', 'A menu of formats: the band grows to $4-9'];

/** The last user message, as Claude Code sends it (system messages follow it). */
function lastUser(req: RecordedRequest): Array<Record<string, unknown>> {
  const messages = ((req.body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? []).filter((m) => m.role === 'user');
  const content = messages.at(-1)?.content;
  return Array.isArray(content) ? (content as Array<Record<string, unknown>>) : [{ type: 'text', text: String(content ?? '') }];
}
const tail = (file: string) => {
  try {
    return readFileSync(file, 'utf8').slice(-1500);
  } catch {
    return '(none)';
  }
};
const nodeOf = (text: string) => /\(node ([a-z0-9-]+) of route eng-503/.exec(text)?.[1] ?? null;

describe('sleds engine, end to end with the real claude and codex', { timeout: 600_000 }, () => {
  it('runs a 4-node route in 3 waves to the merge, survives kill -9, parks a question while its sibling lands, sends a failing node back, never merges', async () => {
    const [claudeBin, codexBin] = await Promise.all([ensureClaudeBinary(), ensureCodexBinary()]);
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'sl-e2e-engine-')));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const { bare, repo } = routeRepo(root, {
      '.sleds/routes/eng-503.yml': ROUTE,
      // dana owns the web area: ui's question goes to her phone.
      '.sleds/roster.yml': `teammates:\n  - handle: dana\n    slack: ${DANA.id}\n    areas: [web]\n`,
      '.sleds/policy.yml': 'engine:\n  mode: auto\n  harness: claude-code\n  concurrency: 2\n  verify:\n    test: node check.mjs\n',
      'check.mjs': "import { existsSync, readFileSync } from 'node:fs';\nif (existsSync('mailer.txt') && !readFileSync('mailer.txt', 'utf8').includes('v2')) { console.error('mailer.txt must say v2'); process.exit(1); }\nconsole.log('1 passing');\n",
    });

    // The person who merges, on a fake GitHub linked to the bare remote.
    const gh = await startFakeGithub({ token: TOKEN });
    cleanups.push(() => gh.close());
    gh.createRepo(SLUG);
    gh.linkRemote(SLUG, bare);

    // Slack, where dana answers from her phone: the Web API and Socket Mode on 127.0.0.1.
    const slack = await startFakeSlackSocket({ token: SLACK_BOT, appToken: SLACK_APP, known: [DANA.id] });
    cleanups.push(() => slack.close());

    // The models: each node's agent writes its file through its own tool, then says it is done.
    let releaseUi: () => void = () => undefined;
    const uiHeld = new Promise<void>((r) => (releaseUi = r));
    let uiHolds = 0;
    const anthropic = await startFakeAnthropic({
      reply: (req) => {
        const all = JSON.stringify(req.body);
        const cwd = /Primary working directory: ([^\s\\]+)/.exec(all)?.[1] ?? '';
        const last = lastUser(req);
        const node = nodeOf(all);
        const results = last.filter((b) => b.type === 'tool_result').map((b) => (typeof b.content === 'string' ? b.content : JSON.stringify(b.content)));
        // ui's agent parks a question through the sleds MCP server, stops, and writes its file once it has the answer.
        if (results.some((t) => t.includes('Parked: eng-503/ui'))) return 'Parked: I stop here until the person answers.';
        if (results.length > 0) return results.some((t) => /error|denied/i.test(t)) ? `A tool failed: ${results.join(' | ').slice(0, 400)}` : 'Done: committed on this branch.';
        if (node === 'ui') {
          const answer = /The answer: ([^\n"\\]+)/.exec(JSON.stringify(last))?.[1];
          if (!answer) return [{ type: 'tool_use', name: 'mcp__sleds__park', input: { question: UI_QUESTION, options: UI_OPTIONS } }];
          return [{ type: 'tool_use', name: 'Write', input: { file_path: join(cwd, 'ui.txt'), content: `ui done: ${answer}\n` } }];
        }
        const file = `${node}.txt`;
        const words = node === 'mailer' ? (all.includes('mailer.txt must say v2') ? 'mailer v2' : 'mailer v1') : `${node} done`;
        return [{ type: 'tool_use', name: 'Write', input: { file_path: join(cwd, node === 'schema' ? 'schema.sql' : file), content: `${words}\n` } }];
      },
      // ui's first answer waits until the test lets it go: the engine is killed while it runs.
      holdBeforeMessageDelta: (req) => (nodeOf(JSON.stringify(req.body)) === 'ui' && uiHolds++ === 0 ? uiHeld : Promise.resolve()),
    });
    cleanups.push(() => anthropic.close());
    const openai = await startFakeOpenAI({
      reply: (req) => (JSON.stringify(req.body).includes('"function_call_output"') ? 'Done.' : [{ type: 'function_call', name: 'exec_command', arguments: { cmd: "printf 'api done\\n' > api.txt" }, call_id: 'call_api_1' }]),
    });
    cleanups.push(() => openai.close());

    const claudeHome = await makeClaudeHome({ mode: 'apiKey', fakeUrl: anthropic.url, cwd: repo });
    cleanups.push(() => claudeHome.cleanup());
    const codexHome = await makeCodexHome({ fakeUrl: openai.url, cwd: repo });
    cleanups.push(() => codexHome.cleanup());
    const sledsHome = join(root, 's');
    mkdirSync(join(sledsHome, 'config'), { recursive: true });
    // The engine's own settings are the user's: a short lease, so the restarted engine takes over soon.
    writeFileSync(join(sledsHome, 'config', 'policy.yml'), 'engine:\n  lease: 10s\n  concurrency: 2\n');
    writeFileSync(join(sledsHome, 'config', 'config.yml'), `upstreams:\n  github: ${gh.apiUrl}\n  slack: ${slack.apiUrl}\nbinaries:\n  claude: ${claudeBin}\n  codex: ${codexBin}\n`);
    const env: Record<string, string> = {
      ...claudeHome.env,
      CODEX_HOME: codexHome.codexHome,
      FAKE_OPENAI_KEY: codexHome.env.FAKE_OPENAI_KEY!,
      SLEDS_HOME: sledsHome,
      TZ: 'UTC',
      ...AGENT_GIT_IDENTITY,
    };
    const world: SledsWorld = { root, home: claudeHome.home, sledsHome, claudeDir: join(claudeHome.home, '.claude'), env, socket: join(sledsHome, 'run', 'musher.sock'), logFile: join(sledsHome, 'state', 'musher.log'), spoolDir: join(sledsHome, 'state', 'spool') };
    cleanups.push(async () => void (await sleds(world, ['musher', 'stop'])));

    expect((await sleds(world, ['github', 'set-token'], TOKEN)).code).toBe(0);
    expect((await sleds(world, ['slack', 'set-token'], SLACK_BOT)).code).toBe(0);
    expect((await sleds(world, ['slack', 'set-app-token'], SLACK_APP)).code).toBe(0);
    // The seat's keys: every node's receipt is signed with them.
    expect((await sleds(world, ['keys', 'init', '--name', 'dana', '--json'], undefined, { SLEDS_SEAT: 'dana' })).code).toBe(0);
    const loaded = await sleds(world, ['route', 'load', '--json'], undefined, {}, repo);
    expect(loaded.stdout).toContain('eng-503');
    expect((await sleds(world, ['route', 'arm', 'eng-503', '--json'], undefined, {}, repo)).code).toBe(0);

    const db = openStore(join(sledsHome, 'data', 'sleds.db'));
    cleanups.push(() => void db.close());
    const store = new RouteStore(db, { now: () => Date.now() });
    const state = (id: string) => store.node('eng-503', id)?.run.state;
    /** Its PR open and followed (the engine moves a verified node to AWAITING_MERGE, then opens its PR). */
    const awaiting = (id: string) => state(id) === 'AWAITING_MERGE' && store.node('eng-503', id)?.prNumber != null;
    const states = () => store.nodes('eng-503').map((n) => `${n.nodeId}=${n.run.state}${n.run.problem ? ` (${n.run.problem})` : ''}`).join(', ');

    const engines: ChildProcess[] = [];
    let output = '';
    const startEngine = () => {
      const child = spawn(process.execPath, [...CLI, 'engine', '--every', '1s'], { env, cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout!.on('data', (d) => (output += d));
      child.stderr!.on('data', (d) => (output += d));
      engines.push(child);
      return child;
    };
    cleanups.push(() => {
      for (const e of engines) if (e.exitCode === null) e.kill('SIGKILL');
    });
    /** What each run left (its stream's end and stderr), for a timeout's message. */
    const runsLeft = () =>
      store
        .nodes('eng-503')
        .filter((n) => n.logPath)
        .map((n) => `--- ${n.nodeId} ${n.logPath}\n${tail(n.logPath!)}\n${tail(n.logPath!.replace(/stdout\.jsonl$/, 'stderr.log'))}`)
        .join('\n');
    const until = (what: string, cond: () => boolean, timeoutMs = 120_000) => waitFor(cond, { timeoutMs, intervalMs: 200, description: what, onTimeout: () => `${states()}\n${output.slice(-3000)}\n${runsLeft()}` });

    // Wave 1: schema alone; nothing of wave 2 starts before a person merges it.
    const first = startEngine();
    await until('schema awaiting merge', () => awaiting('schema'));
    expect(git(bare, 'show', 'sleds/eng-503/schema:schema.sql')).toBe('schema done');
    expect(state('api')).toBe('QUEUED');
    expect(state('ui')).toBe('QUEUED');
    gh.mergePull(SLUG, store.node('eng-503', 'schema')!.prNumber!, 'dana');

    // Wave 2 (api on Codex, ui on Claude Code) starts from the merged tip; kill -9 the engine while ui runs.
    await until('api and ui running', () => state('api') !== 'QUEUED' && state('ui') === 'RUNNING' && uiHolds > 0);
    expect(state('schema')).toBe('COMPLETED');
    first.kill('SIGKILL');
    await waitFor(() => first.exitCode !== null || first.signalCode !== null, { timeoutMs: 10_000 });
    startEngine();
    releaseUi();
    // ui's agent parked its question (the MCP park verb, in the session the killed engine started): ui waits, and
    // its sibling api lands in the meantime.
    await until('api awaiting merge while ui waits for an answer', () => awaiting('api') && state('ui') === 'WAITING_FOR_INPUT', 240_000);
    expect(git(bare, 'show', 'sleds/eng-503/api:api.txt')).toBe('api done');
    expect(git(bare, 'show', 'sleds/eng-503/api:schema.sql')).toBe('schema done');
    gh.mergePull(SLUG, store.node('eng-503', 'api')!.prNumber!, 'dana');
    await until('api landed while ui waits', () => state('api') === 'COMPLETED');
    expect(state('ui')).toBe('WAITING_FOR_INPUT');
    const needs = JSON.parse((await sleds(world, ['needs', '--json'])).stdout) as { needs: Array<{ questionId: string; of: string; question: string; options: string[] }> };
    expect(needs.needs).toMatchObject([{ of: 'eng-503/ui', question: UI_QUESTION, options: UI_OPTIONS }]);
    // The card on dana's phone: the question and its two answers as buttons. She taps A.
    await until('the card on Slack', () => slack.messages.length === 1);
    const card = slack.messages[0]!;
    expect(card.channel).toBe(`D${DANA.id.slice(1)}`);
    expect(card.text).toContain(UI_QUESTION);
    expect(JSON.stringify(card.blocks)).toContain(needs.needs[0]!.questionId);
    const pressed = await slack.press({ channel: card.channel, ts: card.ts, actionId: 'sleds_answer_A', user: DANA });
    expect(pressed.ack.envelope_id).toBe(pressed.envelopeId);
    await until('the card says who answered', () => slack.updates.length === 1);
    expect(slack.updates[0]!.text).toContain(`answered by <@${DANA.id}>`);
    expect(JSON.stringify(slack.updates[0]!.blocks)).not.toContain('sleds_answer_A');
    await until('ui resumed with the answer and awaiting merge', () => awaiting('ui'), 240_000);
    expect(git(bare, 'show', 'sleds/eng-503/ui:ui.txt')).toBe(`ui done: ${UI_OPTIONS[0]}`);
    // Nothing started twice: every Claude node ran in one session (the model saw one session id per node).
    const sessionsOf = (node: string) => new Set(anthropic.messageRequests().filter((r) => nodeOf(JSON.stringify(r.body)) === node).map((r) => r.headers['x-claude-code-session-id']));
    expect(sessionsOf('ui').size).toBe(1);
    expect(sessionsOf('schema').size).toBe(1);

    expect(store.decisions('eng-503')).toMatchObject([{ nodeId: 'ui', question: UI_QUESTION, answer: UI_OPTIONS[0], answeredBy: 'dana', source: 'slack' }]);
    gh.mergePull(SLUG, store.node('eng-503', 'ui')!.prNumber!, 'sam');

    // Wave 3: mailer's check fails (v1), it goes back to its session with the log, and lands on the second try.
    await until('mailer awaiting merge', () => awaiting('mailer'), 240_000);
    const mailer = store.node('eng-503', 'mailer')!;
    expect(mailer.verifyFailures).toBe(1);
    expect(git(bare, 'show', 'sleds/eng-503/mailer:mailer.txt')).toBe('mailer v2');
    expect(sessionsOf('mailer').size).toBe(1);
    expect(gh.pull(SLUG, mailer.prNumber!)!.body).toContain('Email the link');
    gh.mergePull(SLUG, mailer.prNumber!, 'dana');
    await until('route landed', () => state('mailer') === 'COMPLETED');

    const show = JSON.parse((await sleds(world, ['route', 'show', 'eng-503', '--json'], undefined, {}, repo)).stdout) as { line: string; waves: Array<Array<{ nodeId: string; state: string; receipt?: string | null }>> };
    expect(show.waves.map((w) => w.map((n) => `${n.nodeId}:${n.state}`))).toEqual([['schema:COMPLETED'], ['api:COMPLETED', 'ui:COMPLETED'], ['mailer:COMPLETED']]);
    // Every node landed with its signed receipt (its harness and model named), in its PR and on its row; the route's
    // line sums them.
    for (const n of show.waves.flat()) {
      // On a miss, the engine's lines about that node say why (no receipt made, or made and not kept).
      const said = output.split('\n').filter((l) => l.includes(`eng-503/${n.nodeId}`)).join('\n');
      expect(n.receipt, `${n.nodeId}:\n${said}`).toEqual(expect.stringMatching(n.nodeId === 'api' ? / · seat \S+ · codex · gpt-5\.4 · signed$/ : / · seat \S+ · claude-code · claude-sonnet-5-5 · signed$/));
      expect(gh.pull(SLUG, store.node('eng-503', n.nodeId)!.prNumber!)!.body, n.nodeId).toContain(n.receipt!);
    }
    const priced = store.nodes('eng-503').map((n) => (n.receipt as { body: { costMicros: number } }).body.costMicros);
    expect(priced.every((c) => c > 0)).toBe(true);
    expect(show.line).toMatch(/^\d+ min · \$\d+\.\d\d · (in|under|over) band for ENG-503, across 4 nodes, 1 machine and 1 person's phone$/);
    expect(gh.mergeCalls).toEqual([]);
    expect(readFileSync(world.logFile, 'utf8')).not.toContain('SECRET');
  });
});
