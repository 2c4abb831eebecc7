import { execFile } from 'node:child_process';
import { tmuxArg } from '../../core/tmux-arg.js';

export interface TmuxPane {
  /** The server's socket (`tmux -S`), from the hook's $TMUX. */
  socket: string;
  /** "%3". */
  pane: string;
}

function tmux(bin: string, args: string[]): Promise<{ ok: true; out: string } | { ok: false; why: string }> {
  return new Promise((resolve) => {
    execFile(bin, args, { timeout: 5_000 }, (err, out, stderr) => {
      if (err) resolve({ ok: false, why: (String(stderr).trim().split('\n')[0] ?? '') || err.message });
      else resolve({ ok: true, out: String(out).trim() });
    });
  });
}

/**
 * Opens `argv` in a new tmux window right after the one holding `at`, in `dir`, and switches to it: a picked-up
 * session comes up beside the one the teammate typed `/sled pickup` in, which stays as it was. Argument arrays
 * all the way (tmux runs a command of two or more arguments without a shell); measured on tmux 3.3a: new-window's
 * -t takes a window, not a pane, so the pane is resolved to its window first.
 */
export async function openInTmuxWindow(bin: string, at: TmuxPane, dir: string, argv: string[], name: string): Promise<{ ok: true; window: string } | { ok: false; why: string }> {
  const server = ['-S', at.socket];
  const where = await tmux(bin, [...server, 'display-message', '-p', '-t', at.pane, '#{session_id}:#{window_index}']);
  if (!where.ok) return where;
  const opened = await tmux(bin, [...server, 'new-window', '-a', '-t', where.out, '-n', name, '-c', dir.replace(/#/g, '##'), '-P', '-F', '#{session_name}:#{window_index}', '--', ...argv.map(tmuxArg)]);
  return opened.ok ? { ok: true, window: `${name} (${opened.out})` } : opened;
}
