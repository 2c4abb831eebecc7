import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Log } from '../../musher/log.js';
import { FileSecretStore } from '../../musher/secrets/store.js';
import { SLACK_APP_TOKEN_SECRET, SLACK_BOT_TOKEN_SECRET } from '../../musher/notify/slack.js';
import { startSlackQuestions, type AnswerOutcome, type QuestionPost, type SlackAnswer, type SlackQuestions } from '../../musher/notify/slack-questions.js';
import { startFakeSlackSocket, type FakeSlackSocket } from '../support/fake-slack-socket.js';
import { waitFor } from '../support/sleds-env.js';

const BOT = 'xoxb-1234-5678-SECRET-bot';
const APP = 'xapp-1-A0FAKEAPP-SECRET-app';
const DANA = { id: 'U0DANA001', name: 'dana' };
const LEE = { id: 'U0LEE0001', name: 'lee' };
const DM = 'D0DANA001';
const NOW = Date.UTC(2026, 11, 2, 14, 2);

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const QUESTION: QuestionPost = {
  channel: DANA.id,
  questionId: 'eng-503/mailer-q1',
  title: 'eng-503 / mailer asks',
  question: 'Retry the bounce queue now, or wait for the fix?',
  options: [
    { label: 'Retry now', effect: 'band stays $2–$3' },
    { label: 'Wait for the fix', effect: 'band rises to $4–$6' },
  ],
};

interface Rig {
  slack: FakeSlackSocket;
  questions: SlackQuestions;
  logs: string[];
  answers: SlackAnswer[];
  /** onAnswer waits on this gate; `open()` lets the answers through. */
  gate: { open(): void };
}

