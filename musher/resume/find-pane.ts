import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

/**
 * Where a Claude Code session runs now. Claude Code keeps one file per live process in `<config>/sessions/<pid>.json`
 * (shared/facts/claude-code.md §4), measured on 2.1.328:
 *   {"pid":3321,"sessionId":"08e1…","cwd":"/w/proj","startedAt":1795995703909,"procStart":"906793",
 *    "kind":"interactive","tmux":"main:@0.%0","status":"idle",…}
 * plus `<pid>.<hash>.key` files beside them (not sessions). `procStart` is the process's start time in clock ticks
 * (field 22 of /proc/<pid>/stat), so a pid reused by another program is told apart. The file does not name the tmux
 * server; the process's own TMUX variable does (`<socket path>,<server pid>,<session>`), read from /proc on Linux.
 */

const SessionFile = z.looseObject({
  pid: z.number().int().positive(),
  sessionId: z.string(),
  cwd: z.string().optional(),
  startedAt: z.number().optional(),
  procStart: z.union([z.string(), z.number()]).optional(),
  tmux: z.string().nullish(),
});

export interface LiveSession {
  pid: number;
  sessionId: string;
  cwd: string | null;
  /** "%3", when the session runs in a tmux pane. */
  pane: string | null;
  /** The tmux server's socket path, when it could be read from the process (Linux). */
  tmuxSocket: string | null;
  /**
   * The process's own CLAUDE_CONFIG_DIR, when set (Linux). A pane restarted by tmux gets tmux's environment, not the
   * shell's the user typed `claude` in: without this, a session kept in another config dir would not be found.
   */
  claudeConfigDirEnv: string | null;
  startedAt: number | null;
}

/** The `%pane` of a live Claude Code process holding this session, or null. */
export function findLivePane(claudeConfigDir: string, sessionId: string): string | null {
  return findLiveSessions(claudeConfigDir, sessionId).find((s) => s.pane !== null)?.pane ?? null;
}

/** Every live Claude Code process holding this session, newest first. */
export function findLiveSessions(claudeConfigDir: string, sessionId: string): LiveSession[] {
  const dir = join(claudeConfigDir, 'sessions');
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /^\d+\.json$/.test(n));
  } catch {
    // No sessions folder: no live Claude Code process.
    return [];
  }
  const out: LiveSession[] = [];
  for (const name of names) {
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(join(dir, name), 'utf8'));
    } catch {
      continue; // being rewritten, or not ours to read
    }
    const parsed = SessionFile.safeParse(json);
    if (!parsed.success || parsed.data.sessionId !== sessionId) continue;
    const s = parsed.data;
    if (!isSameProcess(s.pid, s.procStart)) continue;
    const env = s.tmux ? environOf(s.pid) : new Map<string, string>();
    out.push({
      pid: s.pid,
      sessionId: s.sessionId,
      cwd: s.cwd ?? null,
      pane: paneOf(s.tmux ?? null),
      tmuxSocket: env.get('TMUX')?.split(',')[0] || null,
      claudeConfigDirEnv: env.get('CLAUDE_CONFIG_DIR') || null,
      startedAt: s.startedAt ?? null,
    });
  }
  return out.sort((a, b) => (b.startedAt ?? 0) - (a.startedAt ?? 0));
}

/** "session:@window.%pane" → "%pane". */
export function paneOf(tmux: string | null): string | null {
  const m = tmux ? /(%\d+)$/.exec(tmux) : null;
  return m ? m[1]! : null;
}

/** Alive, and (where /proc tells) the same process that wrote the file rather than a later one with its pid. */
export function isSameProcess(pid: number, procStart: string | number | undefined): boolean {
  if (!isAlive(pid)) return false;
  if (procStart === undefined) return true;
  const started = procStartOf(pid);
  return started === null || started === String(procStart);
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks); null where there is no /proc. */
export function procStartOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count from after its closing one.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    // The process is gone (or /proc is not there): no start time.
    return null;
  }
}

/** The variables of a process (only its owner can read them); empty where there is no /proc. */
function environOf(pid: number): Map<string, string> {
  const out = new Map<string, string>();
  try {
    for (const entry of readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
      const eq = entry.indexOf('=');
      if (eq > 0) out.set(entry.slice(0, eq), entry.slice(eq + 1));
    }
  } catch {
    // not Linux, or not ours
  }
  return out;
}
