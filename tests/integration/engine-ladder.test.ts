/**
 * The ladder (issue 15 § 5) on real parts: the engine with a test-clock overnight window (concurrency 1, two overnight
 * jobs), the ask verb as musher binds it (its context read from the node's worktree and route, its escalations posted
 * as one-tap cards through the fake Slack's Web API, answered over its Socket Mode WebSocket), real git, SQLite and the
 * fake GitHub. The test plays the first job's agent calling ask while it works, as the MCP verb does.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { routeQuestionVerbs } from '../../musher/engine/route-questions-api.js';
import { ladderSources } from '../../musher/engine/ladder-context.js';
import { routeQuestionCards, slackAnswerer } from '../../musher/notify/route-question-cards.js';
import { startSlackQuestions } from '../../musher/notify/slack-questions.js';
import { SLACK_APP_TOKEN_SECRET, SLACK_BOT_TOKEN_SECRET } from '../../musher/notify/slack.js';
import { RosterReader } from '../../musher/roster/reader.js';
import { FileSecretStore } from '../../musher/secrets/store.js';
import { LifecycleEvents } from '../../musher/store/lifecycle-events.js';
import { PlatformKeyStore } from '../../musher/store/platform-key.js';
import { nightQueue } from '../../musher/engine/night-queue.js';
import type { MintBatchToken } from '../../musher/engine/night-tier.js';
import type { Log } from '../../musher/log.js';
import { startFakeSlackSocket } from '../support/fake-slack-socket.js';
import { SLUG, useEngineWorlds } from '../support/engine-world.js';
import { git } from '../support/route-repo.js';
import { waitFor } from '../support/sleds-env.js';

const BOT = 'xoxb-1234-5678-SECRET-bot';
const APP = 'xapp-1-A0FAKEAPP-SECRET-app';
const DANA = { id: 'U0DANA001', name: 'dana.w' };
const MIN = 60_000;
const HOUR = 60 * MIN;
const at = (day: number, hour: number, minute = 0) => Date.UTC(2026, 11, day, hour, minute);

const { world, cleanups } = useEngineWorlds();

/** 22:00–06:00 UTC with one slot: the night in progress at `now`, else the next one. */
function night(now: number) {
  const day = Math.floor(now / (24 * HOUR)) * 24 * HOUR;
  for (const start of [day - 2 * HOUR, day + 22 * HOUR]) if (now < start + 8 * HOUR) return { startMs: start, endMs: start + 8 * HOUR, capMicros: 10_000_000, concurrency: 1 };
  return null;
}

const mint: MintBatchToken = async () => ({ ok: true, token: 'sleds_gw_night_token', baseUrl: 'http://127.0.0.1:4999', openaiBaseUrl: 'http://127.0.0.1:4999/v1' });
const band = '{ low_usd: 1, high_usd: 3, low_min: 10, high_min: 30, confidence: 0.5 }';

const NAMING = { question: 'Name the export worker’s log file?', options: ['export-worker.log next to the others', 'worker.log in the tmp folder'], reversible: true };
const EXPORTS = { question: 'How should exports reach the customer?', options: ['Attach the file to the email', 'Email a CSV link'], reversible: false };
const TABLE = {
  question: 'Where do export rows live?',
  options: ['Keep them in the jobs table: nothing to migrate', 'Add an exports table: a migration that grows the schema', 'A JSON column on jobs: no index'],
  reversible: false,
  risk: 'high' as const,
};

