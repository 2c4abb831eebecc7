/**
 * A hand-off says what was and was not delivered, where the user looks (issue 12, point 7): the answer at the wall
 * and mid-work says whether Slack will tell the teammate and, when it will not, why and the command to send them by
 * hand; the API's answer (the MCP tool), given once the push is done, says where it went and what Slack said.
 * Two real seats, real git, the fake Slack on the real wire.
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { requestMusher } from '../../hooks/musher-client.js';
import { sleds, status, waitFor, type SledsWorld } from '../support/sleds-env.js';
import { startFakeSlack, type FakeSlack } from '../support/fake-slack.js';
import { handoffsOf, handoffTeam, hookIn, writeTranscript } from '../support/handoff-team.js';
import { limitAhead } from '../support/limit-ahead.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const TOKEN = 'xoxb-1111-2222-SECRET';
const DANA_SLACK = 'U0DANA001';
const SESSION = '9e1d0c3e-7b2f-4e9a-8c61-0d2f3a4b5c6f';
const ID = /\/sled pickup ([2-9a-km-np-z]{12})/;

/** The fake Slack, named in the sender's config.yml (read as musher starts). */
async function fakeSlack(): Promise<FakeSlack> {
  const slack = await startFakeSlack({ token: TOKEN, known: [DANA_SLACK] });
  cleanups.push(() => slack.close());
  return slack;
}

/** The bot token, as the user sets it (musher reads it at each post: no restart). */
async function setToken(w: SledsWorld): Promise<void> {
  const set = await sleds(w, ['slack', 'set-token'], `${TOKEN}\n`);
  expect(set.code, set.stderr).toBe(0);
}

/** jake's session changes cart.ts (dana's area) after one prompt; its transcript is where Claude Code keeps it. */
async function jakeWorking(w: SledsWorld, cwd: string): Promise<string> {
  const tx = join(w.claudeDir, 'projects', cwd.replace(/[^A-Za-z0-9]/g, '-'), `${SESSION}.jsonl`);
  writeTranscript(tx, SESSION, cwd, 'fix the cart total');
  await hookIn(w, 'SessionStart', SESSION, cwd, { source: 'startup', model: 'claude-opus-5-5', transcript_path: tx });
  await hookIn(w, 'UserPromptSubmit', SESSION, cwd, { prompt: 'fix the cart total', transcript_path: tx });
  writeFileSync(join(cwd, 'cart.ts'), 'export const total = 2; // half done\n');
  return tx;
}

describe('a hand-off says what was and was not delivered', { timeout: 120_000 }, () => {
  it('at a wall with no Slack token: the answer says Slack was not told, why, and what to tell dana', async () => {
    const t = await handoffTeam([{ handle: 'jake', name: 'Jake' }, { handle: 'dana', name: 'Dana', areas: ['*.ts'], slack: DANA_SLACK }], cleanups);
    const jake = t.seats[0]!;
    const tx = await jakeWorking(jake, t.a);
    await hookIn(jake, 'StopFailure', SESSION, t.a, { error: 'rate_limit', transcript_path: tx, last_assistant_message: limitAhead().message });
    await waitFor('the wall and its snapshot', async () => (await status(jake)).wallBook.find((b) => b.snapshotId));

    const answer = (await hookIn(jake, 'UserPromptSubmit', SESSION, t.a, { prompt: '/sled 5 dana' })).reason ?? '';
    const id = ID.exec(answer)?.[1];
    expect(id, answer).toBeDefined();
    expect(answer).toContain(`Not sent on Slack (no Slack bot token — sleds slack set-token): tell Dana: /sled pickup ${id}`);
    await waitFor('the push', async () => (await handoffsOf(jake)).find((h) => h.id === id && h.state === 'sent'), 30_000);
  });

  it('mid-work, with a token but no slack id for dana: the answer says so and names the roster entry to fix', async () => {
    const slack = await fakeSlack();
    const t = await handoffTeam([{ handle: 'jake', name: 'Jake', config: { upstreams: { slack: slack.apiUrl } } }, { handle: 'dana', name: 'Dana', areas: ['*.ts'] }], cleanups);
    const jake = t.seats[0]!;
    await setToken(jake);
    await jakeWorking(jake, t.a);
    const answer = (await hookIn(jake, 'UserPromptSubmit', SESSION, t.a, { prompt: '/sled handoff dana' })).reason ?? '';
    const id = ID.exec(answer)?.[1];
    expect(id, answer).toBeDefined();
    expect(answer).toContain(`Not sent on Slack (dana has no slack id in .sleds/roster.yml): tell Dana: /sled pickup ${id}`);
    await waitFor('the push', async () => (await handoffsOf(jake)).find((h) => h.id === id && h.state === 'sent'), 30_000);
    expect(slack.messages).toEqual([]);
  });

  it('the API answers once it is pushed: where it went, and that Slack told dana (or what Slack said)', async () => {
    const slack = await fakeSlack();
    const t = await handoffTeam([{ handle: 'jake', name: 'Jake', config: { upstreams: { slack: slack.apiUrl } } }, { handle: 'dana', name: 'Dana', areas: ['*.ts'], slack: DANA_SLACK }], cleanups);
    const jake = t.seats[0]!;
    await setToken(jake);
    await jakeWorking(jake, t.a);
    const answerOf = async (): Promise<{ line: string; id: string }> => {
      const res = await requestMusher(jake.socket, 'POST', '/v1/handoffs', JSON.stringify({ sessionId: SESSION, to: 'dana' }), { 'content-type': 'application/json' }, 60_000);
      expect(res.status, res.body).toBe(200);
      return JSON.parse(res.body) as { line: string; id: string };
    };

    const told = await answerOf();
    expect(told.line).toContain(`Pushed to git remote origin (${t.remote}); Slack told Dana.`);
    expect(slack.messages.map((m) => m.channel)).toHaveLength(1);

    slack.script({ kind: 'error', error: 'channel_not_found' });
    const refused = await answerOf();
    expect(refused.line).toContain(`Pushed to git remote origin (${t.remote}); not sent on Slack (Slack does not know dana's slack id ${DANA_SLACK} (channel_not_found)`);
    expect(refused.line).toContain(`: tell Dana: /sled pickup ${refused.id}`);
  });
});
