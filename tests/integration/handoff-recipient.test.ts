/**
 * Who a hand-off at a wall goes to (issue 12, points 6 and 10): a teammate named in the roster is always a valid
 * recipient, whether or not they own the changed files; with no name, the owner; with neither, the card names who
 * can be named. Two real seats, real git, the real seal and transport.
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { status, waitFor, type SledsWorld } from '../support/sleds-env.js';
import { git, handoffsOf, handoffTeam, hookIn, writeTranscript } from '../support/handoff-team.js';
import { limitAhead } from '../support/limit-ahead.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const SESSION = '7c1d0c3e-7b2f-4e9a-8c61-0d2f3a4b5c6e';

/** jake's session in his clone changes cart.ts, then hits the 5-hour wall (Claude Code's StopFailure). */
async function jakeAtWall(w: SledsWorld, cwd: string): Promise<string> {
  const tx = join(w.claudeDir, 'projects', cwd.replace(/[^A-Za-z0-9]/g, '-'), `${SESSION}.jsonl`);
  writeTranscript(tx, SESSION, cwd, 'fix the cart total');
  await hookIn(w, 'SessionStart', SESSION, cwd, { source: 'startup', model: 'claude-opus-5-5', transcript_path: tx });
  await hookIn(w, 'UserPromptSubmit', SESSION, cwd, { prompt: 'fix the cart total', transcript_path: tx });
  writeFileSync(join(cwd, 'cart.ts'), 'export const total = 2; // half done\n');
  await hookIn(w, 'StopFailure', SESSION, cwd, { error: 'rate_limit', transcript_path: tx, last_assistant_message: limitAhead().message });
  const wall = await waitFor('the wall and its snapshot', async () => (await status(w)).wallBook.find((b) => b.snapshotId));
  return wall.wallId;
}

describe('the hand-off at a wall goes to the teammate named', { timeout: 120_000 }, () => {
  it('/sled 5 dana hands off to dana, in the roster but owning none of the changed files; the card says to name her', async () => {
    const t = await handoffTeam([{ handle: 'jake', name: 'Jake' }, { handle: 'dana', name: 'Dana', areas: ['docs/**'] }], cleanups);
    const [jake] = t.seats;
    const wallId = await jakeAtWall(jake!, t.a);

    const card = (await hookIn(jake!, 'UserPromptSubmit', SESSION, t.a, { prompt: '/sled exits' })).reason ?? '';
    expect(card).toContain('5 Hand off          — Dana owns none of the changed files — /sled 5 dana');

    const answer = await hookIn(jake!, 'UserPromptSubmit', SESSION, t.a, { prompt: '/sled 5 dana' });
    expect(answer.decision).toBe('block');
    const id = /^5 Hand off to Dana\. Handed off to Dana\. Dana picks it up in Claude Code with \/sled pickup ([2-9a-km-np-z]{12})/.exec(answer.reason ?? '')?.[1];
    expect(id, answer.reason).toBeDefined();
    expect((await status(jake!)).wallBook.find((b) => b.wallId === wallId)).toMatchObject({ choice: 'handoff' });
    await waitFor('the push', async () => (await handoffsOf(jake!)).find((h) => h.id === id && h.state === 'sent'), 30_000);
    expect(git(t.remote, 'for-each-ref', '--format=%(refname)')).toContain(`refs/sleds/handoffs/${id}`);
  });

  it('a name not in the roster is refused with the names that can be given, and the wall is left as it was', async () => {
    const t = await handoffTeam([{ handle: 'jake', name: 'Jake' }, { handle: 'dana', name: 'Dana', areas: ['docs/**'] }], cleanups);
    const [jake] = t.seats;
    const wallId = await jakeAtWall(jake!, t.a);
    const before = (await status(jake!)).wallBook.find((b) => b.wallId === wallId);
    const answer = await hookIn(jake!, 'UserPromptSubmit', SESSION, t.a, { prompt: '/sled 5 zed' });
    expect(answer.reason).toMatch(/^sled: 5 Hand off cannot be taken here: zed is not in the roster \(\.sleds\/roster\.yml\) — \/sled 5 dana\./);
    expect((await status(jake!)).wallBook.find((b) => b.wallId === wallId)).toEqual(before);
    expect(await handoffsOf(jake!)).toEqual([]);
  });

  it('with no name the owner of the changed files gets it, as before', async () => {
    const t = await handoffTeam([{ handle: 'jake', name: 'Jake' }, { handle: 'dana', name: 'Dana', areas: ['*.ts'] }], cleanups);
    const [jake] = t.seats;
    await jakeAtWall(jake!, t.a);
    // The default policy holds by itself here; the card is still one command away.
    const card = (await hookIn(jake!, 'UserPromptSubmit', SESSION, t.a, { prompt: '/sled exits' })).reason ?? '';
    expect(card).toMatch(/5 Hand off to Dana {2}Slack \+ \/sled pickup/);
    const answer = await hookIn(jake!, 'UserPromptSubmit', SESSION, t.a, { prompt: '/sled 5' });
    expect(answer.reason).toMatch(/^5 Hand off to Dana\. Handed off to Dana\./);
  });

  it('mid-work, with no name and nobody owning the changed files: the answer names who can be named, and nothing is sealed', async () => {
    const t = await handoffTeam([{ handle: 'jake', name: 'Jake' }, { handle: 'dana', name: 'Dana', areas: ['docs/**'] }], cleanups);
    const [jake] = t.seats;
    const tx = join(jake!.claudeDir, 'projects', t.a.replace(/[^A-Za-z0-9]/g, '-'), `${SESSION}.jsonl`);
    writeTranscript(tx, SESSION, t.a, 'fix the cart total');
    await hookIn(jake!, 'UserPromptSubmit', SESSION, t.a, { prompt: 'fix the cart total', transcript_path: tx });
    writeFileSync(join(t.a, 'cart.ts'), 'export const total = 2;\n');
    const answer = await hookIn(jake!, 'UserPromptSubmit', SESSION, t.a, { prompt: '/sled handoff', transcript_path: tx });
    expect(answer.reason).toBe('sled: hand-off not sent: to whom? nobody in the roster owns the changed files — name one: /sled handoff dana');
    expect(await handoffsOf(jake!)).toEqual([]);
  });
});