describe('the ladder: one question at 11 pm stalls nothing', { timeout: 180_000 }, () => {
  it('decides a reversible question, resolves one from the route’s notes, escalates an irreversible one that holds the slot, parks it at 30 minutes so the next job starts, and a late tap resumes and delivers it', async () => {
    const release = join(tmpdir(), `sl-ladder-${process.pid}-${Math.random().toString(36).slice(2)}`);
    cleanups.push(() => rmSync(release, { force: true }));
    const w = await world({
      night,
      mintBatchToken: mint,
      seat: 'lee',
      route: `title: Exports
notes: |
  ## Exports

  Exports are emailed as a CSV link that expires after seven days.
nodes:
  - id: first
    overnight: true
    band: ${band}
    brief: |
      @hold ${release}
      @after grows @write first.txt exports table
  - id: second
    overnight: true
    band: ${band}
    brief: "@write second.txt second"
`,
    });
    mkdirSync(join(w.repo, '.sleds'), { recursive: true });
    writeFileSync(join(w.repo, '.sleds', 'roster.yml'), `teammates:\n  - handle: dana\n    slack: ${DANA.id}\n  - handle: lee\n`);

    const slack = await startFakeSlackSocket({ token: BOT, appToken: APP, known: [DANA.id] });
    cleanups.push(() => slack.close());
    const dir = mkdtempSync(join(tmpdir(), 'sl-ladder-secrets-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const secrets = new FileSecretStore(dir);
    await secrets.set(SLACK_BOT_TOKEN_SECRET, BOT);
    await secrets.set(SLACK_APP_TOKEN_SECRET, APP);
    const logs: string[] = [];
    const log: Log = { info: (m) => logs.push(m), warn: (m) => logs.push(m), error: (m) => logs.push(m) };
    const reader = new RosterReader(log);
    const rosterAt = (repo: string) => reader.rosterAt(repo);

    // As musher binds them (app.ts, compose.ts): the policy's on-call and escalate_after, the worktree's context.
    let verbs!: ReturnType<typeof routeQuestionVerbs>;
    const questions = startSlackQuestions({
      secrets,
      baseUrl: slack.apiUrl,
      log,
      clock: w.clock,
      timeZone: 'UTC',
      onAnswer: slackAnswerer({ rosterAt, repoOf: (id) => (w.store.question(id) ? w.repo : null), answer: (a) => verbs.answerFromSlack(a) }),
      socketModeOptions: { clientPingTimeout: 2_000, retryDelaysMs: [50] },
    });
    cleanups.push(() => questions.stop());
    const cards = routeQuestionCards({ slack: questions, rosterAt, seat: () => 'lee', posted: (id, where) => w.store.setQuestionMessage(id, where), log });
    verbs = routeQuestionVerbs({
      store: w.store,
      announce: (q, r, n) => cards.announce(q, r, n),
      answered: (q) => cards.answered(q),
      overnightOf: () => ({ onCall: 'dana', escalateAfterMs: 30 * MIN }),
      contextOf: (route, node) => ladderSources(node, route),
      escalate: (q, r, n) => cards.escalate!(q, r, n),
      parked: (q, waited) => cards.parked!(q, waited),
      unreachable: (repo, onCall) => cards.unreachable!(repo, onCall),
    });
    await waitFor('the Socket Mode link', () => questions.connected());
    // sleds queue, on the same store.
    const queue = nightQueue({
      routes: w.store,
      events: new LifecycleEvents(w.db),
      spend: new PlatformKeyStore(w.db),
      nightOf: (_repo, now) => night(now),
      wallJobs: () => [],
      cancelWallJob: () => ({ status: 404, body: {} }),
      clock: w.clock,
      formatTime: (ms) => new Date(ms).toISOString().slice(11, 16),
      seat: () => 'lee',
    });
    const job = (id: string) => (queue.list().body as { jobs: Array<{ job: string; note: string | null; log: string[] }> }).jobs.find((j) => j.job === id)!;
    const ask = (q: object) => verbs.ask(JSON.stringify({ route: 'eng-503', node: 'first', ...q }), w.clock.now());

    // 23:00: the window is open; one slot, so the first job runs and the second waits.
    w.clock.t = at(2, 23, 0);
    await w.until(() => w.state('first') === 'RUNNING' && w.store.node('eng-503', 'first')!.sessionId !== null, 'the first job at work');
    expect(w.state('second')).toBe('QUEUED');

    // A reversible, low-risk question: decided at once with the agent's first option, and logged.
    const decided = await ask(NAMING);
    expect(decided).toMatchObject({ status: 200, body: { rung: 'decided', next: 'answer', answer: NAMING.options[0] } });
    expect((decided.body as { text: string }).text).toBe(`Decided (reversible, low risk): A) ${NAMING.options[0]} — your first option; it is logged in the PR. Go on with it.`);

    // An irreversible one the route's notes answer: resolved from context, saying where.
    const resolved = await ask(EXPORTS);
    expect(resolved).toMatchObject({ status: 200, body: { rung: 'context', answer: 'Email a CSV link' } });
    expect((resolved.body as { text: string }).text).toContain("Resolved from the route’s notes § Exports: 'Exports are emailed as a CSV link that expires after seven days.' → B) Email a CSV link");

    // Irreversible and high risk, nothing says: escalated to the on-call as a one-tap card with a button per option.
    const escalated = await ask(TABLE);
    expect(escalated).toMatchObject({ status: 201, body: { rung: 'escalated', next: 'wait' } });
    const qid = (escalated.body as { questionId: string }).questionId;
    expect((escalated.body as { text: string }).text).toContain(`Question ${qid}: escalated to dana; end your turn now: sleds resumes this session with the answer.`);
    const card = await waitFor('the card reached the on-call', () => slack.messages[0]);
    expect(card.channel).toBe(`D${DANA.id.slice(1)}`);
    expect(card.text).toContain('Where do export rows live?');
    expect(JSON.stringify(card.blocks)).toContain('sleds_answer_C');
    await waitFor('the card kept on the question', () => w.store.question(qid)?.slack);

    // The agent ends its turn: the job waits for the answer, and keeps the night's only slot meanwhile.
    writeFileSync(release, 'go');
    await w.until(() => w.state('first') === 'WAITING_FOR_INPUT', 'the first job waits for its on-call');
    w.clock.t = at(2, 23, 29);
    await w.until(() => w.log.includes('eng-503/second: overnight — every slot of the night is taken: it starts when one is free'), 'the second job says the slot is taken');
    expect(w.state('second')).toBe('QUEUED');
    expect(job('eng-503/first').note).toBe('escalated to dana: parks at 23:30 if no reply (it keeps its slot until then)');
    expect(verbs.sweep(w.clock.now())).toEqual([]);

    // 30 test-minutes without a reply: it parks (its card says so, buttons kept) and the second job starts.
    w.clock.t = at(2, 23, 31);
    expect(verbs.sweep(w.clock.now()).map((q) => q.id)).toEqual([qid]);
    const note = await waitFor('the card says it parked', () => slack.updates[0]);
    expect(note.text).toContain('no reply in 30 min: parked; a late answer still resumes it');
    expect(JSON.stringify(note.blocks)).toContain('sleds_answer_B');
    await w.until(() => w.state('second') === 'AWAITING_MERGE', 'the second job ran and awaits its merge');
    expect(w.log).toContain('eng-503/first: no reply · parked eng-503/first · started job eng-503/second');
    expect(w.state('first')).toBe('WAITING_FOR_INPUT');
    expect(job('eng-503/first').note).toBe('parked: no reply from dana; a late answer resumes it (sleds needs)');

    // 00:52: dana taps B late; the parked job resumes in its session with her answer, is verified and gets its PR.
    w.clock.t = at(3, 0, 52);
    await slack.press({ channel: card.channel, ts: card.ts, actionId: 'sleds_answer_B', value: `${qid}:B`, blockId: `sleds_answer:${qid}`, user: DANA });
    await waitFor('the answer recorded', () => w.store.question(qid)?.state === 'answered');
    await w.until(() => w.state('first') === 'AWAITING_MERGE', 'the first job resumed and awaits its merge');
    expect(git(w.bare, 'show', 'sleds/eng-503/first:first.txt')).toBe('exports table');
    const first = w.store.node('eng-503', 'first')!;
    expect(readFileSync(join(w.plainHome, 'sessions', `${first.sessionId}.log`), 'utf8')).toContain(`The answer: ${TABLE.options[1]}`);

    // The PR lists every decision with its rung and reason.
    const body = w.gh.pull(SLUG, first.prNumber!)!.body;
    expect(body).toContain(`- Decided (reversible, low risk): ${NAMING.question} → **${NAMING.options[0]}** — took the agent's first option`);
    expect(body).toContain(`- Resolved from the route’s notes § Exports: 'Exports are emailed as a CSV link that expires after seven days.' — ${EXPORTS.question} → **Email a CSV link**`);
    expect(body).toContain(`- On-call @dana answered at 00:52 UTC: ${TABLE.question} → **${TABLE.options[1]}** (escalated to dana; answered after it parked)`);
    expect(w.store.decisions('eng-503').map((d) => [d.nodeId, d.rung])).toEqual([
      ['first', 'decided'],
      ['first', 'context'],
      ['first', 'on-call'],
    ]);

    // Each rung is in the job's log, as sleds queue shows it.
    const timeline = job('eng-503/first').log;
    expect(timeline).toEqual(
      expect.arrayContaining([
        `23:00 question: ${NAMING.question} → decided (reversible, low risk): A) ${NAMING.options[0]}`,
        `23:00 question: ${EXPORTS.question} → resolved from the route’s notes § Exports: B) Email a CSV link`,
        `23:00 question: ${TABLE.question} → escalated to dana (irreversible, high risk); parks if no reply in 30 min`,
        `23:31 question: ${TABLE.question} → no reply from dana in 30 min: parked; a late answer still resumes it`,
        '23:31 no reply · parked eng-503/first · started job eng-503/second',
      ]),
    );
    expect(logs.join('\n')).not.toContain('SECRET');
  });

  it('a late answer outside the window waits for the next window’s start, and says so', async () => {
    const release = join(tmpdir(), `sl-ladder-late-${process.pid}-${Math.random().toString(36).slice(2)}`);
    cleanups.push(() => rmSync(release, { force: true }));
    const w = await world({
      night,
      mintBatchToken: mint,
      route: `title: t\nnodes:\n  - id: first\n    overnight: true\n    band: ${band}\n    brief: |\n      @hold ${release}\n      @after grows @write first.txt exports table\n`,
    });
    const verbs = routeQuestionVerbs({ store: w.store, overnightOf: () => ({ onCall: 'U0DANA001', escalateAfterMs: 30 * MIN }) });
    w.clock.t = at(2, 23, 0);
    await w.until(() => w.state('first') === 'RUNNING', 'the job at work');
    const r = await verbs.ask(JSON.stringify({ route: 'eng-503', node: 'first', ...TABLE }), w.clock.now());
    expect(r).toMatchObject({ status: 201, body: { rung: 'escalated' } });
    const qid = (r.body as { questionId: string }).questionId;
    writeFileSync(release, 'go');
    await w.until(() => w.state('first') === 'WAITING_FOR_INPUT', 'the job waits');

    // 07:00: the window closed at 06:00; the answer comes, and the job waits for 22:00.
    w.clock.t = at(3, 7, 0);
    expect(verbs.answer(JSON.stringify({ node: qid, answer: 'B', by: 'dana' }), w.clock.now())).toMatchObject({ status: 200 });
    await w.until(() => w.log.includes('eng-503/first: overnight — waits for the window at 22:00 UTC'), 'it says it waits for the window');
    expect(w.state('first')).toBe('WAITING_FOR_INPUT');

    w.clock.t = at(3, 22, 0);
    await w.until(() => w.state('first') === 'AWAITING_MERGE', 'it resumed in the next window and awaits its merge');
    expect(git(w.bare, 'show', 'sleds/eng-503/first:first.txt')).toBe('exports table');
  });

  it('an on-call nobody can reach (no slack: id in the roster) does not hold the night: the question parks at once, saying why', async () => {
    const release = join(tmpdir(), `sl-ladder-away-${process.pid}-${Math.random().toString(36).slice(2)}`);
    cleanups.push(() => rmSync(release, { force: true }));
    const w = await world({ night, mintBatchToken: mint, route: `title: t\nnodes:\n  - id: first\n    overnight: true\n    band: ${band}\n    brief: |\n      @hold ${release}\n      @write first.txt first\n  - id: second\n    overnight: true\n    band: ${band}\n    brief: "@write second.txt second"\n` });
    mkdirSync(join(w.repo, '.sleds'), { recursive: true });
    writeFileSync(join(w.repo, '.sleds', 'roster.yml'), 'teammates:\n  - handle: dana\n');
    const reader = new RosterReader({ info: () => undefined, warn: () => undefined, error: () => undefined });
    const unused = { post: async () => ({ ok: false as const, error: 'not posted' }), showAnswered: async () => undefined, showNote: async () => false, connected: () => false, stop: async () => undefined };
    const cards = routeQuestionCards({ slack: unused, rosterAt: (repo) => reader.rosterAt(repo), seat: () => 'lee', posted: () => undefined, log: { info: () => undefined, warn: () => undefined, error: () => undefined } });
    const verbs = routeQuestionVerbs({ store: w.store, overnightOf: () => ({ onCall: 'dana', escalateAfterMs: 30 * MIN }), unreachable: (repo, onCall) => cards.unreachable!(repo, onCall) });
    w.clock.t = at(2, 23, 0);
    await w.until(() => w.state('first') === 'RUNNING', 'the first job at work');
    const r = await verbs.ask(JSON.stringify({ route: 'eng-503', node: 'first', ...EXPORTS }), w.clock.now());
    expect(r).toMatchObject({ status: 201, body: { rung: 'parked', reason: 'irreversible, and on-call dana cannot be reached (no slack: id for dana in .sleds/roster.yml): parked for a person (sleds needs)' } });
    writeFileSync(release, 'go');
    // Parked, it holds no slot: the second job starts at once.
    await w.until(() => w.state('first') === 'WAITING_FOR_INPUT' && w.state('second') === 'AWAITING_MERGE', 'the first waits, the second ran');
  });

  it('an irreversible question of a daytime node parks at once (no on-call for a daytime job), saying why', async () => {
    const release = join(tmpdir(), `sl-ladder-day-${process.pid}-${Math.random().toString(36).slice(2)}`);
    cleanups.push(() => rmSync(release, { force: true }));
    const w = await world({ route: `title: t\nnodes:\n  - id: day\n    brief: |\n      @hold ${release}\n      @write day.txt day\n` });
    const verbs = routeQuestionVerbs({ store: w.store, overnightOf: () => ({ onCall: 'dana', escalateAfterMs: 30 * MIN }) });
    await w.until(() => w.state('day') === 'RUNNING', 'the node at work');
    const r = await verbs.ask(JSON.stringify({ route: 'eng-503', node: 'day', ...EXPORTS }), w.clock.now());
    expect(r).toMatchObject({ status: 201, body: { rung: 'parked', next: 'wait', reason: 'irreversible, and not an overnight job: parked for a person (sleds needs)' } });
    writeFileSync(release, 'go');
    await w.until(() => w.state('day') === 'WAITING_FOR_INPUT', 'the node waits for a person');
    expect(w.store.openQuestions().map((q) => q.question)).toEqual([EXPORTS.question]);
  });
});
