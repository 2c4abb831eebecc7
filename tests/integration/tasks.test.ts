import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sleds, startMusher, type SledsWorld } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';
import type { Task } from '../../core/task/task.js';
import { requestMusher } from '../../hooks/musher-client.js';

const world = useWorlds();
const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function prompt(w: SledsWorld, sessionId: string, text: string, cwd: string): Promise<{ blocked: boolean; reason: string }> {
  const r = await sleds(w, ['hook', 'UserPromptSubmit'], JSON.stringify({ session_id: sessionId, prompt: text, cwd, hook_event_name: 'UserPromptSubmit' }));
  if (r.stdout.trim() === '') return { blocked: false, reason: '' };
  const out = JSON.parse(r.stdout) as { decision?: string; reason?: string };
  return { blocked: out.decision === 'block', reason: out.reason ?? '' };
}

async function tasks(w: SledsWorld): Promise<Task[]> {
  const r = await sleds(w, ['tasks', '--json']);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { tasks: Task[] }).tasks;
}

function repoDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sleds-task-repo-'));
  dirs.push(d);
  mkdirSync(join(d, '.git'));
  mkdirSync(join(d, 'src'));
  return d;
}

describe('tasks', () => {
  it("a session's first prompt starts its task in the repository; later prompts count as turns; sled verbs do not", async () => {
    const w = world();
    await startMusher(w);
    const repo = repoDir();
    const first = 'Fix the flaky login test\n\nIt fails one run in five on CI with a timeout in auth.spec.ts.';
    expect((await prompt(w, 's1', first, join(repo, 'src'))).blocked).toBe(false);
    await prompt(w, 's1', 'also check the retry', join(repo, 'src'));
    await prompt(w, 's1', '/sled status', join(repo, 'src'));
    const [task] = await tasks(w);
    expect(task).toMatchObject({ title: 'Fix the flaky login test', source: 'prompt', state: 'open', repo, turns: 2, promptChars: first.length, worth: null });
    const human = await sleds(w, ['tasks']);
    expect(human.stdout).toContain(task!.id);
    expect(human.stdout).toContain('Fix the flaky login test');
  });

  it('/sled task starts another task; /sled worth and /sled type set it; bad levels and labels are refused in one line', async () => {
    const w = world();
    await startMusher(w);
    const repo = repoDir();
    await prompt(w, 's1', 'first thing', repo);
    const started = await prompt(w, 's1', '/sled task Migrate the billing tables', repo);
    expect(started.blocked).toBe(true);
    expect(started.reason).toMatch(/^sled: task [a-z2-9]{12} started: Migrate the billing tables\./);
    expect((await prompt(w, 's1', '/sled worth high', repo)).reason).toContain("this task's worth is now high");
    expect((await prompt(w, 's1', '/sled worth priceless', repo)).reason).toBe("sled: 'priceless' is not a worth level here — use /sled worth high|normal|low|none");
    expect((await prompt(w, 's1', '/sled type Migration', repo)).reason).toContain('is now of type migration');
    expect((await prompt(w, 's1', '/sled type two words', repo)).reason).toContain('is not a type label');
    const all = await tasks(w);
    expect(all.map((t) => t.title).sort()).toEqual(['Migrate the billing tables', 'first thing']);
    const billing = all.find((t) => t.title.startsWith('Migrate'))!;
    expect(billing).toMatchObject({ worth: 'high', type: 'migration', source: 'verb' });
    expect(all.find((t) => t.title === 'first thing')).toMatchObject({ worth: null, type: null });

    const shown = await sleds(w, ['task', billing.id.slice(0, 6)]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('worth high · type migration');
    const set = await sleds(w, ['task', billing.id, 'worth', 'low', '--json']);
    expect((JSON.parse(set.stdout) as { task: Task }).task.worth).toBe('low');
    const refused = await sleds(w, ['task', billing.id, 'worth', 'gold']);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe("sleds: 'gold' is not a worth level here — use high|normal|low|none");
    const missing = await sleds(w, ['task', 'zzzzzzzzzzzz']);
    expect(missing.stderr.trim()).toBe('sleds: no task zzzzzzzzzzzz — sleds tasks lists them');
  });

  it('a done task is not moved back: the API refuses it in one line (409) and the task keeps its end and receipt', async () => {
    const w = world();
    await startMusher(w);
    const repo = repoDir();
    await prompt(w, 's1', 'Fix the flaky login test', repo);
    const [task] = await tasks(w);
    const parked = await requestMusher(w.socket, 'POST', `/v1/tasks/${task!.id}`, JSON.stringify({ state: 'parked' }), {}, 10_000);
    expect(parked.status).toBe(200);
    const done = await sleds(w, ['task', task!.id, 'done', '--json']);
    expect(done.code, done.stderr).toBe(0);
    const ended = (await tasks(w))[0]!;
    expect(ended).toMatchObject({ id: task!.id, state: 'done' });

    const back = await requestMusher(w.socket, 'POST', `/v1/tasks/${task!.id}`, JSON.stringify({ state: 'open', worth: 'high' }), {}, 10_000);
    expect(back.status).toBe(409);
    expect(JSON.parse(back.body)).toEqual({ error: `task ${task!.id}: a task that is done cannot take 'resume' — its receipt is written; start another with /sled task <title>` });
    const after = (await tasks(w))[0]!;
    expect(after).toMatchObject({ state: 'done', worth: null, endedAt: ended.endedAt });
    const shown = await sleds(w, ['task', task!.id]);
    expect(shown.stdout).toContain('state done');
    expect(shown.stdout).toMatch(/receipt [a-z2-9]+:/);
  });
});
