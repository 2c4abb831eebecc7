/**
 * A command that needs musher starts it, as the hook does, before any hook has run: it says so once on stderr and
 * answers. SLEDS_NO_AUTOSTART=1 (the user runs musher themselves) keeps the one line that says it is away.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sleds, type SledsWorld } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';
import { requestMusher } from '../../hooks/musher-client.js';

const world = useWorlds();

async function answeringPid(w: SledsWorld): Promise<number> {
  const res = await requestMusher(w.socket, 'GET', '/v1/health', null, {}, 2000);
  return (JSON.parse(res.body) as { pid: number }).pid;
}

describe('commands that need musher start it', { timeout: 90_000 }, () => {
  it('fresh home: sleds status --json starts musher, answers, and says so once on stderr', async () => {
    const w = world();
    expect(existsSync(w.socket)).toBe(false);
    const first = await sleds(w, ['status', '--json']);
    expect(first.code).toBe(0);
    const pid = await answeringPid(w);
    expect(first.stderr).toBe(`sleds: started musher (pid ${pid})\n`);
    expect(JSON.parse(first.stdout)).toHaveProperty('sessions', []);
    const second = await sleds(w, ['status', '--json']);
    expect({ code: second.code, stderr: second.stderr }).toEqual({ code: 0, stderr: '' });
  });

  it.each([
    [['estimate', 'fix the login test', '--json'], 'band'],
    [['handoffs', '--json'], 'handoffs'],
    [['receipts', '--json'], 'receipts'],
    [['tasks', '--json'], 'tasks'],
    [['snapshots', '--json'], 'snapshots'],
  ])('fresh home: sleds %j starts musher and answers', async (args, key) => {
    const w = world();
    const r = await sleds(w, args, undefined, {}, w.root);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`sleds: started musher (pid ${await answeringPid(w)})\n`);
    expect(JSON.parse(r.stdout)).toHaveProperty(key);
  });

  it('a refusal from a musher the command started: the start on stderr, the refusal as JSON on stdout', async () => {
    const w = world();
    const json = await sleds(w, ['task', 'nosuchtask99', '--json']);
    expect(json.code).toBe(1);
    expect(json.stderr).toBe(`sleds: started musher (pid ${await answeringPid(w)})\n`);
    expect((JSON.parse(json.stdout) as { error: string }).error).toMatch(/nosuchtask99/);
  });

  it('a musher that cannot start: the command says so, and where to look (JSON under --json)', async () => {
    const w = world();
    // Its data folder is a file: musher fails as it starts.
    mkdirSync(w.sledsHome, { recursive: true });
    writeFileSync(join(w.sledsHome, 'data'), '');
    const r = await sleds(w, ['tasks', '--json']);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 1, stderr: '' });
    expect(JSON.parse(r.stdout)).toEqual({ error: `musher is not running and did not start — see ${w.logFile}, or run 'sleds musher' to watch it start` });
    const plain = await sleds(w, ['musher', 'start']);
    expect({ code: plain.code, stderr: plain.stderr }).toEqual({ code: 1, stderr: `sleds: musher did not start — see ${w.logFile}, or run 'sleds musher' to watch it start\n` });
  });

  it('SLEDS_NO_AUTOSTART=1: the one line that says musher is away, and no musher', async () => {
    const w = world({ SLEDS_NO_AUTOSTART: '1' });
    const r = await sleds(w, ['status']);
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
      code: 1,
      stdout: '',
      stderr: "sleds: musher is not running — start it with 'sleds musher start' or let the next hook start it\n",
    });
    expect(existsSync(w.socket)).toBe(false);
  });
});
