/**
 * One argument as tmux's own argv parser must see it so the program receives it unchanged: tmux runs a command given
 * as two or more arguments without a shell (tmux(1), "shell-command arguments"), but an argument ending in ";" ends
 * the tmux command, so `x;` is sent as `x\;` (and `x\;` as `x\\;`). Measured on tmux 3.3a.
 */
export function tmuxArg(arg: string): string {
  return arg.endsWith(';') ? `${arg.slice(0, -1)}\\;` : arg;
}
