/**
 * With --json, every failure of every command is one JSON object on stdout, `{"error": "…"}`, exit 1, and nothing
 * on stderr: musher away, musher not answering or answering nonsense, a bad argument, an unknown command. A script
 * reads one shape. Without --json the same failures stay one line on stderr (usage errors exit 2).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sleds, type RunResult, type SledsWorld } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';

const world = useWorlds({ SLEDS_NO_AUTOSTART: '1' });

function expectJsonError(r: RunResult, pattern: RegExp): void {
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 1, stderr: '' });
  const lines = r.stdout.trim().split('\n');
  const body = JSON.parse(r.stdout) as Record<string, unknown>;
  expect(lines).toHaveLength(1);
  expect(typeof body.error).toBe('string');
  expect(body.error).not.toMatch(/^sleds: /);
  expect(body.error).toMatch(pattern);
}

/** A Unix socket at the world's musher socket that accepts and then does what `onConnect` says. */
const servers: Server[] = [];
const held: Socket[] = [];
afterEach(async () => {
  for (const s of held.splice(0)) s.destroy();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});
async function fakeMusher(w: SledsWorld, onConnect: (s: Socket) => void): Promise<void> {
  mkdirSync(dirname(w.socket), { recursive: true });
  rmSync(w.socket, { force: true });
  const server = createServer((s) => {
    held.push(s);
    onConnect(s);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(w.socket, r));
}

describe('--json failures are JSON on stdout, exit 1', { timeout: 120_000 }, () => {
  it.each([
    [['status', '--json']],
    [['bars', '--json']],
    [['walls', '--json']],
    [['tasks', '--json']],
    [['task', 'k3m9x2qa45pz', '--json']],
    [['receipts', '--json']],
    [['receipt', 'show', 'k3m9x2qa4bn7', '--json']],
    [['pick', 'k3m9x2qa45pz', '--json']],
    [['estimate', 'fix the login test', '--json']],
    [['tracker', '--json']],
    [['jobs', '--json']],
    [['wall', 'show', 'jd7k2m9qa45p', '--json']],
    [['policy', 'explain', 'jd7k2m9qa45p', '--json']],
    [['go', 'jd7k2m9qa45p', '--json']],
    [['snapshots', '--json']],
    [['snapshot', 'show', 'jd7k2m9qa41p', '--json']],
    [['handoffs', '--json']],
    [['pickup', 'jd7k2m9qa45p', '--json']],
    [['github', 'watch', '--json']],
    [['digest', '--json']],
    [['musher', 'status', '--json']],
  ])('musher away (SLEDS_NO_AUTOSTART=1): sleds %j', async (args) => {
    const w = world();
    expectJsonError(await sleds(w, args, undefined, {}, w.root), /^musher is not running — start it with 'sleds musher start'/);
  });

  it.each([
    [['estimate', '--json'], /estimate what\?/],
    [['estimate', 'x', '--type', '--json'], /--type needs a value|estimate takes/],
    [['estimate', 'x', '--bogus', '--json'], /estimate takes --type, --model and --json, not '--bogus'/],
    [['walls', '--horizon', 'soon', '--json'], /--horizon takes a span/],
    [['tasks', 'extra', '--json'], /tasks takes no 'extra'/],
    [['task', '--json'], /which task\?/],
    [['task', 'k3m9x2qa45pz', 'colour', 'red', '--json'], /takes worth <level>, type <label> or done, not 'colour'/],
    [['jobs', 'cancel', '--json'], /which job\?/],
    [['jobs', 'extra', '--json'], /jobs takes no 'extra'/],
    [['digest', 'extra', '--json'], /digest takes no word — sleds digest \[--json\]/],
    [['pick', '--json'], /pick takes a task/],
    [['wall', '--json'], /wall takes 'show <wall>'/],
    [['wall', 'show', '--json'], /which wall\?/],
    [['go', '--json'], /which wall\?/],
    [['forecast', '--json'], /forecast takes 'replay <trace.jsonl>'/],
    [['forecast', 'replay', '--json'], /which trace\?/],
    [['forecast', 'replay', 'no-such-trace.jsonl', '--json'], /cannot read no-such-trace.jsonl: ENOENT/],
    [['snapshot', '--json'], /snapshot takes 'show <id>'/],
    [['receipt', '--json'], /receipt takes 'verify <id\|file>' or 'show <id>'/],
    [['receipts', 'extra', '--json'], /receipts takes no 'extra'/],
    [['tracker', 'extra', '--json'], /tracker takes poll or nothing/],
    [['policy', 'bogus', '--json'], /policy takes check \[path\] or show/],
    [['policy', 'check', 'no-such-policy.yml', '--json'], /no such file: no-such-policy.yml/],
    [['musher', 'bogus', '--json'], /unknown musher command 'bogus'/],
    [['pickup', '--json'], /which hand-off\?/],
    [['pickup', 'jd7k2m9qa45p', '--harness', 'vim', '--json'], /--harness takes claude or codex, not 'vim'/],
    [['key', 'bogus', '--json'], /./],
    [['slack', 'bogus', '--json'], /./],
    [['install', '--bogus', '--json'], /install takes only --json \(got '--bogus'\)/],
  ])('a bad argument: sleds %j', async (args, pattern) => {
    const w = world();
    expectJsonError(await sleds(w, args, undefined, {}, w.root), pattern);
  });

  it.each([[['bogus', '--json']], [['--json']]])('an unknown command: sleds %j', async (args) => {
    expectJsonError(await sleds(world(), args), /^unknown command '.*' — run 'sleds help' for the list$/);
  });

  it('a failed verdict (a policy with errors, a receipt that does not verify) carries { error } beside its detail', async () => {
    const w = world();
    writeFileSync(join(w.root, 'bad.yml'), 'amber_at: lots\n');
    const policy = await sleds(w, ['policy', 'check', 'bad.yml', '--json'], undefined, {}, w.root);
    expect(policy.code).toBe(1);
    expect(JSON.parse(policy.stdout)).toMatchObject({ ok: false, error: "the policy has 1 error — fix them and run 'sleds policy check' again", errors: ['bad.yml:1: amber_at: expected a number, got "lots"'] });
    writeFileSync(join(w.root, 'r.json'), JSON.stringify({ body: { id: 'k3m9x2qa4bn7' }, signature: 'zz' }));
    const receipt = await sleds(w, ['receipt', 'verify', 'r.json', '--json'], undefined, {}, w.root);
    expect(receipt.code).toBe(1);
    const verdict = JSON.parse(receipt.stdout) as { ok: boolean; error: string; why: string };
    expect(verdict).toMatchObject({ ok: false, error: `receipt k3m9x2qa4bn7 does not verify: ${verdict.why}` });
  });

  it('a failed doctor report carries { error }: every failing line with its fix', async () => {
    const w = world();
    const r = await sleds(w, ['doctor', '--json']);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as { ok: boolean; error: string; steps: Array<{ status: string; message: string; fix?: string }> };
    const failing = report.steps.filter((s) => s.status === 'fail');
    expect(failing.length).toBeGreaterThan(0);
    expect(report.ok).toBe(false);
    expect(report.error).toBe(failing.map((s) => `${s.message} — ${s.fix}`).join('; '));
  });

  it('musher answers something that is not JSON', async () => {
    const w = world();
    await fakeMusher(w, (s) => s.end('HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello'));
    expectJsonError(await sleds(w, ['tasks', '--json']), /^musher answered 200 with something that is not JSON/);
    expectJsonError(await sleds(w, ['status', '--json']), /^musher answered 200 with something that is not JSON/);
  });

  it('musher does not answer', async () => {
    const w = world();
    await fakeMusher(w, () => undefined);
    expectJsonError(await sleds(w, ['bars', '--json']), /^musher did not answer \(no answer within \d+ ms\)/);
  });

  it('without --json the same failures stay one line on stderr; usage errors exit 2', async () => {
    const w = world();
    const away = await sleds(w, ['tasks']);
    expect({ code: away.code, stdout: away.stdout, stderr: away.stderr }).toEqual({
      code: 1,
      stdout: '',
      stderr: "sleds: musher is not running — start it with 'sleds musher start' or let the next hook start it\n",
    });
    const usage = await sleds(w, ['bogus']);
    expect({ code: usage.code, stdout: usage.stdout, stderr: usage.stderr }).toEqual({ code: 2, stdout: '', stderr: "sleds: unknown command 'bogus' — run 'sleds help' for the list\n" });
  });
});
