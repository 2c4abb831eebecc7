/**
 * A route node's parked question as a Slack card, wired as musher wires it (compose.ts): the park verb announces it,
 * route-question-cards posts it to the owner of the node's area from `.sleds/roster.yml`, a tap from the fake Slack's
 * Socket Mode is recorded as the roster handle's answer (source 'slack') and the engine resumes the node with it;
 * an answer from the CLI updates the card instead. Real engine, real git, real SQLite, the real SocketModeClient.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { routeQuestionVerbs } from '../../musher/engine/route-questions-api.js';
import { routeQuestionCards, slackAnswerer } from '../../musher/notify/route-question-cards.js';
import { startSlackQuestions } from '../../musher/notify/slack-questions.js';
import { SLACK_APP_TOKEN_SECRET, SLACK_BOT_TOKEN_SECRET } from '../../musher/notify/slack.js';
import { RosterReader } from '../../musher/roster/reader.js';
import { FileSecretStore } from '../../musher/secrets/store.js';
import type { Log } from '../../musher/log.js';
import { startFakeSlackSocket } from '../support/fake-slack-socket.js';
import { useEngineWorlds, type World } from '../support/engine-world.js';
import { git } from '../support/route-repo.js';
import { waitFor } from '../support/sleds-env.js';

const BOT = 'xoxb-1234-5678-SECRET-bot';
const APP = 'xapp-1-A0FAKEAPP-SECRET-app';
const DANA = { id: 'U0DANA001', name: 'dana.w' };
const LEE = { id: 'U0LEE0001', name: 'lee' };

const { world, cleanups } = useEngineWorlds();

const ROSTER = `teammates:
  - handle: dana
    slack: ${DANA.id}
    areas: [exports]
  - handle: lee
    slack: ${LEE.id}
`;

/** The engine world, its route's mailer node parked (held until released) and its question announced to Slack. */
async function parkedWorld(route: string, roster: string | null = ROSTER) {
  const release = join(tmpdir(), `sl-card-${process.pid}-${Math.random().toString(36).slice(2)}`);
  cleanups.push(() => rmSync(release, { force: true }));
  const w: World = await world({ route: route.replaceAll('RELEASE', release), seat: 'lee' });
  if (roster !== null) {
    mkdirSync(join(w.repo, '.sleds'), { recursive: true });
    writeFileSync(join(w.repo, '.sleds', 'roster.yml'), roster);
  }

  const slack = await startFakeSlackSocket({ token: BOT, appToken: APP, known: [DANA.id, LEE.id] });
  cleanups.push(() => slack.close());
  const dir = mkdtempSync(join(tmpdir(), 'sl-cards-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const secrets = new FileSecretStore(dir);
  await secrets.set(SLACK_BOT_TOKEN_SECRET, BOT);
  await secrets.set(SLACK_APP_TOKEN_SECRET, APP);
  const logs: string[] = [];
  const log: Log = { info: (m) => logs.push(m), warn: (m) => logs.push(m), error: (m) => logs.push(m) };
  const reader = new RosterReader(log);
  const rosterAt = (repo: string) => reader.rosterAt(repo);

  // As compose.ts binds them: the verbs announce to the cards, a tap answers through the verbs.
  let verbs!: ReturnType<typeof routeQuestionVerbs>;
  const questions = startSlackQuestions({
    secrets,
    baseUrl: slack.apiUrl,
    log,
    clock: w.clock,
    timeZone: 'UTC',
    onAnswer: slackAnswerer({
      rosterAt,
      repoOf: (id) => {
        const q = w.store.question(id);
        return q ? (w.store.route(q.routeKey)?.repoRoot ?? null) : null;
      },
      answer: (a) => verbs.answerFromSlack(a),
    }),
    socketModeOptions: { clientPingTimeout: 2_000, retryDelaysMs: [50] },
  });
  cleanups.push(() => questions.stop());
  const cards = routeQuestionCards({ slack: questions, rosterAt, seat: () => 'lee', posted: (id, at) => w.store.setQuestionMessage(id, at), log });
  verbs = routeQuestionVerbs({ store: w.store, announce: (q, r, n) => cards.announce(q, r, n), answered: (q) => cards.answered(q) });
  await waitFor('the Socket Mode link', () => questions.connected());

  await w.until(() => w.state('mailer') === 'RUNNING', 'mailer at work');
  const parked = verbs.park(JSON.stringify({ route: 'eng-503', node: 'mailer', question: 'Attach the export or send a link?', options: ['Attach the file: the band stays $2–5', 'Send a link: the band grows to $4–9'] }), w.clock.now());
  expect(parked).toMatchObject({ status: 201 });
  const qid = (parked.body as { questionId: string }).questionId;
  writeFileSync(release, 'go');
  return { w, slack, verbs, logs, qid };
}

const MAILER = `title: t
nodes:
  - id: mailer
    area: exports
    brief: |
      @hold RELEASE
      @after grows @write mailer.txt link
      @after stays @write mailer.txt attach
  - id: docs
    brief: "@write docs.md exports"
`;

describe('a parked route question on Slack, answered by a tap through Socket Mode', { timeout: 120_000 }, () => {
  it('goes to the owner of the node’s area as two buttons; her tap is her roster handle’s answer and the node resumes with it', async () => {
    const { w, slack, qid, logs } = await parkedWorld(MAILER);
    // dana owns `exports`: the card is a DM to her, with the question, and each option's words and effect.
    const card = await waitFor('the card posted', () => slack.messages[0]);
    expect(card.channel).toBe(`D${DANA.id.slice(1)}`);
    expect(card.text).toContain('Attach the export or send a link?');
    const blocks = JSON.stringify(card.blocks);
    expect(blocks).toContain('eng-503 / mailer asks');
    expect(blocks).toContain('the band grows to $4–9');
    await waitFor('the card kept on the question', () => w.store.question(qid)?.slack);
    expect(w.store.question(qid)!.slack).toEqual({ channel: card.channel, ts: card.ts });

    // At the end of its turn it waits; its sibling goes on meanwhile.
    await w.until(() => w.state('mailer') === 'WAITING_FOR_INPUT' && w.state('docs') === 'AWAITING_MERGE', 'mailer waits, docs awaits its merge');

    await slack.press({ channel: card.channel, ts: card.ts, actionId: 'sleds_answer_B', user: DANA });
    await waitFor('the card says who answered', () => slack.updates[0]);
    expect(slack.updates[0]!.text).toContain(`answered by <@${DANA.id}>`);
    expect(slack.updates[0]!.text).toContain('Send a link');
    // The decision is kept with her roster handle (not her Slack display name), a time and where it came from.
    expect(w.store.decisions('eng-503')).toMatchObject([{ nodeId: 'mailer', answer: 'Send a link: the band grows to $4–9', answeredBy: 'dana', source: 'slack', answeredAt: w.clock.now() }]);

    await w.until(() => w.state('mailer') === 'AWAITING_MERGE', 'mailer resumed with the answer');
    expect(git(w.bare, 'show', 'sleds/eng-503/mailer:mailer.txt')).toBe('link');
    const mailer = w.store.node('eng-503', 'mailer')!;
    expect(readFileSync(join(w.plainHome, 'sessions', `${mailer.sessionId}.log`), 'utf8')).toContain('The answer: Send a link: the band grows to $4–9');
    expect(logs.join('\n')).not.toContain('SECRET');
  });

  it('an answer from the CLI updates the card (who, when, no buttons), and a later tap records nothing', async () => {
    const { w, slack, verbs, qid } = await parkedWorld(MAILER);
    const card = await waitFor('the card posted', () => slack.messages[0]);
    await waitFor('the card kept on the question', () => w.store.question(qid)?.slack);
    expect(verbs.answer(JSON.stringify({ node: qid, answer: 'A', by: 'lee' }), w.clock.now())).toMatchObject({ status: 200 });
    const updated = await waitFor('the card updated', () => slack.updates[0]);
    expect(updated).toMatchObject({ channel: card.channel, ts: card.ts });
    expect(updated.text).toContain('answered by lee');
    expect(updated.text).toContain('Attach the file');
    expect(JSON.stringify(updated.blocks)).not.toContain('sleds_answer_A');

    // dana's phone had not refreshed: her tap on the old buttons is refused, the first answer stands.
    await slack.press({ channel: card.channel, ts: card.ts, actionId: 'sleds_answer_B', value: `${qid}:B`, blockId: `sleds_answer:${qid}`, user: DANA });
    await waitFor('the card updated again', () => slack.updates[1]);
    expect(w.store.decisions('eng-503')).toMatchObject([{ answeredBy: 'lee', source: 'cli' }]);
    await w.until(() => w.state('mailer') === 'AWAITING_MERGE' && w.state('docs') === 'AWAITING_MERGE', 'mailer resumed with the answer');
    expect(git(w.bare, 'show', 'sleds/eng-503/mailer:mailer.txt')).toBe('attach');
  });

  it('a node whose area nobody owns goes to this seat’s own Slack', async () => {
    const { w, slack } = await parkedWorld(MAILER.replace('area: exports', 'area: billing'));
    const card = await waitFor('the card posted', () => slack.messages[0]);
    expect(card.channel).toBe(`D${LEE.id.slice(1)}`);
    // Its agent's turn over before the world is cleaned up (a detached agent still writing would race the rm).
    await w.until(() => w.state('mailer') === 'WAITING_FOR_INPUT' && w.state('docs') === 'AWAITING_MERGE', 'mailer waits');

  });

  it('with no roster the card is not posted (one line saying why), and sleds needs still lists the question', async () => {
    const { w, slack, logs, qid } = await parkedWorld(MAILER, null);
    expect(logs.find((l) => l.includes('not posted — nobody in .sleds/roster.yml'))).toContain(qid);
    expect(w.store.openQuestions().map((q) => q.id)).toEqual([qid]);
    expect(slack.messages).toHaveLength(0);
    await w.until(() => w.state('mailer') === 'WAITING_FOR_INPUT' && w.state('docs') === 'AWAITING_MERGE', 'mailer waits');
  });
});
