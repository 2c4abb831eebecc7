import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { requestMusher } from '../../hooks/musher-client.js';
import type { DispatchAnswer, PickerAnswer } from '../../core/picker/row.js';
import type { Task } from '../../core/task/task.js';
import { sleds, startMusher, stopMusher, waitFor, type SledsWorld } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';
import { writeSledsConfig } from '../support/sleds-config.js';

const world = useWorlds();
const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const PROMPT = "Fix the flaky login test\n\nIt fails one run in five on CI; don't touch the fixtures.";

function repoDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sleds-pick-repo-'));
  dirs.push(d);
  // A real repository: an overnight job runs in a worktree of its git top-level.
  execFileSync('git', ['init', '-q', d]);
  mkdirSync(join(d, '.sleds'));
  writeFileSync(join(d, '.sleds', 'roster.yml'), 'teammates:\n  - handle: dana\n    name: Dana\n    slack: "@dana"\n  - handle: me\n');
  return d;
}

/** Claude Code and Codex as installed programs (the picker offers only harnesses this machine has). */
function installedHarnesses(): { claude: string; codex: string } {
  const d = mkdtempSync(join(tmpdir(), 'sleds-pick-bin-'));
  dirs.push(d);
  for (const name of ['claude', 'codex']) {
    writeFileSync(join(d, name), '#!/bin/sh\nexit 0\n');
    chmodSync(join(d, name), 0o755);
  }
  return { claude: join(d, 'claude'), codex: join(d, 'codex') };
}

/** A world whose session s1 started a task in `repo` on Opus 5.5, with the bars the statusline reported. */
async function worldWithTask(): Promise<{ w: SledsWorld; repo: string; task: Task; resets: number }> {
  const w = world({ SLEDS_KEYRING: 'file', SLEDS_SEAT: 'me' });
  writeSledsConfig(w, { binaries: installedHarnesses() });
  await startMusher(w);
  const repo = repoDir();
  const hook = await sleds(w, ['hook', 'UserPromptSubmit'], JSON.stringify({ session_id: 's1', prompt: PROMPT, cwd: repo, hook_event_name: 'UserPromptSubmit' }));
  expect(hook.code, hook.stderr).toBe(0);
  const resets = Math.floor(Date.now() / 1000) + 3 * 3600;
  const line = await sleds(
    w,
    ['statusline'],
    JSON.stringify({
      session_id: 's1',
      cwd: repo,
      model: { id: 'claude-opus-5-5', display_name: 'Opus 5.5' },
      rate_limits: { five_hour: { used_percentage: 38, resets_at: resets }, seven_day: { used_percentage: 20, resets_at: resets + 4 * 86400 } },
    }),
  );
  expect(line.code, line.stderr).toBe(0);
  const list = JSON.parse((await sleds(w, ['tasks', '--json'])).stdout) as { tasks: Task[] };
  expect(list.tasks).toHaveLength(1);
  return { w, repo, task: list.tasks[0]!, resets };
}

