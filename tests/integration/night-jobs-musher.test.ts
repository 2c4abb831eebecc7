/**
 * Overnight jobs through a real musher (issue 15 § 1): `/sled overnight [cap $N]` in a session and exit 3 at its wall
 * each make a one-node overnight route that `sleds queue` lists by its key; over its cap a job is refused with its band.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sleds, startMusher, status, waitFor, type SledsWorld } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';
import { limitAhead } from '../support/limit-ahead.js';

const newWorld = useWorlds();
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const SESSION = 'night-sess-1';
const PROMPT = 'Tidy the mailer: split send() into build and deliver, keep the tests green.';

type Queue = { jobs: Array<{ job: string; kind: string; state: string; title: string; band: { lowUsd: number; highUsd: number } | null; capMicros: number | null }> };

/** A repository whose policy's overnight window opens two hours from now (UTC), so the jobs wait for it. */
function repoWithWindow(cap: string | null): string {
  const d = mkdtempSync(join(tmpdir(), 'sl-night-musher-'));
  dirs.push(d);
  execFileSync('git', ['init', '-q', d]);
  mkdirSync(join(d, '.sleds'));
  const from = new Date(Date.now() + 2 * 3_600_000);
  const to = new Date(from.getTime() + 4 * 3_600_000);
  const hhmm = (x: Date) => `${String(x.getUTCHours()).padStart(2, '0')}:00`;
  writeFileSync(join(d, '.sleds', 'policy.yml'), `overnight: {from: "${hhmm(from)}", to: "${hhmm(to)}"${cap ? `, cap: "${cap}"` : ''}}\n`);
  return d;
}

async function world(repo: string): Promise<{ w: SledsWorld; prompt: (text: string) => Promise<string | undefined>; hook: (event: string, body: Record<string, unknown>) => Promise<unknown> }> {
  const w = newWorld({ SLEDS_NO_AUTOSTART: '1', SLEDS_SEAT: 'dana', SLEDS_KEYRING: 'file' });
  await startMusher(w);
  // The batch tier runs on the platform key.
  const key = await sleds(w, ['key', 'set', 'anthropic'], 'sk-ant-api03-NIGHTJOBTEST-0123456789abcdef\n');
  expect(key.code, key.stderr).toBe(0);
  const hook = async (event: string, body: Record<string, unknown>) => {
    const r = await sleds(w, ['hook', event], JSON.stringify({ session_id: SESSION, cwd: repo, hook_event_name: event, ...body }));
    expect(r.code, r.stderr).toBe(0);
    return r.stdout ? JSON.parse(r.stdout) : null;
  };
  const prompt = async (text: string) => ((await hook('UserPromptSubmit', { prompt: text })) as { reason?: string } | null)?.reason;
  await hook('SessionStart', { source: 'startup', model: 'claude-opus-5-5' });
  expect(await prompt(PROMPT)).toBeUndefined();
  return { w, prompt, hook };
}

const queue = async (w: SledsWorld) => {
  const r = await sleds(w, ['queue', '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Queue;
};

describe('overnight jobs through musher', { timeout: 60_000 }, () => {
  it('/sled overnight cap $20 queues the session’s task as a job at ½ price under that cap; over its cap it is refused with the band', async () => {
    const repo = repoWithWindow(null);
    const { w, prompt } = await world(repo);

    const answer = await prompt('/sled overnight cap $20');
    expect(answer).toMatch(/^sled: queued task [a-z2-9]{12} as overnight job night-[a-z0-9]{6} for the window \(\d{1,2}:00[ap]m–\d{1,2}:00[ap]m\) on the batch tier at ½ price: \$[0-9.]+–[0-9.]+, cap \$20\. /);
    expect(answer).toContain("It starts fresh from the task's request in its own worktree.");
    const job = /overnight job (night-[a-z0-9]{6})/.exec(answer!)![1]!;
    expect(answer).toContain(`'sleds queue cancel ${job}' undoes it.`);
    const listed = (await queue(w)).jobs;
    expect(listed).toEqual([expect.objectContaining({ job, kind: 'job', state: 'QUEUED', title: PROMPT.slice(0, 80), capMicros: 20_000_000 })]);
    expect(listed[0]!.band).not.toBeNull();

    // The band at ½ price starts above a cap of five cents: refused with the band, nothing made.
    const refused = await prompt('/sled overnight cap $0.05');
    expect(refused).toMatch(/^sled: refused: its band at ½ price is \$[0-9.]+–[0-9.]+, over its cap of \$0\.05 — raise it: \/sled overnight cap \$[0-9.]+$/);
    expect((await queue(w)).jobs.map((j) => j.job)).toEqual([job]);
    expect(await prompt('/sled overnight cap twenty')).toBe("sled: 'cap twenty' is not a cap — write cap $20");
    expect((await prompt('/sled help'))).toContain('/sled overnight [cap $N]');
  });

  it('exit 3 at a wall makes a job that resumes the session; the answer names it; /sled cancel ends it', async () => {
    const repo = repoWithWindow('$12');
    const { w, prompt, hook } = await world(repo);
    const limit = limitAhead();
    await hook('StopFailure', { error: 'rate_limit', last_assistant_message: limit.message });
    const wallId = await waitFor('the wall to open', async () => (await status(w)).wallBook[0]?.wallId);

    // Over its own cap at ½ price: refused with the band, nothing queued, the wall still open.
    const over = await prompt('/sled 3 cap $0.05');
    expect(over).toMatch(/refused: its band at ½ price is \$[0-9.]+–[0-9.]+, over its cap of \$0\.05 — raise it: \/sled 3 cap \$[0-9.]+/);
    expect((await queue(w)).jobs).toEqual([]);

    const taken = await prompt('/sled 3');
    expect(taken).toMatch(/^3 Run overnight\. Queued as overnight job night-[a-z0-9]{6} for tonight's window \(\d{1,2}:00[ap]m–\d{1,2}:00[ap]m\) on the batch tier at ½ price \(\$[0-9.]+–[0-9.]+, cap \$12\): this session resumes headless where it stopped, in its own worktree\. `sleds queue` shows it; \/sled cancel undoes it\./);
    const job = /overnight job (night-[a-z0-9]{6})/.exec(taken!)![1]!;
    expect((await queue(w)).jobs).toEqual([expect.objectContaining({ job, kind: 'job', state: 'QUEUED', capMicros: 12_000_000 })]);
    const shown = await sleds(w, ['route', 'show', job, '--json']);
    expect(shown.code, shown.stderr).toBe(0);
    expect((JSON.parse(shown.stdout) as { route: { notes: string; filePath: string } }).route).toMatchObject({ notes: `overnight job, queued by exit 3 at wall ${wallId}`, filePath: '' });
    // Nothing of it went on the scheduler: the engine runs it.
    expect((JSON.parse((await sleds(w, ['jobs', '--json'])).stdout) as { jobs: unknown[] }).jobs).toEqual([]);

    expect(await prompt('/sled cancel')).toMatch(/^sled: cancelled 3 at wall /);
    expect((await queue(w)).jobs).toEqual([expect.objectContaining({ job, state: 'CANCELLED' })]);
  });
});
