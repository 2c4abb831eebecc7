/**
 * A picked-up transcript is history (issue 12, point 1): the bytes a pickup installs are the sender's. Sam walls,
 * hands off, and dana picks up one minute after his wall — inside the window in which a limit record counts as a
 * wall happening now. Her musher reads the installed file, yet opens no wall, blocks none of her prompts, and keeps
 * sam's spend out of her Today; what her own session appends to the same file afterwards is hers, and live.
 * Two seats with their own musher and keys, a bare git repository as the remote, the real seal and transport.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sleds, status, waitFor, type SledsWorld } from '../support/sleds-env.js';
import { handoffTeam, type HookOut } from '../support/handoff-team.js';

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const slug = (dir: string): string => dir.replace(/[^A-Za-z0-9]/g, '-');

const base = (sessionId: string, cwd: string) => ({ isSidechain: false, userType: 'external', entrypoint: 'cli', cwd, sessionId, version: '2.1.328', gitBranch: 'main' });

function userLine(sessionId: string, cwd: string, uuid: string, said: string, at: number): string {
  return JSON.stringify({ ...base(sessionId, cwd), parentUuid: null, type: 'user', message: { role: 'user', content: said }, uuid, timestamp: new Date(at).toISOString() });
}

/** An assistant reply with a real price: 200k input tokens of Opus. */
function replyLine(sessionId: string, cwd: string, uuid: string, messageId: string, at: number): string {
  return JSON.stringify({
    ...base(sessionId, cwd),
    parentUuid: null,
    type: 'assistant',
    requestId: `req_${messageId}`,
    message: { id: messageId, type: 'message', role: 'assistant', model: 'claude-opus-5-5', content: [{ type: 'text', text: 'Noted.' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 200_000, output_tokens: 5_000 } },
    uuid,
    timestamp: new Date(at).toISOString(),
  });
}

/** Claude Code's usage-limit record (shared/facts/claude-code.md §4): exact reset, `five_hour`. */
function limitLine(sessionId: string, cwd: string, uuid: string, at: number, resetsAt: number): string {
  return JSON.stringify({
    ...base(sessionId, cwd),
    parentUuid: null,
    type: 'assistant',
    message: { id: `msg_${uuid}`, model: '<synthetic>', role: 'assistant', stop_reason: 'stop_sequence', content: [{ type: 'text', text: "You've hit your 5-hour limit · resets 8:55pm (UTC)" }], usage: { input_tokens: 0, output_tokens: 0 } },
    requestId: `req_${uuid}`,
    uuid,
    timestamp: new Date(at).toISOString(),
    apiError: 'usage_limit_reached',
    apiErrorParams: { rate_limit_info: { status: 'rejected', resetsAt: Math.floor(resetsAt / 1000), rateLimitType: 'five_hour', overageStatus: 'rejected', isUsingOverage: false } },
    error: 'rate_limit',
    isApiErrorMessage: true,
    apiErrorStatus: 429,
  });
}

async function prompt(w: SledsWorld, sessionId: string, cwd: string, text: string, transcriptPath: string): Promise<HookOut> {
  const r = await sleds(w, ['hook', 'UserPromptSubmit'], JSON.stringify({ session_id: sessionId, prompt: text, cwd, transcript_path: transcriptPath, hook_event_name: 'UserPromptSubmit' }));
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim() === '' ? {} : (JSON.parse(r.stdout) as HookOut);
}

type Row = { id: string; state: string; direction: string; peer: string };
async function handoffs(w: SledsWorld): Promise<Row[]> {
  return JSON.parse((await sleds(w, ['handoffs', '--json'])).stdout).handoffs;
}

/** Sam and dana: keys, a roster naming both (dana owns *.ts), clones of one bare remote, dana has pinned sam's keys, a musher each. */
async function team() {
  const t = await handoffTeam([{ handle: 'sam', name: 'Sam' }, { handle: 'dana', name: 'Dana', areas: ['*.ts'] }], cleanups);
  const [sam, dana] = t.seats as [SledsWorld, SledsWorld];
  const trusted = await sleds(dana, ['keys', 'trust', 'sam', '--yes', '--json'], undefined, {}, t.b);
  expect(trusted.code, trusted.stderr).toBe(0);
  return { ...t, sam, dana };
}

/** Waits until musher has read every byte of the files it follows (`bytes` in all). */
function readUpTo(w: SledsWorld, bytes: number) {
  return waitFor('ingestion to reach the end of the transcript', async () => {
    const s = await status(w);
    return !s.ingest.backfilling && s.ingest.bytesRead === bytes ? s : null;
  }, 30_000);
}

describe('a picked-up transcript is history', { timeout: 120_000 }, () => {
  it("one minute after sam's wall, dana's pickup opens no wall on her seat, blocks nothing and keeps his spend off her Today; her own later limit is a wall", async () => {
    const t = await team();
    const sessionId = '3c1e5f7a-2b4d-4e6f-8a1c-5d7e9f0a1b2c';
    const tx = join(t.sam.claudeDir, 'projects', slug(t.a), `${sessionId}.jsonl`);
    const wallAt = Date.now() - 60_000;
    const resetsAt = Date.now() + 4 * 3_600_000;
    // His work in progress is there when he walls (the wall's snapshot carries it).
    writeFileSync(join(t.a, 'cart.ts'), 'export const total = 2; // half done\n');
    mkdirSync(join(tx, '..'), { recursive: true });
    writeFileSync(tx, [
      userLine(sessionId, t.a, '00000001-1111-4222-8333-000000000001', 'remember the word PELICAN and fix the cart total', wallAt - 120_000),
      replyLine(sessionId, t.a, '00000002-1111-4222-8333-000000000002', 'msg_sam_1', wallAt - 90_000),
      limitLine(sessionId, t.a, '00000003-1111-4222-8333-000000000003', wallAt, resetsAt),
    ].join('\n') + '\n');
    await prompt(t.sam, sessionId, t.a, 'remember the word PELICAN and fix the cart total', tx);
    const samSpend = (await readUpTo(t.sam, readFileSync(tx).length)).today.costMicros;
    expect(samSpend).toBeGreaterThan(0);
    // Sam's own musher takes the record as his wall.
    await waitFor("sam's wall", async () => (await status(t.sam)).wallBook.find((w) => w.sessionId === sessionId), 20_000);

    const answer = await prompt(t.sam, sessionId, t.a, '/sled handoff dana', tx);
    const id = /\/sled pickup ([2-9a-km-np-z]{12})/.exec(answer.reason ?? '')?.[1];
    expect(id, answer.reason).toBeDefined();
    await waitFor('the push', async () => (await handoffs(t.sam)).find((h) => h.id === id && h.state === 'sent'), 30_000);

    const picked = await sleds(t.dana, ['pickup', id!, '--json'], undefined, {}, t.b);
    expect(picked.code, picked.stderr).toBe(0);
    const got = JSON.parse(picked.stdout) as { dir: string; sessionId: string };
    // Installed under the worktree's own project folder, so `claude --continue` there finds it too.
    const installed = join(t.dana.claudeDir, 'projects', slug(got.dir), `${sessionId}.jsonl`);
    expect(readFileSync(installed, 'utf8')).toContain('remember the word PELICAN');
    expect(existsSync(join(t.dana.claudeDir, 'projects', slug(t.a)))).toBe(false);

    const read = await readUpTo(t.dana, readFileSync(installed).length);
    expect(read.wallBook).toEqual([]);
    expect(read.today.costMicros).toBe(0);
    // Her next prompt in the resumed session goes to the model.
    expect(await prompt(t.dana, sessionId, got.dir, 'carry on with the cart total', installed)).not.toHaveProperty('decision');
    expect((await status(t.dana)).wallBook).toEqual([]);
    // The receiver's list says received; the sender's, picked up.
    expect((await handoffs(t.dana)).find((h) => h.id === id)).toMatchObject({ direction: 'received', state: 'received', peer: 'sam' });
    await waitFor("sam's list learns of the pickup", async () => (await handoffs(t.sam)).find((h) => h.id === id && h.state === 'picked_up'), 20_000);

    // What her session appends to that file is hers: her spend counts, and a limit she hits is her wall.
    const now = Date.now();
    appendFileSync(installed, [
      replyLine(sessionId, got.dir, '00000004-1111-4222-8333-000000000004', 'msg_dana_1', now - 2_000),
      limitLine(sessionId, got.dir, '00000005-1111-4222-8333-000000000005', now - 1_000, resetsAt),
    ].join('\n') + '\n');
    const after = await readUpTo(t.dana, readFileSync(installed).length);
    expect(after.today.costMicros).toBe(samSpend); // one reply of hers, priced as his was
    await waitFor("dana's own wall", async () => (await status(t.dana)).wallBook.find((w) => w.sessionId === sessionId), 20_000);
  });
});
