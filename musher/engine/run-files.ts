import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

/**
 * A run's folder, `<runsDir>/<route>/<node>/<n>/`, the one layout every runner writes and `sleds attach` reads:
 *
 *   prompt.md      the prompt (the harness's stdin; never argv)
 *   stdout.jsonl   the harness's structured stream: the run's state comes from it alone
 *   stderr.log     the harness's stderr
 *   proc.json      the harness process: { pid, startTicks, argv0 } (liveness and reattach)
 *   harness        the id of the harness that ran it (a node that switched harness has runs of two)
 *   run.json       what a window runner's wrapper starts: { runner, label, harness, argv, cwd } (tmux and terminal only)
 *   env.json       that run's environment, 0600 (secrets never in argv)
 *   wrapper.json   the wrapper itself: { pid, startTicks } (`sleds engine run-window`)
 *   exit.json      how the harness ended: { code, signal } (written by the wrapper)
 *   window.json    the tmux window: { session, windowId, socket, panePid, paneStartTicks }
 *
 * A headless run has the first four only; a run without run.json ran headless.
 */

export const RUN_FILES = {
  stdout: 'stdout.jsonl',
  stderr: 'stderr.log',
  prompt: 'prompt.md',
  proc: 'proc.json',
  run: 'run.json',
  env: 'env.json',
  wrapper: 'wrapper.json',
  exit: 'exit.json',
  window: 'window.json',
  harness: 'harness',
} as const;

export type RunFile = keyof typeof RUN_FILES;

export const runFile = (runDir: string, f: RunFile): string => join(runDir, RUN_FILES[f]);

/** Where the engine keeps its runs, under the data dir. */
export const defaultRunsDir = (dataDir: string): string => join(dataDir, 'runs');

export const ProcRecord = z.object({ pid: z.number().int().positive(), startTicks: z.string().nullable(), argv0: z.string() });
export type ProcRecord = z.infer<typeof ProcRecord>;

export const RunRecord = z.object({
  runner: z.enum(['tmux', 'terminal']),
  /** `<route>/<node>`, for the window's title and first line. */
  label: z.string().min(1),
  harness: z.string().min(1),
  argv: z.array(z.string()).min(1),
  cwd: z.string().min(1),
});
export type RunRecord = z.infer<typeof RunRecord>;

export const EnvRecord = z.record(z.string(), z.string());

export const PidRecord = z.object({ pid: z.number().int().positive(), startTicks: z.string().nullable() });
export type PidRecord = z.infer<typeof PidRecord>;

export const ExitRecord = z.object({ code: z.number().int().nullable(), signal: z.string().nullable() });
export type ExitRecord = z.infer<typeof ExitRecord>;

export const WindowRecord = z.object({
  session: z.string(),
  windowId: z.string().regex(/^@\d+$/),
  /** The engine's own tmux server (`tmux -S <socket>`). */
  socket: z.string(),
  panePid: z.number().int().positive(),
  paneStartTicks: z.string().nullable(),
});
export type WindowRecord = z.infer<typeof WindowRecord>;

/** Reads a run file through its schema; null when it is missing or broken (a run that never got that far). */
export function readRunFile<T>(runDir: string, f: RunFile, schema: z.ZodType<T>): T | null {
  try {
    const r = schema.safeParse(JSON.parse(readFileSync(runFile(runDir, f), 'utf8')));
    return r.success ? r.data : null;
  } catch {
    // Missing, or half written by a process that died: the caller treats it as not there.
    return null;
  }
}

/** Writes a run file, the user's alone. */
export function writeRunFile(runDir: string, f: RunFile, value: unknown): void {
  writeFileSync(runFile(runDir, f), JSON.stringify(value), { mode: 0o600 });
}

/** `<nodeDir>/<n>` for the next n: every run of a node keeps its own files. */
export function nextRunDir(nodeDir: string): string {
  mkdirSync(nodeDir, { recursive: true, mode: 0o700 });
  const dir = join(nodeDir, String((runNumbers(nodeDir).at(-1) ?? 0) + 1));
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

/** The numbers of a node's runs, ascending. */
function runNumbers(nodeDir: string): number[] {
  if (!existsSync(nodeDir)) return [];
  return readdirSync(nodeDir)
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0)
    .sort((a, b) => a - b);
}

/** A node's latest run folder, or null when it has not run. */
export function latestRunDir(nodeDir: string): string | null {
  const last = runNumbers(nodeDir).at(-1);
  return last === undefined ? null : join(nodeDir, String(last));
}

/** The process's start time in clock ticks since boot (Linux /proc), to tell it from a later process with its pid. */
export function startTicksOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22; the command name (field 2) may hold spaces and parentheses, so count from its closing one.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    // Not Linux, or the process is gone: liveness falls back to the pid alone.
    return null;
  }
}

/** Whether the process `pid` (started at `startTicks`, when known) still runs. */
export function alive(pid: number, startTicks: string | null): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    // ESRCH: gone. EPERM: it exists but is another user's, so not our run either.
    return false;
  }
  if (startTicks === null) return true;
  const now = startTicksOf(pid);
  return now === null || now === startTicks;
}

/** The harness process a run dir records, or null (the run never started, or its record is broken). */
export function readProc(runDir: string): ProcRecord | null {
  return readRunFile(runDir, 'proc', ProcRecord);
}

/** Records the harness process just started, for liveness and a later engine's reattach. */
export function writeProc(runDir: string, pid: number, argv0: string): ProcRecord {
  const rec = { pid, startTicks: startTicksOf(pid), argv0 };
  writeRunFile(runDir, 'proc', rec);
  return rec;
}

/** A node's folder under the runs dir. */
export const nodeDirOf = (runsDir: string, routeKey: string, nodeId: string): string => join(runsDir, routeKey, nodeId);

/** Every `<route>/<node>` that has a folder under the runs dir, sorted. */
export function nodesWithRuns(runsDir: string): string[] {
  const out: string[] = [];
  if (!existsSync(runsDir)) return out;
  for (const route of readdirSync(runsDir, { withFileTypes: true })) {
    if (!route.isDirectory()) continue;
    for (const node of readdirSync(join(runsDir, route.name), { withFileTypes: true })) if (node.isDirectory()) out.push(`${route.name}/${node.name}`);
  }
  return out.sort();
}
