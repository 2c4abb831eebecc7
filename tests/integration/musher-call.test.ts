/**
 * The commands that ask musher share one client (cli/musher-call.ts): when musher is away each says the same one
 * line and exits 1; when musher refuses, --json prints its answer and the plain form prints its error.
 */
import { describe, expect, it } from 'vitest';
import { sleds, startMusher } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';

const world = useWorlds({ SLEDS_NO_AUTOSTART: '1' });

const AWAY = "sleds: musher is not running — start it with 'sleds musher start' or let the next hook start it\n";

describe('asking musher from the command line', { timeout: 60_000 }, () => {
  it.each([
    [['tasks']],
    [['task', 'k3m9x2qa45pz']],
    [['receipts']],
    [['pick', 'k3m9x2qa45pz']],
    [['estimate', 'fix the login test']],
    [['tracker']],
    [['jobs']],
    [['wall', 'show', 'jd7k2m9qa45p']],
    [['snapshots']],
    [['handoffs']],
    [['bars']],
    [['walls']],
    [['github', 'watch']],
  ])('sleds %j with musher away: one line, exit 1', async (args) => {
    const r = await sleds(world(), args);
    expect({ code: r.code, stderr: r.stderr, stdout: r.stdout }).toEqual({ code: 1, stderr: AWAY, stdout: '' });
  });

  it("a refusal: --json prints musher's answer, the plain form its error in one line", async () => {
    const w = world();
    await startMusher(w);
    const json = await sleds(w, ['task', 'nosuchtask99', '--json']);
    expect(json.code).toBe(1);
    const body = JSON.parse(json.stdout) as { error: string };
    expect(body.error).toMatch(/nosuchtask99/);
    const plain = await sleds(w, ['task', 'nosuchtask99']);
    expect({ code: plain.code, stdout: plain.stdout, stderr: plain.stderr }).toEqual({ code: 1, stdout: '', stderr: `sleds: ${body.error}\n` });
  });
});
