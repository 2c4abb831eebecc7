import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HarnessEvent } from '../../harnesses/events.js';
import { harnessById } from '../../harnesses/registry.js';
import type { HarnessAdapter } from '../../harnesses/port.js';
import type { RunHandle, Runner, StartRun } from '../../musher/engine/ports.js';
import { processRunner } from '../../musher/engine/runner.js';
import { tmuxRunner, tmuxServerEnv, TMUX_SESSION } from '../../musher/engine/runner-tmux.js';
import { terminalRunner } from '../../musher/engine/runner-terminal.js';
import { latestRunDir, runFile } from '../../musher/engine/run-files.js';
import { CLI_SOURCE, makeWorld, sleds, waitFor, type SledsWorld } from '../support/sleds-env.js';
import { useEngineWorlds } from '../support/engine-world.js';

/**
 * The engine's window runners with the real tmux (issue 14 § 7): a fake `claude` that speaks Claude Code's
 * `-p --output-format stream-json` (it replays the captured stream, tests/fixtures/headless/claude-code.turn.jsonl)
 * runs through the tmux runner, the terminal runner and the headless one; the engine's RunHandle reads the same events
 * from the same stream file whichever ran it, while the window shows them to a person. Each test has its own tmux
 * server (a socket in its own folder), killed after it.
 */

const execFileP = promisify(execFile);
const TMUX = execFileSync('sh', ['-c', 'command -v tmux'], { encoding: 'utf8' }).trim();
const STREAM = join(import.meta.dirname, '..', 'fixtures', 'headless', 'claude-code.turn.jsonl');
const SECRET = 'sk-ant-oat01-never-in-argv-7f3a';

/** A stand-in for claude: records its argv, prompt and one secret variable, replays the stream; holds before its result while $FAKE_HOLD is named and absent. */
const FAKE_CLAUDE = `#!${process.execPath}
const { readFileSync, writeFileSync, existsSync, watch } = require('node:fs');
const { dirname, basename } = require('node:path');
const prompt = readFileSync(0, 'utf8');
writeFileSync(process.env.FAKE_RECORD, JSON.stringify({ argv: process.argv.slice(2), prompt, secret: process.env.FAKE_SECRET }));
const lines = readFileSync(process.env.FAKE_STREAM, 'utf8').trim().split('\\n');
for (const l of lines.slice(0, -1)) process.stdout.write(l + '\\n');
const hold = process.env.FAKE_HOLD;
const finish = () => { process.stdout.write(lines.at(-1) + '\\n'); process.exit(0); };
if (!hold || existsSync(hold)) finish();
else {
  watch(dirname(hold), () => { if (existsSync(hold)) finish(); });
  if (existsSync(hold)) finish();
}
`;

/** A stand-in for a terminal emulator: records its argv, starts the command after \`--title <t>\` detached, and returns at once (as gnome-terminal does). */
const FAKE_TERMINAL = `#!${process.execPath}
const { writeFileSync, openSync } = require('node:fs');
const { spawn } = require('node:child_process');
const args = process.argv.slice(2);
writeFileSync(process.env.TERMINAL_RECORD, JSON.stringify(args));
const screen = openSync(process.env.TERMINAL_SCREEN, 'a');
spawn(args[2], args.slice(3), { detached: true, stdio: ['ignore', screen, screen] }).unref();
`;

const engineWorlds = useEngineWorlds();
let world: SledsWorld;
let bin: string;
let socket: string;
let runsDir: string;
let adapter: HarnessAdapter;

function write(path: string, text: string): string {
  writeFileSync(path, text);
  chmodSync(path, 0o755);
  return path;
}

async function tm(...args: string[]): Promise<string> {
  const { stdout } = await execFileP(TMUX, ['-S', socket, ...args]);
  return stdout.trim();
}

function startRun(node: string, over: Partial<StartRun> & { hold?: string } = {}): StartRun {
  const cwd = join(world.root, 'work');
  mkdirSync(cwd, { recursive: true });
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: world.home,
    FAKE_STREAM: STREAM,
    FAKE_RECORD: join(world.root, `${node}.record.json`),
    FAKE_SECRET: SECRET,
    ...(over.hold ? { FAKE_HOLD: over.hold } : {}),
  };
  return { adapter, bin: join(bin, 'claude'), cwd, prompt: 'Write the schema; say when done.', model: null, resumeSessionId: null, nodeDir: join(runsDir, 'eng-503', node), env, ...over };
}

