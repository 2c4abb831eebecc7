import { spawn } from 'node:child_process';

/**
 * Runs the user's own statusLine command after ours, with the same stdin, and prints its output below ours.
 * The command string is the user's own configuration, run the way Claude Code itself would run it (through
 * the shell, as `sh -c <command>`): that is the user's intent, not interpolation of anything sleds builds.
 */
export function runThen(command: string, stdin: Buffer): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', command], { stdio: ['pipe', 'inherit', 'ignore'] });
    child.on('error', () => resolve());
    child.on('close', () => resolve());
    child.stdin.on('error', () => undefined);
    child.stdin.end(stdin);
  });
}
