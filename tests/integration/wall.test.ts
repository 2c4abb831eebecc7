import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, sleds, startMusher, status, waitFor, type SledsWorld } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';
import { limitAhead } from '../support/limit-ahead.js';

const newWorld = useWorlds();

async function world(env: NodeJS.ProcessEnv = {}): Promise<SledsWorld> {
  const w = newWorld({ SLEDS_NO_AUTOSTART: '1', SLEDS_SEAT: 'dana', ...env });
  await startMusher(w);
  return w;
}

const SESSION = 'wall-sess-1';
const hook = (w: SledsWorld, event: string, body: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) =>
  sleds(w, ['hook', event], JSON.stringify({ session_id: SESSION, cwd: '/tmp', hook_event_name: event, ...body }), env);

async function prompt(w: SledsWorld, text: string, env: NodeJS.ProcessEnv = {}): Promise<{ decision?: string; reason?: string; systemMessage?: string } | null> {
  const r = await hook(w, 'UserPromptSubmit', { prompt: text }, env);
  expect(r.code).toBe(0);
  return r.stdout ? JSON.parse(r.stdout) : null;
}

/** Claude Code's StopFailure at a 5-hour wall (shared/facts/claude-code.md §3), resetting three hours from now. */
const LIMIT = limitAhead();
async function hitWall(w: SledsWorld): Promise<string> {
  await hook(w, 'SessionStart', { source: 'startup', model: 'claude-opus-5-5' });
  await hook(w, 'StopFailure', { error: 'rate_limit', last_assistant_message: LIMIT.message });
  const s = await waitFor('the wall to open', async () => ((await status(w)).wallBook.length > 0 ? status(w) : null));
  return s.wallBook[0]!.wallId;
}