/** Reads a handle until its run has ended, as the engine does: every event once, in order. */
async function readToEnd(handle: RunHandle, seen: HarnessEvent[] = []): Promise<HarnessEvent[]> {
  await waitFor('the run to end', () => {
    const ended = handle.ended();
    seen.push(...handle.read());
    return ended;
  });
  seen.push(...handle.read());
  return seen;
}

async function headlessRun(node: string): Promise<{ events: HarnessEvent[]; stream: string }> {
  const handle = processRunner().start(startRun(node));
  const events = await readToEnd(handle);
  return { events, stream: readFileSync(handle.logPath, 'utf8') };
}

beforeEach(() => {
  world = makeWorld();
  bin = join(world.root, 'bin');
  mkdirSync(bin);
  write(join(bin, 'claude'), FAKE_CLAUDE);
  socket = join(world.root, 'tmux.sock');
  runsDir = join(world.sledsHome, 'data', 'runs');
  const found = harnessById('claude-code');
  if (!found.ok) throw new Error(found.error);
  adapter = found.adapter;
});

afterEach(async () => {
  // The test's own tmux server only (its socket is in the test's folder).
  await execFileP(TMUX, ['-S', socket, 'kill-server']).catch(() => undefined);
  rmSync(world.root, { recursive: true, force: true });
});

