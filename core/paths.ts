/**
 * Where sleds keeps its state. Pure: the environment and home directory are passed in.
 * SLEDS_HOME puts everything in one folder (tests always set it); otherwise XDG.
 */
export interface SledsPaths {
  configDir: string;
  dataDir: string;
  runtimeDir: string;
  stateDir: string;
  dbFile: string;
  socketFile: string;
  lockFile: string;
  pidFile: string;
  logFile: string;
  spoolDir: string;
}

type Env = Record<string, string | undefined>;

function join(...parts: string[]): string {
  return parts.join('/').replace(/\/+/g, '/');
}

export function resolvePaths(env: Env, homeDir: string): SledsPaths {
  const sledsHome = env.SLEDS_HOME;
  let configDir: string;
  let dataDir: string;
  let runtimeDir: string;
  let stateDir: string;
  if (sledsHome) {
    configDir = join(sledsHome, 'config');
    dataDir = join(sledsHome, 'data');
    runtimeDir = join(sledsHome, 'run');
    stateDir = join(sledsHome, 'state');
  } else {
    configDir = join(env.XDG_CONFIG_HOME || join(homeDir, '.config'), 'sleds');
    dataDir = join(env.XDG_DATA_HOME || join(homeDir, '.local/share'), 'sleds');
    runtimeDir = env.XDG_RUNTIME_DIR ? join(env.XDG_RUNTIME_DIR, 'sleds') : join(dataDir, 'run');
    stateDir = join(env.XDG_STATE_HOME || join(homeDir, '.local/state'), 'sleds');
  }
  return {
    configDir,
    dataDir,
    runtimeDir,
    stateDir,
    dbFile: join(dataDir, 'sleds.db'),
    socketFile: join(runtimeDir, 'musher.sock'),
    // musher's instance lock: a SQLite file it holds an exclusive lock on for its life (musher/instance-lock.ts).
    lockFile: join(runtimeDir, 'musher.lock.db'),
    pidFile: join(runtimeDir, 'musher.pid'),
    logFile: join(stateDir, 'musher.log'),
    spoolDir: join(stateDir, 'spool'),
  };
}

/** The Claude Code config dir: CLAUDE_CONFIG_DIR, else ~/.claude. */
export function claudeConfigDir(env: Env, homeDir: string): string {
  return env.CLAUDE_CONFIG_DIR || join(homeDir, '.claude');
}
