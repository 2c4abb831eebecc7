import { homedir } from 'node:os';
import { resolvePaths } from '../core/paths.js';
import { renderLocalStatusline } from '../core/statusline-local.js';
import { requestMusher } from '../hooks/musher-client.js';

/**
 * `sleds statusline [--then '<command>']`: forward the statusline JSON to musher and print the line it renders.
 * If musher does not answer within its budget, render from the JSON alone and say so.
 */
const BUDGET_MS = 150;

function readStdin(): Promise<Buffer> {
  return new Promise((resolve) => {
    if (process.stdin.isTTY) return resolve(Buffer.alloc(0));
    const chunks: Buffer[] = [];
    process.stdin.on('data', (c: Buffer) => chunks.push(c));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks)));
    process.stdin.on('error', () => resolve(Buffer.concat(chunks)));
  });
}

function wantsColor(): boolean {
  return !('NO_COLOR' in process.env && process.env.NO_COLOR !== '');
}

export async function runStatusline(thenCommand: string | null): Promise<number> {
  const raw = await readStdin();
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
    line = renderLocalStatusline(raw.toString('utf8'), Date.now(), color);
  }
  process.stdout.write(line.endsWith('\n') ? line : `${line}\n`);
  if (thenCommand) {
    const { runThen } = await import('./then.js');
    await runThen(thenCommand, raw);
  }
  return 0;
}