async function rig(opts: { appToken?: string | null; outcome?: (a: SlackAnswer) => AnswerOutcome; gated?: boolean } = {}): Promise<Rig> {
  const slack = await startFakeSlackSocket({ token: BOT, appToken: APP, known: [DANA.id, LEE.id] });
  cleanups.push(() => slack.close());
  const dir = mkdtempSync(join(tmpdir(), 'sl-questions-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const secrets = new FileSecretStore(dir);
  await secrets.set(SLACK_BOT_TOKEN_SECRET, BOT);
  const appToken = opts.appToken === undefined ? APP : opts.appToken;
  if (appToken !== null) await secrets.set(SLACK_APP_TOKEN_SECRET, appToken);
  const logs: string[] = [];
  const log: Log = { info: (m) => logs.push(m), warn: (m) => logs.push(m), error: (m) => logs.push(m) };
  const answers: SlackAnswer[] = [];
  let open!: () => void;
  const gateOpen = opts.gated ? new Promise<void>((resolve) => (open = resolve)) : Promise.resolve();
  if (!opts.gated) open = () => undefined;
  const questions = startSlackQuestions({
    secrets,
    baseUrl: slack.apiUrl,
    log,
    clock: { now: () => NOW },
    timeZone: 'UTC',
    onAnswer: async (a) => {
      answers.push(a);
      await gateOpen;
      return opts.outcome?.(a) ?? { ok: true, label: a.choice === 'A' ? 'Retry now' : 'Wait for the fix' };
    },
    socketModeOptions: { clientPingTimeout: 2_000, retryDelaysMs: [50] },
  });
  cleanups.push(() => questions.stop());
  return { slack, questions, logs, answers, gate: { open: () => open() } };
}

const text = (blocks: unknown): string => JSON.stringify(blocks);

async function postCard(r: Rig, q: QuestionPost = QUESTION): Promise<{ channel: string; ts: string }> {
  const posted = await r.questions.post(q);
  if (!posted.ok) throw new Error(posted.error);
  return posted;
}

describe('Slack question cards answered over Socket Mode (the real SocketModeClient against a fake Slack)', () => {
  it('posts a card with two buttons; a tap is acked before the answer is recorded, answered once, and the card then says who and when, buttons gone', async () => {
    const r = await rig({ gated: true });
    await waitFor('the Socket Mode link', () => r.questions.connected());
    expect(r.slack.opens).toHaveLength(1);
    expect(r.slack.opens[0]!.headers.authorization).toBe(`Bearer ${APP}`);

    const card = await postCard(r);
    expect(card).toEqual({ ok: true, channel: DM, ts: expect.stringMatching(/^\d+\.\d+$/) });
    const posted = r.slack.messages[0]!;
    expect(r.slack.requests.find((q) => q.path === '/api/chat.postMessage')!.headers.authorization).toBe(`Bearer ${BOT}`);
    expect(posted.text).toContain('Retry the bounce queue now, or wait for the fix?');
    const actions = (posted.blocks as Array<{ type: string; elements?: Array<{ action_id: string; value: string }> }>).find((b) => b.type === 'actions')!;
    expect(actions.elements!.map((e) => [e.action_id, e.value])).toEqual([
      ['sleds_answer_A', 'eng-503/mailer-q1:A'],
      ['sleds_answer_B', 'eng-503/mailer-q1:B'],
    ]);

    // onAnswer is held until the ack is seen: an ack that waited for the answer would never arrive.
    const delivery = await r.slack.press({ channel: DM, ts: card.ts, actionId: 'sleds_answer_B', user: DANA });
    expect(delivery.ack.envelope_id).toBe(delivery.envelopeId);
    await waitFor('onAnswer called', () => r.answers.length === 1);
    expect(r.slack.updates).toHaveLength(0);
    r.gate.open();

    await waitFor('the card updated', () => r.slack.updates.length === 1);
    expect(r.answers).toEqual([
      { questionId: 'eng-503/mailer-q1', choice: 'B', userId: DANA.id, userName: 'dana', channel: DM, messageTs: card.ts, actionTs: expect.stringMatching(/^\d+\.\d+$/), atMs: NOW },
    ]);
    const updated = r.slack.updates[0]!;
    expect(updated).toMatchObject({ channel: DM, ts: card.ts });
    expect(updated.text).toContain('answered by <@U0DANA001> at 2:02pm: Wait for the fix');
    expect(text(updated.blocks)).toContain('Answered by <@U0DANA001> at <!date^');
    expect(text(updated.blocks)).not.toContain('"actions"');
    expect(text(r.slack.messages[0]!.blocks)).not.toContain('sleds_answer_A');
    expect(r.logs.join('\n')).not.toContain('SECRET');
  });

  it('answers once: an envelope Slack delivers again, a second tap and a tap from someone else all leave the first answer', async () => {
    const r = await rig();
    await waitFor('the Socket Mode link', () => r.questions.connected());
    const card = await postCard(r);
    const first = await r.slack.press({ channel: DM, ts: card.ts, actionId: 'sleds_answer_A', user: DANA });
    await waitFor('the card updated', () => r.slack.updates.length === 1);

    const again = await r.slack.redeliver(first.envelopeId);
    expect(again.ack.envelope_id).toBe(first.envelopeId);
    await waitFor('the redelivery noted', () => r.logs.some((l) => l.includes(`envelope ${first.envelopeId} came again`)));

    // Lee's phone still shows the buttons (it had not refreshed): the press carries the old card's button.
    await r.slack.press({ channel: DM, ts: card.ts, actionId: 'sleds_answer_B', value: 'eng-503/mailer-q1:B', blockId: 'sleds_answer:eng-503/mailer-q1', user: LEE });
    await waitFor('the card updated again', () => r.slack.updates.length === 2);
    expect(r.answers).toHaveLength(1);
    expect(r.slack.updates[1]!.text).toContain('answered by <@U0DANA001> at 2:02pm: Retry now');
  });

  it('ignores a forged press — a value naming another question than its card, an unknown question id — with one log line each, no answer', async () => {
    const r = await rig();
    await waitFor('the Socket Mode link', () => r.questions.connected());
    const card = await postCard(r);
    await r.slack.press({ channel: DM, ts: card.ts, actionId: 'sleds_answer_A', value: 'eng-777/other:A', user: DANA });
    await r.slack.press({ channel: DM, ts: card.ts, actionId: 'sleds_answer_A', value: 'eng 503; rm -rf ~:A', blockId: 'sleds_answer:eng 503; rm -rf ~', user: DANA });
    await waitFor('two lines', () => r.logs.filter((l) => l.startsWith('slack: ignored a button press')).length === 2);
    const ignored = r.logs.filter((l) => l.startsWith('slack: ignored a button press'));
    expect(ignored[0]).toContain('names question "eng-777/other" but its card is "sleds_answer:eng-503/mailer-q1"');
    expect(ignored[1]).toContain('is not one sleds makes');
    // A real tap after them still answers: nothing above was recorded.
    await r.slack.press({ channel: DM, ts: card.ts, actionId: 'sleds_answer_A', user: DANA });
    await waitFor('the card updated', () => r.slack.updates.length === 1);
    expect(r.answers.map((a) => [a.questionId, a.choice])).toEqual([['eng-503/mailer-q1', 'A']]);
    expect(r.slack.acks).toHaveLength(3);
  });

  it('a refusal from the store (already answered from the CLI) keeps the buttons and says why under the card', async () => {
    const r = await rig({ outcome: () => ({ ok: false, error: 'already answered B from the CLI at 1:58pm' }) });
    await waitFor('the Socket Mode link', () => r.questions.connected());
    const card = await postCard(r);
    await r.slack.press({ channel: DM, ts: card.ts, actionId: 'sleds_answer_A', user: DANA });
    await waitFor('the card updated', () => r.slack.updates.length === 1);
    expect(text(r.slack.updates[0]!.blocks)).toContain('<@U0DANA001> chose A, but sleds could not record it: already answered B from the CLI at 1:58pm');
    expect(r.logs.some((l) => l.includes('not recorded: already answered B from the CLI'))).toBe(true);
  });

  it('after a refresh_requested disconnect the client connects again (a new apps.connections.open, a second socket) and a tap still answers', async () => {
    const r = await rig();
    await waitFor('the Socket Mode link', () => r.questions.connected());
    const card = await postCard(r);
    r.slack.sendDisconnect('refresh_requested');
    await waitFor('a second connection', () => r.slack.connections === 2 && r.questions.connected());
    expect(r.slack.opens).toHaveLength(2);
    expect(r.logs).toContain('slack: Socket Mode reconnected');
    await r.slack.press({ channel: DM, ts: card.ts, actionId: 'sleds_answer_B', user: DANA });
    await waitFor('the card updated', () => r.slack.updates.length === 1);
    expect(r.answers).toHaveLength(1);
  });

  it('link_disabled (Socket Mode turned off for the app) stops the link with one line, no reconnect loop; cards then go without buttons', async () => {
    const r = await rig();
    await waitFor('the Socket Mode link', () => r.questions.connected());
    r.slack.sendDisconnect('link_disabled');
    await waitFor('the line', () => r.logs.find((l) => l.includes('link_disabled')));
    expect(r.questions.connected()).toBe(false);
    await r.questions.stop();
    expect(r.slack.opens).toHaveLength(1);
    expect(r.slack.connections).toBe(1);
    expect(r.logs.filter((l) => l.includes('link_disabled'))).toHaveLength(1);
    const posted = await r.questions.post(QUESTION);
    expect(posted.ok).toBe(true);
    expect(text(r.slack.messages.at(-1)!.blocks)).not.toContain('sleds_answer_A');
  });

  it('a refused app-level token (invalid_auth) is one line naming sleds slack set-app-token, and no retries', async () => {
    const r = await rig({ appToken: 'xapp-1-WRONG-SECRET' });
    await waitFor('the line', () => r.logs.find((l) => l.includes('invalid_auth')));
    const line = r.logs.find((l) => l.includes('invalid_auth'))!;
    expect(line).toContain('sleds slack set-app-token');
    expect(line).not.toContain('WRONG');
    await r.questions.stop();
    expect(r.slack.opens).toHaveLength(1);
  });

  it('without an app-level token the card still posts (no buttons: they could not be answered) and the log says once how to turn them on', async () => {
    const r = await rig({ appToken: null });
    const card = await postCard(r);
    expect(card.channel).toBe(DM);
    await postCard(r, { ...QUESTION, questionId: 'eng-503/mailer-q2' });
    const blocks = text(r.slack.messages[0]!.blocks);
    expect(blocks).not.toContain('sleds_answer_A');
    expect(blocks).toContain('Answer with `sleds needs`');
    const lines = r.logs.filter((l) => l.includes('sleds slack set-app-token'));
    expect(lines).toHaveLength(1);
    expect(r.questions.connected()).toBe(false);
    expect(r.slack.opens).toHaveLength(0);
  });

  it('refuses to post a question id it would not accept back, without calling Slack', async () => {
    const r = await rig({ appToken: null });
    const posted = await r.questions.post({ ...QUESTION, questionId: 'eng 503' });
    expect(posted).toEqual({ ok: false, error: expect.stringContaining('cannot go on a card') });
    expect(r.slack.requests).toHaveLength(0);
  });
});
