/**
 * `sleds demo`: the main job told on an embedded default — a scripted Claude Code session fed through the real hook
 * and statusline bundles to a real musher in a temporary home, a hand-off to dana and her pickup in a second one —
 * then everything removed. The test runs it as a new user would, with HOME and TMPDIR pointing at empty folders of
 * its own, and checks the story it prints and that nothing is left behind.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, waitFor } from '../support/sleds-env.js';

interface Frame {
  step: string;
  title: string;
  text: string;
}

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** An empty HOME and TMPDIR, as a fresh user's shell would have (the demo may write only under TMPDIR). */
function userShell(): { home: string; tmp: string } {
  const base = mkdtempSync(join(tmpdir(), 'sd-t-'));
  made.push(base);
  const home = join(base, 'home');
  const tmp = join(base, 'tmp');
  mkdirSync(home);
  mkdirSync(tmp);
  return { home, tmp };
}

function demo(args: string[], shell: { home: string; tmp: string }, env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [...CLI, 'demo', ...args],
      { env: { PATH: process.env.PATH, HOME: shell.home, TMPDIR: shell.tmp, LANG: 'C.UTF-8', TZ: 'UTC', ...env }, timeout: 90_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
    child.stdin!.end();
  });
}

function frames(stdout: string): Frame[] {
  return stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Frame);
}

const byStep = (fs: Frame[], step: string): Frame => {
  const f = fs.find((x) => x.step === step);
  if (!f) throw new Error(`no '${step}' frame in: ${fs.map((x) => x.step).join(', ')}`);
  return f;
};