describe('at the wall', () => {
  it('the next prompt is blocked with the card; each exit that cannot apply says why', async () => {
    const w = await world();
    const wallId = await hitWall(w);
    expect(wallId).toMatch(/^[2-9a-km-np-z]{12}$/);
    const snapshotId = await waitFor('the snapshot', async () => (await status(w)).wallBook[0]?.snapshotId);
    const shown = await sleds(w, ['snapshot', 'show', snapshotId, '--json']);
    expect(shown.code).toBe(0);
    expect(JSON.stringify(JSON.parse(shown.stdout))).toContain(SESSION);
    const answer = await prompt(w, 'keep going with the refactor');
    expect(answer?.decision).toBe('block');
    const card = answer!.reason!;
    expect(card).toMatch(/^Wall: usage limit reached\. Session snapshotted\./);
    expect(card).toMatch(new RegExp(`Provider: 5-hour limit reached\\. Resets ${LIMIT.when}\\.`));
    expect(card).toContain('Remaining work: estimate: none');
    expect(card).toContain('1 Continue now      — no platform key configured (sleds key set anthropic)');
    expect(card).toMatch(new RegExp(`2 Hold until reset  free · resumes ${LIMIT.when}`));
    expect(card).toContain('3 Run overnight     — no platform key configured (sleds key set anthropic); the batch tier runs on it');
    expect(card).toContain('4 Switch model      — sonnet 5.5 · no platform key configured (sleds key set anthropic)');
    expect(card).toContain('5 Hand off          — no teammate in the roster (.sleds/roster.yml)');
    expect(card).toContain(`Reply /sled 1 … /sled 6.  wall ${wallId}`);

    const refused = await prompt(w, '/sled 1');
    expect(refused?.reason).toMatch(/^sled: 1 Continue now cannot be taken here: no platform key configured/);
    // At a wall, `/sled handoff` is exit 5 and says why it cannot be taken, like `/sled 5`.
    expect((await prompt(w, '/sled handoff dana'))?.reason).toMatch(/^sled: 5 Hand off cannot be taken here: no teammate in the roster/);
    expect((await status(w)).wallBook[0]).toMatchObject({ state: 'open', choice: null });
  });

  it('/sled 2 holds: prompts before the reset say so, /sled cancel reopens the wall, the statusline shows it', async () => {
    const w = await world();
    const wallId = await hitWall(w);
    const line = await sleds(w, ['statusline'], JSON.stringify({ session_id: SESSION, model: { display_name: 'Opus' } }), { NO_COLOR: '1' });
    expect(line.stdout.split('\n')[1]).toBe(`⛔ wall ${wallId} · 2 hold → ${LIMIT.short} · 6 defer`);

    const held = await prompt(w, '/sled 2');
    expect(held?.reason).toMatch(new RegExp(`^2 Hold until reset\\. Holding: Claude Code continues by itself at ${LIMIT.when}\\.`));
    expect((await status(w)).wallBook[0]).toMatchObject({ state: 'chosen', choice: 'hold', chosenBy: 'user' });
    const again = await prompt(w, 'are we there yet');
    expect(again?.reason).toMatch(new RegExp(`^sled: holding until ${LIMIT.when}; Claude Code continues by itself then\\.`));

    const cancelled = await prompt(w, '/sled cancel');
    expect(cancelled?.reason).toBe(`sled: cancelled 2 at wall ${wallId}. The wall is open again: /sled 1 … /sled 6.`);
    expect((await prompt(w, 'hello'))?.reason).toMatch(/^Wall: usage limit reached/);
  });

  it('/sled 6 defers to the reset: a job at the reset, the prompts and Claude Code\'s own continue held back, /sled cancel undoes it', async () => {
    const w = await world();
    const wallId = await hitWall(w);
    const deferred = await prompt(w, '/sled 6');
    expect(deferred?.reason).toMatch(new RegExp(`^6 Defer to reset\\. Deferred: this session runs itself headless at ${LIMIT.when} on the same model`));
    const jobs = JSON.parse((await sleds(w, ['jobs', '--json'])).stdout) as { jobs: Array<{ kind: string; wallId: string; state: string; runAt: number; payload: { where: string; sessionId: string } }> };
    expect(jobs.jobs).toHaveLength(1);
    const job = jobs.jobs[0]!;
    expect(job).toMatchObject({ kind: 'defer', wallId, state: 'scheduled', payload: { where: 'headless', sessionId: SESSION } });
    expect(job.runAt).toBe(LIMIT.atMs);

    expect((await prompt(w, 'one more thing'))?.reason).toMatch(/^sled: this session is past its wall by 6 Defer to reset\./);
    const own = await prompt(w, 'Your claude.ai usage limit has reset. Continue the task you were working on when the limit was reached; do not repeat work that is already complete.');
    expect(own?.reason).toMatch(/^sled: not continuing here — this session's work went to 6 Defer to reset/);

    // Taking another exit replaces the scheduled run; cancelling reopens the wall.
    await prompt(w, '/sled 2 +2h');
    const after = JSON.parse((await sleds(w, ['jobs', '--json'])).stdout) as { jobs: Array<{ kind: string; state: string }> };
    expect(after.jobs.map((j) => `${j.kind}:${j.state}`).sort()).toEqual(['defer:cancelled', 'hold:scheduled']);
    expect((await prompt(w, '/sled cancel'))?.reason).toBe(`sled: cancelled 2 at wall ${wallId}. The wall is open again: /sled 1 … /sled 6.`);
    const last = JSON.parse((await sleds(w, ['jobs', '--json'])).stdout) as { jobs: Array<{ state: string }> };
    expect(last.jobs.every((j) => j.state === 'cancelled')).toBe(true);
    expect((await prompt(w, '/sled 6 yesterday'))?.reason).toMatch(/^sled: .*\nThe wall is still open/);
  });

  it("a deferred run set for the hook's whole-minute reset moves to the exact reset when the statusline reports it", async () => {
    const w = await world();
    const wallId = await hitWall(w);
    await prompt(w, '/sled 6');
    type Jobs = { jobs: Array<{ kind: string; state: string; runAt: number; wallId: string }> };
    const before = (JSON.parse((await sleds(w, ['jobs', '--json'])).stdout) as Jobs).jobs;
    expect(before).toHaveLength(1);
    const minuteReset = before[0]!.runAt;
    expect(minuteReset).toBe(LIMIT.atMs);
    // The statusline's resets_at is exact (epoch seconds): 37 s past the minute the StopFailure text named.
    const exact = minuteReset + 37_000;
    const line = JSON.stringify({ session_id: SESSION, model: { display_name: 'Opus' }, rate_limits: { five_hour: { used_percentage: 100, resets_at: exact / 1000 } } });
    await sleds(w, ['statusline'], line);
    const after = await waitFor('the deferred run to move', async () => {
      const jobs = (JSON.parse((await sleds(w, ['jobs', '--json'])).stdout) as Jobs).jobs;
      return jobs.some((j) => j.state === 'scheduled' && j.runAt === exact) ? jobs : null;
    });
    expect(after.map((j) => `${j.kind}:${j.state}:${j.runAt - minuteReset}`).sort()).toEqual(['defer:cancelled:0', 'defer:scheduled:37000']);
    expect(after.every((j) => j.wallId === wallId)).toBe(true);
    // A time the user typed is theirs: it does not move.
    await prompt(w, '/sled 6 +3h');
    const typed = (JSON.parse((await sleds(w, ['jobs', '--json'])).stdout) as Jobs).jobs.find((j) => j.state === 'scheduled')!;
    await sleds(w, ['statusline'], JSON.stringify({ session_id: SESSION, rate_limits: { five_hour: { used_percentage: 100, resets_at: (exact + 60_000) / 1000 } } }));
    await waitFor('the wall to take the newer reset', async () => ((await status(w)).wallBook.find((b) => b.wallId === wallId)?.resetsAt === exact + 60_000 ? true : null));
    const still = (JSON.parse((await sleds(w, ['jobs', '--json'])).stdout) as Jobs).jobs.filter((j) => j.state === 'scheduled');
    expect(still.map((j) => j.runAt)).toEqual([typed.runAt]);
  });

  it('at amber the statusline names the exits a wall would offer, priced by musher for this session', async () => {
    const w = await world();
    await hook(w, 'SessionStart', { source: 'startup', model: 'claude-opus-5-5' });
    const resetsAt = Math.floor(Date.now() / 1000) + 2 * 3600;
    const at = (pct: number) => JSON.stringify({ session_id: SESSION, model: { id: 'claude-opus-5-5', display_name: 'Opus' }, rate_limits: { five_hour: { used_percentage: pct, resets_at: resetsAt } } });
    // Below amber: no exits named, however often it is drawn.
    expect((await sleds(w, ['statusline'], at(50), { NO_COLOR: '1' })).stdout).not.toContain('at 100%');
    // At 92% the first render prices the exits after it is drawn; a later one shows them.
    const line = await waitFor('the exits on the amber line', async () => {
      const out = (await sleds(w, ['statusline'], at(92), { NO_COLOR: '1' })).stdout;
      return out.includes('at 100%:') ? out : null;
    });
    expect(line).toMatch(/5h 92%/);
    // No platform key here: continuing on the key is not offered; holding to the reset is, with its time.
    expect(line).toMatch(/at 100%: .*hold → \d{1,2}:\d{2}[ap]m/);
    expect(line).not.toMatch(/key \$/);
  });

  it('the workspace policy chooses at the wall by its first matching rule; the card and `sleds policy explain` say which', async () => {
    const w = await world();
    const repo = join(w.root, 'repo');
    mkdirSync(join(repo, '.sleds'), { recursive: true });
    mkdirSync(join(repo, '.git'));
    writeFileSync(
      join(repo, '.sleds', 'policy.yml'),
      ['rules:', '  - name: hand off when the owner is idle', '    when: { owner_idle: 30m }', '    then: handoff', '  - name: hold within a day of the reset', '    when: { reset_within: 24h }', '    then: hold', ''].join('\n'),
    );
    await hook(w, 'SessionStart', { source: 'startup', cwd: repo });
    await hook(w, 'StopFailure', { cwd: repo, error: 'rate_limit', last_assistant_message: LIMIT.message });
    const wall = await waitFor('the policy to choose', async () => (await status(w)).wallBook.find((x) => x.choice !== null));
    expect(wall).toMatchObject({ choice: 'hold', chosenBy: 'policy', state: 'chosen' });
    const held = await hook(w, 'UserPromptSubmit', { cwd: repo, prompt: 'go on' });
    expect(JSON.parse(held.stdout).reason).toMatch(new RegExp(`^sled: holding until ${LIMIT.when}`));
    const card = (await prompt(w, '/sled exits'))!.reason!;
    expect(card).toContain('The policy chose 2 Hold until reset (rule: hold within a day of the reset); the audit log says so.');
    const explained = await sleds(w, ['policy', 'explain', wall.wallId]);
    expect(explained.code, explained.stderr).toBe(0);
    expect(explained.stdout).toMatch(/hand off when the owner is idle/);
    expect(explained.stdout).toMatch(/hold within a day of the reset/);
    expect(explained.stdout).toMatch(/chosen: 2 hold by policy \(rule: hold within a day of the reset\)/);
    expect((await sleds(w, ['policy', 'explain', 'zzzzzzzzzzzz'])).stderr).toMatch(/^sleds: no wall zzzzzzzzzzzz/);
  });

  it("the policy reads the worth of the session's task: /sled worth on the task picks the rule that needs it", async () => {
    const w = await world();
    const repo = join(w.root, 'repo');
    mkdirSync(join(repo, '.sleds'), { recursive: true });
    mkdirSync(join(repo, '.git'));
    writeFileSync(join(repo, '.sleds', 'policy.yml'), ['rules:', '  - name: defer what is worth little', '    when: { worth: low }', '    then: defer', ''].join('\n'));
    await hook(w, 'SessionStart', { source: 'startup', cwd: repo });
    await hook(w, 'UserPromptSubmit', { cwd: repo, prompt: 'Rename the helpers' });
    expect(JSON.parse((await hook(w, 'UserPromptSubmit', { cwd: repo, prompt: '/sled worth low' })).stdout).reason).toContain("this task's worth is now low");
    const tasks = JSON.parse((await sleds(w, ['tasks', '--json'])).stdout) as { tasks: Array<{ title: string; worth: string | null }> };
    expect(tasks.tasks).toEqual([expect.objectContaining({ title: 'Rename the helpers', worth: 'low' })]);
    await hook(w, 'StopFailure', { cwd: repo, error: 'rate_limit', last_assistant_message: LIMIT.message });
    const wall = await waitFor('the policy to choose', async () => (await status(w)).wallBook.find((x) => x.choice !== null));
    expect(wall).toMatchObject({ choice: 'defer', chosenBy: 'policy' });
  });

  it("the card names the roster's owner of the changed files for the hand-off", async () => {
    const w = await world({ SLEDS_SEAT: 'sam' });
    const repo = join(w.root, 'shop');
    mkdirSync(join(repo, '.sleds'), { recursive: true });
    execFileSync('git', ['init', '-q'], { cwd: repo });
    writeFileSync(join(repo, '.sleds', 'roster.yml'), ['teammates:', '  - handle: sam', '    areas: ["**"]', '  - handle: dana', '    name: Dana', '    areas: ["src/**"]', ''].join('\n'));
    mkdirSync(join(repo, 'src'));
    writeFileSync(join(repo, 'src', 'cart.ts'), 'export {};\n');
    await hook(w, 'SessionStart', { source: 'startup', cwd: repo });
    await hook(w, 'StopFailure', { cwd: repo, error: 'rate_limit', last_assistant_message: LIMIT.message });
    await waitFor('the wall', async () => (await status(w)).wallBook.length > 0 || null);
    const card = JSON.parse((await hook(w, 'UserPromptSubmit', { cwd: repo, prompt: 'go on' })).stdout).reason as string;
    expect(card).toContain('5 Hand off to Dana  — Dana owns the changed files; hand-offs are not set up on this machine yet');
  });

  it('/sled exits shows the card again; /sled worth is kept for the policy; outside a wall the exits say there is none', async () => {
    const w = await world();
    expect((await prompt(w, '/sled 2'))?.reason).toMatch(/^sled: no wall in this session/);
    expect((await prompt(w, '/sled worth high'))?.reason).toBe("sled: this task's worth is now high. The policy reads it at the wall.");
    expect((await prompt(w, '/sled worth priceless'))?.reason).toMatch(/'priceless' is not a worth level here — use \/sled worth high\|normal\|low\|none/);
    expect((await prompt(w, '/sled worth'))?.reason).toMatch(/worth is high/);
    await hitWall(w);
    expect((await prompt(w, '/sled exits'))?.reason).toMatch(/^Wall: usage limit reached/);
  });

  it('a process sleds resumed past the wall is not blocked by it', async () => {
    const w = await world();
    const wallId = await hitWall(w);
    expect(await prompt(w, 'continue', { SLEDS_WALL: wallId })).toBeNull();
    expect((await prompt(w, 'continue'))?.decision).toBe('block');
  });

  it('a limit record read back from old history opens no wall', async () => {
    const w = newWorld({ SLEDS_NO_AUTOSTART: '1' });
    const slug = join(w.claudeDir, 'projects', '-path-to-proj');
    mkdirSync(slug, { recursive: true });
    copyFileSync(join(REPO_ROOT, 'tests/fixtures/claude/projects/-path-to-proj/1098c3a4-5b2e-4f7a-9d61-0c3e8a7b2f45.jsonl'), join(slug, '1098c3a4-5b2e-4f7a-9d61-0c3e8a7b2f45.jsonl'));
    await startMusher(w);
    const s = await waitFor('the old limit record to be read', async () => {
      const st = await status(w);
      return st.walls.length > 0 ? st : null;
    });
    expect(s.walls[0]?.source).toBe('claude-transcript');
    expect(s.wallBook).toEqual([]);
  });
});
