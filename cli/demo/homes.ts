import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { resolvePaths } from '../../core/paths.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run, CLI_COMMAND } from './processes.js';

/**
 * The demo's two seats, each a home of its own under one temporary folder: HOME, every XDG folder, SLEDS_HOME and
 * the Claude and Codex config dirs point inside it, so nothing of the user's own is read or written. The keys go to
 * a file there (never the OS keyring), and config.yml points every upstream at a closed loopback port and turns
 * desktop notices off: the demo makes no network call and pops nothing up.
 */
export interface Seat {
  handle: string;
  name: string;
  home: string;
  env: NodeJS.ProcessEnv;
}

export interface DemoHomes {
  root: string;
  jake: Seat;
  dana: Seat;
  /** The bare repository both clone: the team's git remote. */
  remote: string;
}

/** Nothing listens on port 9 (discard) on loopback: a call there fails at once and goes nowhere. */
const NOWHERE = 'http://127.0.0.1:9';

export function makeHomes(color: boolean): DemoHomes {
  // Short names: a Unix socket path must stay under ~100 bytes, and macOS's tmpdir is long already.
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'sleds-demo-')));
  const remote = join(root, 'remote', 'shop.git');
  try {
    mkdirSync(join(root, 'remote'));
    return { root, remote, jake: makeSeat(root, 'jake', 'Jake', color), dana: makeSeat(root, 'dana', 'Dana', color) };
  } catch (e) {
    removeRoot(root);
    throw e;
  }
}

function makeSeat(root: string, handle: string, name: string, color: boolean): Seat {
  const home = join(root, handle);
  const sledsHome = join(home, '.s');
  mkdirSync(join(home, '.claude', 'projects'), { recursive: true, mode: 0o700 });
  mkdirSync(join(sledsHome, 'config'), { recursive: true, mode: 0o700 });
  const config = {
    upstreams: { anthropic: NOWHERE, openai: NOWHERE, claudeUsage: NOWHERE, slack: NOWHERE, github: NOWHERE },
    binaries: { osascript: join(home, 'no-desktop-notices'), notifySend: join(home, 'no-desktop-notices') },
  };
  // JSON is YAML: musher reads this as its config.yml.
  writeFileSync(join(sledsHome, 'config', 'config.yml'), `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    LANG: process.env.LANG ?? 'C.UTF-8',
    ...(process.env.TZ ? { TZ: process.env.TZ } : {}),
    ...(color ? {} : { NO_COLOR: '1' }),
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_RUNTIME_DIR: join(home, '.run'),
    CLAUDE_CONFIG_DIR: join(home, '.claude'),
    CODEX_HOME: join(home, '.codex'),
    GIT_CONFIG_NOSYSTEM: '1',
    SLEDS_HOME: sledsHome,
    SLEDS_SEAT: handle,
    SLEDS_KEYRING: 'file',
    // The demo starts each musher itself, so none is left behind by a hook after the cleanup.
    SLEDS_NO_AUTOSTART: '1',
  };
  return { handle, name, home, env };
}

/**
 * Runs the cleanups once, last added first: on success, on failure, and on Ctrl-C (SIGINT/SIGTERM/SIGHUP), so
 * the mushers are stopped and the folder removed whatever happens.
 */
export class Cleanup {
  private readonly steps: Array<() => Promise<void> | void> = [];
  /** Synchronous stand-ins, run at process exit if run() never finished (an uncaught error, process.exit). */
  private readonly atExit: Array<() => void> = [];
  private done = false;
  private running: Promise<void> | null = null;
  private readonly onExit = (): void => {
    if (this.done) return;
    for (const step of this.atExit.splice(0).reverse()) {
      try {
        step();
      } catch {
        // best effort
      }
    }
  };
  /** Set on Ctrl-C: a child killed by the same signal is not a failure to report. */
  interrupted = false;
  private readonly onSignal = (signal: NodeJS.Signals): void => {
    this.interrupted = true;
    void this.run().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };

  constructor() {
    for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(s, this.onSignal);
    process.once('exit', this.onExit);
  }

  /** `step` runs at cleanup; `atExit`, if given, is its synchronous stand-in should the process end first. */
  add(step: () => Promise<void> | void, atExit?: () => void): void {
    this.steps.push(step);
    if (atExit) this.atExit.push(atExit);
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      for (const step of this.steps.splice(0).reverse()) {
        try {
          await step();
        } catch {
          // one failing step never stops the rest
        }
      }
      for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.removeListener(s, this.onSignal);
      process.removeListener('exit', this.onExit);
      this.done = true;
    })();
    return this.running;
  }
}

/** Starts the seat's own musher (the real daemon, in the background) and registers its stop. */
export async function startMusher(seat: Seat, cleanup: Cleanup): Promise<void> {
  const pidFile = resolvePaths(seat.env, seat.home).pidFile;
  cleanup.add(
    async () => {
      await run(CLI_COMMAND[0]!, [...CLI_COMMAND.slice(1), 'musher', 'stop'], { env: seat.env });
    },
    () => {
      const pid = Number(readFileSync(pidFile, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0) process.kill(pid, 'SIGTERM');
    },
  );
  const r = await run(CLI_COMMAND[0]!, [...CLI_COMMAND.slice(1), 'musher', 'start'], { env: seat.env });
  if (r.code !== 0) throw new Error(`${seat.handle}'s musher did not start: ${r.stderr.trim() || r.stdout.trim()}`);
}

export function removeRoot(root: string): void {
  // Retries: a musher told to stop at process exit may still be closing its files.
  rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
}