describe('sleds demo', { timeout: 120_000 }, () => {
  it('--json tells the whole story frame by frame through the real hook and statusline, then removes its homes', async () => {
    const shell = userShell();
    const r = await demo(['--json'], shell);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const fs = frames(r.stdout);
    for (const f of fs) {
      expect(typeof f.step).toBe('string');
      expect(typeof f.title).toBe('string');
      expect(typeof f.text).toBe('string');
      expect(f.text).not.toContain('\x1b['); // JSON frames are plain text
    }
    expect(fs.map((f) => f.step)).toEqual(['statusline', 'amber', 'forecast', 'wall', 'card', 'hold', 'handoff', 'pickup', 'work', 'cleanup']);

    // The statusline at 40%, with the spend musher priced from the transcript's replies.
    expect(byStep(fs, 'statusline').text).toMatch(/5h 40% .*\$\d+\.\d\d session · \$\d+\.\d\d today/);
    expect(byStep(fs, 'statusline').text).not.toMatch(/\$0\.00 session/);
    // Amber at 91%, naming the exits the wall would offer.
    expect(byStep(fs, 'amber').text).toMatch(/5h 91% .*at 100%: .*hold → \d{1,2}:\d{2}[ap]m/);
    // The forecaster names a time for the wall.
    expect(byStep(fs, 'forecast').text).toMatch(/wall \d{1,2}:\d{2}[ap]m/);
    // At 100%: the red line's second line is the wall, with its id.
    const wallId = /⛔ wall ([2-9a-km-np-z]{12})/.exec(byStep(fs, 'wall').text)?.[1];
    expect(wallId, byStep(fs, 'wall').text).toBeDefined();
    // The card at the next prompt, with the hand-off to dana offered.
    const card = byStep(fs, 'card').text;
    expect(card).toMatch(/Wall: usage limit reached\. Session snapshotted\./);
    expect(card).toMatch(/2 Hold until reset/);
    expect(card).toMatch(/5 Hand off to Dana/);
    expect(card).toContain(`wall ${wallId}`);
    expect(byStep(fs, 'hold').text).toMatch(/\/sled 2[\s\S]*2 Hold until reset\. Holding: Claude Code continues by itself/);
    // The hand-off: its id, then dana picks it up in her own home and gets jake's uncommitted work.
    const handoff = byStep(fs, 'handoff').text;
    const id = /\/sled pickup ([2-9a-km-np-z]{12})/.exec(handoff)?.[1];
    expect(id, handoff).toBeDefined();
    expect(handoff).toMatch(/\/sled 5 dana[\s\S]*Handed off to Dana/);
    const pickup = byStep(fs, 'pickup').text;
    expect(pickup).toContain(`/sled pickup ${id}`);
    expect(pickup).toMatch(new RegExp(`Picked up ${id} from jake: the work is in `));
    const work = byStep(fs, 'work').text;
    expect(work).toMatch(/^ M cart\.ts$/m); // jake's uncommitted change, uncommitted in dana's worktree
    expect(work).toContain('half done');
    // jake's conversation is in dana's Claude config, where `claude --resume` finds it.
    expect(work).toMatch(/^~\/\.claude\/projects\/[^/\s]+\/[0-9a-f-]{36}\.jsonl$/m);

    // Nothing left: no folder under TMPDIR, nothing written into the user's HOME.
    expect(readdirSync(shell.tmp)).toEqual([]);
    expect(readdirSync(shell.home)).toEqual([]);
  });

  it('without --json, with NO_COLOR, prints the frames as plain text with their titles', async () => {
    const shell = userShell();
    const r = await demo([], shell, { NO_COLOR: '1' });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).not.toContain('\x1b[');
    expect(r.stdout).toMatch(/5h 40%/);
    expect(r.stdout).toMatch(/5h 91% .*at 100%:/);
    expect(r.stdout).toMatch(/Wall: usage limit reached/);
    expect(r.stdout).toMatch(/Picked up [2-9a-km-np-z]{12} from jake/);
    expect(readdirSync(shell.tmp)).toEqual([]);
    expect(readdirSync(shell.home)).toEqual([]);
  });

  it('--keep leaves both homes for a look and prints where they are; the mushers are stopped', async () => {
    const shell = userShell();
    const r = await demo(['--json', '--keep'], shell);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const kept = byStep(frames(r.stdout), 'cleanup').text;
    const left = readdirSync(shell.tmp);
    expect(left).toHaveLength(1);
    const root = join(realpathSync(shell.tmp), left[0]!);
    expect(kept).toContain(root);
    // dana's picked-up worktree is there to look at, with jake's half-done change.
    const worktree = readdirSync(join(root, 'dana')).find((n) => n.startsWith('shop-handoff-'));
    expect(worktree).toBeDefined();
    expect(readFileSync(join(root, 'dana', worktree!, 'cart.ts'), 'utf8')).toContain('half done');
    for (const seat of ['jake', 'dana']) {
      expect(kept).toContain(join(root, seat));
      expect(existsSync(join(root, seat))).toBe(true);
      // musher is gone: its socket was removed when it stopped.
      expect(readdirSync(root, { recursive: true }).some((p) => String(p).startsWith(seat) && String(p).endsWith('musher.sock'))).toBe(false);
    }
    expect(readdirSync(shell.home)).toEqual([]);
  });

  it('Ctrl-C mid-story stops both mushers and removes everything', async () => {
    const shell = userShell();
    const child = spawn(process.execPath, [...CLI, 'demo', '--json'], { env: { PATH: process.env.PATH, HOME: shell.home, TMPDIR: shell.tmp, LANG: 'C.UTF-8', TZ: 'UTC' }, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // The first frame means both mushers are up.
    const firstFrame = await new Promise<Frame>((resolve, reject) => {
      const lines = createInterface({ input: child.stdout! });
      lines.once('line', (l) => resolve(JSON.parse(l) as Frame));
      child.once('exit', () => reject(new Error('the demo ended before its first frame')));
    });
    expect(firstFrame.step).toBe('statusline');
    const root = join(shell.tmp, readdirSync(shell.tmp)[0]!);
    const pids = ['jake', 'dana'].map((seat) => Number(readFileSync(join(root, seat, '.s', 'run', 'musher.pid'), 'utf8')));
    expect(pids.every((p) => Number.isInteger(p) && p > 0)).toBe(true);
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(readdirSync(shell.tmp)).toEqual([]);
    const alive = (pid: number): boolean => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await waitFor('both mushers to be gone', () => pids.every((p) => !alive(p)) || null, 10_000);
    expect(readdirSync(shell.home)).toEqual([]);
  });

  it('a failure says where the story stopped in one JSON error, exit 1, and still removes everything', async () => {
    const shell = userShell();
    // No git on PATH (node is run by its full path): the project cannot be made.
    const r = await demo(['--json'], shell, { PATH: join(shell.home, 'no-bin') });
    expect(r.code).toBe(1);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toEqual({ error: expect.stringMatching(/^the demo stopped before the first frame: git is not on PATH: .* — install git, then run sleds demo again \(nothing was left behind\)$/) });
    expect(readdirSync(shell.tmp)).toEqual([]);
    expect(readdirSync(shell.home)).toEqual([]);
  });
});