async function pick(w: SledsWorld, id: string): Promise<PickerAnswer> {
  const r = await sleds(w, ['pick', id, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as PickerAnswer;
}

/** The picker once musher has seen what the test sent (a wall opens after the statusline has answered). */
async function waitForPicker(w: SledsWorld, id: string, ready: (v: PickerAnswer) => boolean): Promise<PickerAnswer> {
  return waitFor('the picker to show the wall', async () => {
    const v = await pick(w, id);
    return ready(v) ? v : null;
  });
}

async function dispatch(w: SledsWorld, id: string, body: unknown): Promise<{ status: number; body: DispatchAnswer & { error?: string } }> {
  const res = await requestMusher(w.socket, 'POST', `/v1/tasks/${id}/dispatch`, JSON.stringify(body), {}, 10_000);
  return { status: res.status, body: JSON.parse(res.body) };
}

describe('sleds pick', () => {
  it('a task with no worth is held; once it has one, each seat has its band, headroom from the bars, and its verb', async () => {
    const { w, task } = await worldWithTask();
    const held = await pick(w, task.id.slice(0, 6));
    expect(held.held).toBe('not worth doing until someone states a worth');
    expect(held.rows.every((r) => r.verb === '—')).toBe(true);
    expect(held.text).toContain('Held: not worth doing until someone states a worth.');

    expect((await sleds(w, ['task', task.id, 'worth', 'high'])).code).toBe(0);
    const view = await pick(w, task.id);
    expect(view.held).toBeNull();
    const here = view.rows.filter((r) => r.kind === 'here').map((r) => [r.harness, r.model, r.verb, r.headroom]);
    expect(here).toEqual([
      ['claude-code', 'claude-opus-5-5', '—', '62% of the bar left'],
      ['claude-code', 'claude-sonnet-5-5', 'Switch', '62% of the bar left'],
      ['claude-code', 'claude-haiku-5-5', 'Switch', '62% of the bar left'],
      ['codex', 'gpt-6-sol', 'Switch', 'no bar seen yet'],
      ['codex', 'gpt-6-luna', 'Switch', 'no bar seen yet'],
    ]);
    expect(view.rows[0]!.reason).toBe('it runs here now (session s1)');
    // No receipts yet: every band is the estimator's labelled prior, priced per model.
    expect(view.rows.filter((r) => r.kind === 'here').every((r) => r.band?.basis === 'prior' && r.bandText.endsWith('(prior)'))).toBe(true);
    const [opus, sonnet] = view.rows;
    expect(sonnet!.band!.highMicros).toBeLessThan(opus!.band!.highMicros);
    // No platform key: the batch tier says why. Teammates from the roster (not this seat), and a person.
    expect(view.rows.find((r) => r.kind === 'overnight')).toMatchObject({ verb: '—', reason: "no platform key for anthropic: the batch tier runs on it ('sleds key set anthropic')" });
    expect(view.rows.filter((r) => r.kind === 'teammate').map((r) => [r.seat, r.verb])).toEqual([['dana', 'Offer']]);
    expect(view.rows.at(-1)).toMatchObject({ kind: 'person', verb: 'Offer' });
    expect(view.text).toMatch(/^Task [a-z2-9]{12} "Fix the flaky login test", worth high \(\$200\)\. Best: /);

    // Without --json and without a terminal: the paragraph and the rows in words.
    const words = await sleds(w, ['pick', task.id]);
    expect(words.code, words.stderr).toBe(0);
    expect(words.stdout).toContain(view.text);
    expect(words.stdout).toContain(' 2  Claude Code · sonnet 5.5: ');
  });

  it('taking a verb: Switch gives the exact command, Queue makes an overnight job (sized and capped), Hand off says why not, Offer says what to send', async () => {
    const { w, repo, task } = await worldWithTask();
    await sleds(w, ['task', task.id, 'worth', 'high']);

    const sw = await dispatch(w, task.id, { row: 2 });
    expect(sw.status).toBe(200);
    expect(sw.body.ok).toBe(true);
    expect(sw.body.command).toEqual({ argv: ['claude', '--model', 'claude-sonnet-5-5', '--', PROMPT], cwd: repo });
    expect(sw.body.line).toBe(`Switch task ${task.id} to Claude Code · sonnet 5.5: cd ${repo} && claude --model claude-sonnet-5-5 -- 'Fix the flaky login test\n\nIt fails one run in five on CI; don'\\''t touch the fixtures.'`);

    const closed = await dispatch(w, task.id, { row: 1 });
    expect(closed.body).toEqual({ ok: false, line: 'Claude Code · opus 5.5 is not offered: it runs here now (session s1)' });

    const handoff = await dispatch(w, task.id, { verb: 'Hand off' });
    expect(handoff.body).toEqual({ ok: false, line: `no row of task ${task.id} offers Hand off now — 'sleds pick ${task.id}' shows why` });
    const offer = await dispatch(w, task.id, { verb: 'Offer' });
    expect(offer.body.ok).toBe(true);
    expect(offer.body.line).toMatch(new RegExp(`^Send dana \\(Slack @dana\\): "Can you take task ${task.id}, Fix the flaky login test\\? sleds sizes it \\$[0-9.–]+ · [0-9–]+ min \\(prior\\) on opus 5\\.5\\. To start: cd `));

    // The batch tier needs the platform key: with one, Queue makes the overnight job, a one-node route the engine runs.
    expect((await dispatch(w, task.id, { verb: 'Queue' })).body.ok).toBe(false);
    const key = await sleds(w, ['key', 'set', 'anthropic'], 'sk-ant-api03-PICKERTEST-0123456789abcdef\n');
    expect(key.code, key.stderr).toBe(0);
    // A window two hours from now (the world runs in UTC), so the job waits for it whatever the hour of the test.
    const from = new Date(Date.now() + 2 * 3_600_000);
    const hhmm = (d: Date): string => `${String(d.getUTCHours()).padStart(2, '0')}:00`;
    const words = (d: Date): string => `${d.getUTCHours() % 12 || 12}:00${d.getUTCHours() < 12 ? 'am' : 'pm'}`;
    const to = new Date(from.getTime() + 2 * 3_600_000);
    writeFileSync(join(repo, '.sleds', 'policy.yml'), `overnight: {from: "${hhmm(from)}", to: "${hhmm(to)}"}\n`);
    const opusBand = (await pick(w, task.id)).rows.find((r) => r.kind === 'overnight')!.band!;
    const queued = await dispatch(w, task.id, { verb: 'Queue' });
    expect(queued.body.ok, queued.body.line).toBe(true);
    const jobId = /: job (night-[a-z0-9]{6})\./.exec(queued.body.line)![1]!;
    expect(queued.body.line).toContain(`for the overnight window (${words(from)}–${words(to)}) on the batch tier at ½ price on opus 5.5, `);
    expect(queued.body.line).toContain(`with a cap of $10: job ${jobId}. 'sleds queue' shows it; 'sleds queue cancel ${jobId}' undoes it.`);
    type Queue = { jobs: Array<{ job: string; kind: string; state: string; title: string; band: { lowUsd: number; highUsd: number } | null; capMicros: number | null; note: string | null }> };
    const queue = async () => JSON.parse((await sleds(w, ['queue', '--json'])).stdout) as Queue;
    const listed = (await queue()).jobs;
    expect(listed).toHaveLength(1);
    // Sized at ½ price (the batch tier), under the policy's default cap ($10), armed and waiting for the window.
    expect(listed[0]).toMatchObject({ job: jobId, kind: 'job', state: 'QUEUED', title: 'Fix the flaky login test', capMicros: 10_000_000 });
    expect(listed[0]!.band!.lowUsd).toBeCloseTo(opusBand.lowMicros / 2e6, 2);
    expect(listed[0]!.band!.highUsd).toBeCloseTo(opusBand.highMicros / 2e6, 2);
    expect(listed[0]!.note).toMatch(/^the window opens at /);
    const route = JSON.parse((await sleds(w, ['route', 'show', jobId, '--json'])).stdout) as { route: { repoRoot: string; mode: string; filePath: string }; waves: Array<Array<{ nodeId: string; armed: boolean; harness: string; model: string }>> };
    expect(route.route).toMatchObject({ repoRoot: realpathSync(repo), mode: 'auto', filePath: '' });
    expect(route.waves).toEqual([[expect.objectContaining({ nodeId: 'job', armed: true, harness: 'claude-code', model: 'claude-opus-5-5' })]]);
    // Nothing went on the scheduler: the engine runs it.
    expect((JSON.parse((await sleds(w, ['jobs', '--json'])).stdout) as { jobs: Array<{ kind: string }> }).jobs.filter((j) => j.kind === 'overnight')).toEqual([]);

    // A cap under the band's low end at ½ price: refused with the band, and nothing is made.
    writeFileSync(join(repo, '.sleds', 'policy.yml'), `overnight: {from: "${hhmm(from)}", to: "${hhmm(to)}", cap: "$0.05"}\n`);
    const refused = await dispatch(w, task.id, { verb: 'Queue' });
    expect(refused.body.ok).toBe(false);
    expect(refused.body.line).toMatch(/^refused: its band at ½ price is \$[0-9.]+–[0-9.]+, over its cap of \$0\.05 — raise it: a cap in the policy's overnight block, e.g. cap: \$[0-9.]+$/);
    expect((await queue()).jobs.map((j) => j.job)).toEqual([jobId]);

    const cancelled = await sleds(w, ['queue', 'cancel', jobId, '--json']);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(JSON.parse(cancelled.stdout)).toMatchObject({ job: jobId, state: 'CANCELLED' });

    // The session the command starts sends the task's prompt first: it joins the task instead of starting another.
    await sleds(w, ['hook', 'UserPromptSubmit'], JSON.stringify({ session_id: 's2', prompt: PROMPT, cwd: repo, hook_event_name: 'UserPromptSubmit' }));
    const shown = JSON.parse((await sleds(w, ['task', task.id, '--json'])).stdout) as { sessions: string[] };
    expect(shown.sessions).toEqual(['s1', 's2']);
    expect((JSON.parse((await sleds(w, ['tasks', '--json'])).stdout) as { tasks: Task[] }).tasks).toHaveLength(1);
  });

  it('at a wall: the full bar closes its rows with the reset, the wall line says so, and a teammate row turns to Hand off (or says why it cannot)', async () => {
    const { w, repo, task, resets } = await worldWithTask();
    await sleds(w, ['task', task.id, 'worth', 'normal']);
    const full = JSON.stringify({ session_id: 's1', cwd: repo, model: { id: 'claude-opus-5-5' }, rate_limits: { five_hour: { used_percentage: 100, resets_at: resets } } });
    expect((await sleds(w, ['statusline'], full)).code).toBe(0);
    const view = await waitForPicker(w, task.id, (v) => v.rows.some((r) => r.kind === 'teammate' && r.verb !== 'Offer') && v.rows[1]!.headroomPct === 0);
    // A reset past midnight (UTC, the world's zone) names its day: "it resets at Wednesday 12:08 am UTC".
    const day = new Date(resets * 1000).getUTCDate() !== new Date().getUTCDate() ? `${new Date(resets * 1000).toLocaleDateString('en-US', { weekday: 'long', timeZone: 'UTC' })} ` : '';
    expect(view.wallLine).toMatch(new RegExp(`^the 5-hour bar is full; it resets at ${day}\\d{1,2}:\\d{2} [ap]m UTC$`));
    expect(view.rows[1]).toMatchObject({ model: 'claude-sonnet-5-5', verb: '—', headroom: '0% of the bar left' });
    expect(view.rows[1]!.reason).toMatch(/^the 5-hour bar is full until \d{1,2}:\d{2}[ap]m$/);
    expect(view.rows.find((r) => r.harness === 'codex')!.verb).toBe('Switch');
    // This machine has no hand-off keys: the row says what to do rather than offering a hand-off that would fail.
    expect(view.rows.find((r) => r.kind === 'teammate')).toMatchObject({ seat: 'dana', verb: '—', reason: "hand-offs are not set up on this machine — 'sleds keys init'" });
  });

  it('a musher restarted between the Dispatch and the new session\'s first prompt still lands that session on the task', async () => {
    const { w, repo, task } = await worldWithTask();
    await sleds(w, ['task', task.id, 'worth', 'high']);
    const sw = await dispatch(w, task.id, { row: 2 });
    expect(sw.body.ok, sw.body.line).toBe(true);
    expect(sw.body.command!.argv.at(-1)).toBe(PROMPT);

    await stopMusher(w);
    await startMusher(w);
    const pid = JSON.parse((await sleds(w, ['status', '--json'])).stdout) as { musher: { startedAt: number } };
    expect(pid.musher.startedAt).toBeGreaterThan(task.createdAt); // a new musher, not the one that dispatched

    const hook = await sleds(w, ['hook', 'UserPromptSubmit'], JSON.stringify({ session_id: 's2', prompt: PROMPT, cwd: repo, hook_event_name: 'UserPromptSubmit' }));
    expect(hook.code, hook.stderr).toBe(0);
    const shown = JSON.parse((await sleds(w, ['task', task.id, '--json'])).stdout) as { sessions: string[] };
    expect(shown.sessions).toEqual(['s1', 's2']);
    expect((JSON.parse((await sleds(w, ['tasks', '--json'])).stdout) as { tasks: Task[] }).tasks).toHaveLength(1);

    // Claimed once: a third session sent the same words starts a task of its own.
    await sleds(w, ['hook', 'UserPromptSubmit'], JSON.stringify({ session_id: 's3', prompt: PROMPT, cwd: repo, hook_event_name: 'UserPromptSubmit' }));
    expect((JSON.parse((await sleds(w, ['tasks', '--json'])).stdout) as { tasks: Task[] }).tasks).toHaveLength(2);
  });

  it('an unknown task and a bad body are one line each', async () => {
    const { w, task } = await worldWithTask();
    const missing = await sleds(w, ['pick', 'zzzzzzzzzzzz']);
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toBe('sleds: no task zzzzzzzzzzzz — sleds tasks lists them');
    const bad = await dispatch(w, task.id, { row: 2, verb: 'Queue' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('send {row: <number>} (the row of sleds pick) or {verb: "Dispatch"|"Switch"|"Queue"|"Hand off"|"Offer"}');
    const usage = await sleds(w, ['pick']);
    expect(usage.code).toBe(2);
  });
});