describe('the tmux runner', () => {
  const runner = (): Runner => tmuxRunner({ tmuxBin: TMUX, socket, cli: [process.execPath, CLI_SOURCE], serverEnv: tmuxServerEnv(process.env) });

  it('runs a node in its own window of the engine’s tmux server, which shows its events, while the engine reads the same stream a headless run writes', async () => {
    const hold = join(world.root, 'hold', 'go');
    mkdirSync(join(world.root, 'hold'));
    const handle = runner().start(startRun('schema', { hold }));
    const runDir = latestRunDir(join(runsDir, 'eng-503', 'schema'))!;
    const window = JSON.parse(readFileSync(runFile(runDir, 'window'), 'utf8')) as { session: string; windowId: string; socket: string };
    expect(window).toMatchObject({ session: TMUX_SESSION, socket });

    expect((await tm('list-windows', '-t', `=${TMUX_SESSION}`, '-F', '#{window_id} #{window_name}')).split('\n')).toContain(`${window.windowId} eng-503/schema`);
    const screen = await waitFor('the window to show the tool call', async () => {
      const s = await tm('capture-pane', '-p', '-J', '-t', window.windowId);
      return s.includes('tool Bash') ? s : null;
    });
    expect(screen).toContain('sleds engine · eng-503/schema · Claude Code');
    expect(screen).toContain('started · session 956f958c-03ea-4561-b073-82e363cd12ff');

    // Held before its result: still running, and a restarted engine would find the same run.
    const seen = handle.read();
    expect(handle.ended()).toBe(false);
    expect(runner().reattach(adapter, runDir)).not.toBeNull();

    // The secret reached the harness through env.json (0600), never through an argv.
    expect(statSync(runFile(runDir, 'env')).mode & 0o777).toBe(0o600);
    const starts = await tm('list-panes', '-a', '-F', '#{pane_start_command}');
    expect(starts).toContain('run-window');
    expect(starts).not.toContain(SECRET);
    expect(readFileSync(runFile(runDir, 'run'), 'utf8')).not.toContain(SECRET);
    expect(JSON.parse(readFileSync(join(world.root, 'schema.record.json'), 'utf8'))).toMatchObject({ secret: SECRET, prompt: 'Write the schema; say when done.', argv: expect.arrayContaining(['-p', '--output-format', 'stream-json']) });

    writeFileSync(hold, '');
    const events = await readToEnd(handle, seen);
    const finalScreen = await waitFor('the window to show the end', async () => {
      const s = await tm('capture-pane', '-p', '-J', '-t', window.windowId);
      return s.includes('ended (exit 0)') ? s : null;
    });
    expect(finalScreen).toMatch(/usage [\d,]+ in · [\d,]+ out/);
    expect(finalScreen).toContain('done: ');
    expect(JSON.parse(readFileSync(runFile(runDir, 'exit'), 'utf8'))).toEqual({ code: 0, signal: null });
    expect(runner().reattach(adapter, runDir)).toBeNull();

    const headless = await headlessRun('mailer');
    expect(events).toEqual(headless.events);
    expect(events.map((e) => e.kind)).toEqual(expect.arrayContaining(['turn_started', 'tool_call', 'usage', 'turn_completed']));
    expect(readFileSync(handle.logPath, 'utf8')).toBe(headless.stream);
    expect(runner().leftover(adapter, runDir)).toEqual(headless.events);
  });

  it('sleds attach names the node’s window (--json), says a headless node runs headless with the tail -f that follows it, and names the nodes there are for one it does not know', async () => {
    const handle = runner().start(startRun('schema'));
    await readToEnd(handle);
    await headlessRun('mailer');
    const runDir = latestRunDir(join(runsDir, 'eng-503', 'schema'))!;
    const { windowId } = JSON.parse(readFileSync(runFile(runDir, 'window'), 'utf8')) as { windowId: string };

    for (const target of ['eng-503/schema', 'schema']) {
      const r = await sleds(world, ['attach', target, '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ node: 'eng-503/schema', runner: 'tmux', window: { session: TMUX_SESSION, windowId, socket }, log: runFile(runDir, 'stdout') });
    }

    const mailerLog = runFile(latestRunDir(join(runsDir, 'eng-503', 'mailer'))!, 'stdout');
    const headless = await sleds(world, ['attach', 'mailer']);
    expect(headless.code).toBe(0);
    expect(headless.stdout.trim()).toBe(`eng-503/mailer runs headless, with no window to attach to — follow its stream with: tail -f ${mailerLog}`);
    expect(JSON.parse((await sleds(world, ['attach', 'eng-503/mailer', '--json'])).stdout)).toEqual({ node: 'eng-503/mailer', runner: 'headless', window: null, log: mailerLog });

    const unknown = await sleds(world, ['attach', 'billing']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim()).toBe("sleds: no run of 'billing' here — nodes that have run: eng-503/mailer, eng-503/schema");
    expect(JSON.parse((await sleds(world, ['attach', 'billing', '--json'])).stdout)).toEqual({ error: "no run of 'billing' here — nodes that have run: eng-503/mailer, eng-503/schema" });

    // Once its window is gone, attach says so and how to follow the stream.
    await tm('kill-window', '-t', windowId);
    const closed = await sleds(world, ['attach', 'eng-503/schema']);
    expect(closed.stdout.trim()).toBe(`eng-503/schema's window has closed — follow its stream with: tail -f ${runFile(runDir, 'stdout')}`);
  });

  it('the engine lands a node that runs in a tmux window: its state from the stream, its PR opened, the window named after it', { timeout: 120_000 }, async () => {
    const w = await engineWorlds.world({ runner: runner(), route: 'title: Exports\nnodes:\n  - id: schema\n    title: Export jobs table\n    brief: |\n      @write schema.sql create table export_jobs (id int);\n' });
    await w.until(() => w.state('schema') === 'AWAITING_MERGE', 'schema awaiting merge');
    expect(w.gh.pull('acme/shop', w.store.node('eng-503', 'schema')!.prNumber!)!.body).toContain('Changed: schema.sql');
    // The run's end (exit 0) is known from its exit file, which the engine landed the node by; tmux marks the pane dead
    // a moment later, once run-window exits (its exit status it lists sometimes late, on a loaded machine not at all).
    const windows = await waitFor('the pane to be marked dead', async () => {
      const list = (await tm('list-windows', '-t', `=${TMUX_SESSION}`, '-F', '#{window_name} #{pane_dead}')).split('\n');
      return list.every((l) => l.split(' ')[1] === '1') ? list : null;
    });
    expect(windows).toEqual(['eng-503/schema 1']);
    expect(w.starts()).toHaveLength(1);
  });

  it('closing a window leaves its run working, and the engine follows it to the end; stopping a run stops its harness', async () => {
    mkdirSync(join(world.root, 'hold'));
    const hold = join(world.root, 'hold', 'go');
    const handle = runner().start(startRun('schema', { hold }));
    const runDir = latestRunDir(join(runsDir, 'eng-503', 'schema'))!;
    const { windowId } = JSON.parse(readFileSync(runFile(runDir, 'window'), 'utf8')) as { windowId: string };
    await waitFor('the harness to start', () => existsSync(join(world.root, 'schema.record.json')));
    await tm('kill-window', '-t', windowId);
    expect(handle.ended()).toBe(false);
    writeFileSync(hold, '');
    expect((await readToEnd(handle)).at(-1)).toMatchObject({ kind: 'turn_completed', ok: true });

    rmSync(hold);
    const stopped = runner().start(startRun('mailer', { hold }));
    const stoppedDir = latestRunDir(join(runsDir, 'eng-503', 'mailer'))!;
    await waitFor('the harness to start', () => existsSync(join(world.root, 'mailer.record.json')));
    stopped.stop();
    const events = await readToEnd(stopped);
    expect(events.map((e) => e.kind)).not.toContain('turn_completed');
    expect(JSON.parse(readFileSync(runFile(stoppedDir, 'exit'), 'utf8'))).toEqual({ code: null, signal: 'SIGTERM' });
  });

  it("a node's next run replaces its last run's window, so the engine's session keeps one window per node", async () => {
    await readToEnd(runner().start(startRun('schema')));
    await readToEnd(runner().start(startRun('schema')));
    const names = (await tm('list-windows', '-t', `=${TMUX_SESSION}`, '-F', '#{window_name}')).split('\n');
    expect(names).toEqual(['eng-503/schema']);
  });
});

describe('the terminal runner', () => {
  it("opens the config's terminal command with the wrapper in place of {run}, and the engine reads the run's stream as from a headless run", async () => {
    const terminal = write(join(bin, 'fake-terminal'), FAKE_TERMINAL);
    const record = join(world.root, 'terminal.json');
    const screen = join(world.root, 'screen.txt');
    const runner = terminalRunner({ command: [terminal, '--title', 'sleds node', '{run}'], cli: [process.execPath, CLI_SOURCE], env: { ...process.env, TERMINAL_RECORD: record, TERMINAL_SCREEN: screen }, clock: { now: () => Date.now() } });
    const handle = runner.start(startRun('schema'));
    const events = await readToEnd(handle);
    const runDir = latestRunDir(join(runsDir, 'eng-503', 'schema'))!;

    expect(JSON.parse(readFileSync(record, 'utf8'))).toEqual(['--title', 'sleds node', process.execPath, CLI_SOURCE, 'engine', 'run-window', runDir]);
    expect(readFileSync(record, 'utf8')).not.toContain(SECRET);
    const headless = await headlessRun('mailer');
    expect(events).toEqual(headless.events);
    expect(readFileSync(handle.logPath, 'utf8')).toBe(headless.stream);
    await waitFor('the terminal to show the end', () => existsSync(screen) && readFileSync(screen, 'utf8').includes('ended (exit 0)'));
    expect(readFileSync(screen, 'utf8')).toContain('tool Bash');

    const attach = await sleds(world, ['attach', 'eng-503/schema', '--json']);
    expect(JSON.parse(attach.stdout)).toEqual({ node: 'eng-503/schema', runner: 'terminal', window: null, log: runFile(runDir, 'stdout') });
  });

  it('a terminal command that fails ends the run, its words in the run’s stderr.log', async () => {
    const broken = write(join(bin, 'no-display'), `#!${process.execPath}\nconsole.error('cannot open display :0');\nprocess.exit(1);\n`);
    const runner = terminalRunner({ command: [broken, '{run}'], cli: [process.execPath, CLI_SOURCE], env: process.env, clock: { now: () => Date.now() } });
    const handle = runner.start(startRun('schema'));
    expect(await readToEnd(handle)).toEqual([]);
    expect(readFileSync(runFile(latestRunDir(join(runsDir, 'eng-503', 'schema'))!, 'stderr'), 'utf8')).toContain('cannot open display :0');
  });
});

describe('engine.runner in config.yml', () => {
  it('the engine refuses a runner it does not know, naming the file, the line and the key', async () => {
    mkdirSync(join(world.sledsHome, 'config'), { recursive: true });
    writeFileSync(join(world.sledsHome, 'config', 'config.yml'), 'engine:\n  runner: screen\n');
    const r = await sleds(world, ['engine', '--once', '--json']);
    expect(r.code).toBe(1);
    const { error } = JSON.parse(r.stdout) as { error: string };
    expect(error).toMatch(/config\/config\.yml:2: engine\.runner: must be one of headless, tmux, terminal — fix it, then start the engine again$/);
  });

  it('the engine refuses a terminal command it cannot find, naming the key', async () => {
    mkdirSync(join(world.sledsHome, 'config'), { recursive: true });
    writeFileSync(join(world.sledsHome, 'config', 'config.yml'), 'engine:\n  runner: terminal\n  terminal:\n    command: [no-such-terminal, "--", "{run}"]\n');
    const r = await sleds(world, ['engine', '--once', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual({ error: 'engine.terminal.command in config.yml: no-such-terminal was not found (no no-such-terminal on PATH) — name an installed terminal, e.g. [gnome-terminal, "--", "{run}"]' });
  });
});
