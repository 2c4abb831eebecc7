import { homedir } from 'node:os';
import { resolvePaths } from '../core/paths.js';
import { renderLocalStatusline } from '../core/statusline-local.js';
import { requestMusher } from '../hooks/musher-client.js';
import { readStdinSync, writeStdoutSync } from '../hooks/stdin.js';

/**
 * `sleds statusline [--then '<command>']`: forward the statusline JSON to musher and print the line it renders.
 * If musher does not answer within its budget, render from the JSON alone and say so.
 */
const BUDGET_MS = 150;

function wantsColor(): boolean {
  return !('NO_COLOR' in process.env && process.env.NO_COLOR !== '');
}

export async function runStatusline(thenCommand: string | null): Promise<number> {
  const raw = readStdinSync();
  const color = wantsColor();
  const paths = resolvePaths(process.env, homedir());
  let line: string;
  try {
    const res = await requestMusher(
      paths.socketFile,
      'POST',
      '/v1/statusline',
      raw,
      { 'content-type': 'application/json', 'x-sleds-color': color ? '1' : '0' },
      BUDGET_MS,
    );
    if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
    line = res.body;
  } catch {
    // musher away, slow or failing: the local render instead (the statusline must always print).
    line = renderLocalStatusline(raw.toString('utf8'), Date.now(), color);
  }
  writeStdoutSync(line.endsWith('\n') ? line : `${line}\n`);
  if (thenCommand) {
    const { runThen } = await import('./then.js');
    await runThen(thenCommand, raw);
  }
  return 0;
}
