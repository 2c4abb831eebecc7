/**
 * One musher per user, decided by a lock the kernel releases when its holder dies: a `kill -9` leaves no lock
 * behind (a dead musher's pid may linger as a zombie, and its socket file stays on disk), and several starts at
 * once (two hooks and a command) end with exactly one musher, which every start reports.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sleds, waitFor, type SledsWorld } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';
import { requestMusher } from '../../hooks/musher-client.js';

const world = useWorlds({ SLEDS_NO_AUTOSTART: '1' });
const autostartWorld = useWorlds();

/** The pid answering on the world's socket, or null. */
async function answering(w: SledsWorld): Promise<number | null> {
  try {
    const res = await requestMusher(w.socket, 'GET', '/v1/health', null, {}, 1000);
    return res.status === 200 ? (JSON.parse(res.body) as { pid: number }).pid : null;
  } catch {
    return null;
  }
}

/** Live (not zombie) musher processes of this world, from /proc: the test runs on Linux, as the CI does. */
function livingMushers(w: SledsWorld): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (!(cmdline.includes('musher') && cmdline.includes('run'))) continue;
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (!environ.includes(`SLEDS_HOME=${w.sledsHome}`)) continue;
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8').replace(/^.*\) /, '')[0];
      if (state !== 'Z' && state !== 'X') pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

async function startJson(w: SledsWorld): Promise<{ code: number; pid: number | undefined; stderr: string }> {
  const r = await sleds(w, ['musher', 'start', '--json']);
  let pid: number | undefined;
  try {
    pid = (JSON.parse(r.stdout) as { pid?: number }).pid;
  } catch {
    pid = undefined;
  }
  return { code: r.code, pid, stderr: r.stderr };
}

describe('one musher per user, by a lock the kernel releases', { timeout: 90_000 }, () => {
  it('kill -9, then sleds musher start: a new musher at once', async () => {
    const w = world();
    const first = await startJson(w);
    expect(first.code).toBe(0);
    process.kill(first.pid!, 'SIGKILL');
    await waitFor('the killed musher to stop answering', async () => (await answering(w)) === null);
    const again = await startJson(w);
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: '' });
    expect(again.pid).not.toBe(first.pid);
    expect(await answering(w)).toBe(again.pid);
  });

  it('kill -9, then sleds musher run in the foreground does not claim the dead one is running', async () => {
    const w = world();
    const first = await startJson(w);
    process.kill(first.pid!, 'SIGKILL');
    await waitFor('the killed musher to stop answering', async () => (await answering(w)) === null);
    const started = startJson(w);
    expect((await started).code).toBe(0);
    const foreground = await sleds(w, ['musher', 'run']);
    expect(foreground.code).toBe(1);
    expect(foreground.stderr).toBe(`sleds: musher is already running (pid ${(await started).pid}) — 'sleds musher stop' stops it\n`);
  });

  it.each([
    ['a fresh home', false],
    ['a home whose musher was killed (a stale socket file)', true],
  ])('five starts at once in %s: exactly one musher, and all five report it', async (_what, killFirst) => {
    const w = world();
    if (killFirst) {
      const first = await startJson(w);
      process.kill(first.pid!, 'SIGKILL');
      await waitFor('the killed musher to stop answering', async () => (await answering(w)) === null);
    }
    const starts = await Promise.all([0, 1, 2, 3, 4].map(() => startJson(w)));
    expect(starts.map((s) => s.code)).toEqual([0, 0, 0, 0, 0]);
    const pid = starts[0]!.pid!;
    expect(starts.map((s) => s.pid)).toEqual([pid, pid, pid, pid, pid]);
    expect(await answering(w)).toBe(pid);
    // The starts that lost the lock exit on their own; the one that won keeps running.
    const alive = await waitFor('the losing mushers to exit', () => {
      const living = livingMushers(w);
      return living.length === 1 ? living : null;
    });
    expect(alive).toEqual([pid]);
  });

  it('kill -9, then a hook: it starts a new musher at once', async () => {
    const w = autostartWorld();
    const first = await startJson(w);
    process.kill(first.pid!, 'SIGKILL');
    await waitFor('the killed musher to stop answering', async () => (await answering(w)) === null);
    const hook = await sleds(w, ['hook', 'SessionStart'], JSON.stringify({ session_id: 'lock-2', hook_event_name: 'SessionStart', cwd: w.root }));
    expect(hook.code).toBe(0);
    const pid = await waitFor('a new musher to answer', () => answering(w), 5_000);
    expect(pid).not.toBe(first.pid);
  });

  it('two hooks and a command at once, in a fresh home: one musher, the one the command reports', async () => {
    const w = autostartWorld();
    const hook = (event: string) => sleds(w, ['hook', event], JSON.stringify({ session_id: 'lock-1', hook_event_name: event, cwd: w.root }));
    const [a, b, st] = await Promise.all([hook('SessionStart'), hook('UserPromptSubmit'), sleds(w, ['status', '--json'])]);
    expect([a.code, b.code, st.code]).toEqual([0, 0, 0]);
    const pid = await answering(w);
    const alive = await waitFor('the losing mushers to exit', () => {
      const living = livingMushers(w);
      return living.length === 1 ? living : null;
    });
    expect(alive).toEqual([pid]);
    // If the command found musher away, it says it started it, with the pid that answers (whichever start won the lock).
    expect(st.stderr).toMatch(new RegExp(`^(sleds: started musher \\(pid ${pid}\\)\n)?$`));
  });
});
