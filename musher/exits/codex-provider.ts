import { openSync, readSync, closeSync } from 'node:fs';

/** The model provider a Codex thread runs on: its rollout's first line, `session_meta.payload.model_provider`. */
export function codexThreadProvider(rolloutPath: string | null): string | null {
  if (!rolloutPath) return null;
  let fd: number | null = null;
  try {
    fd = openSync(rolloutPath, 'r');
    const buf = Buffer.alloc(256 * 1024);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const first = buf.subarray(0, n).toString('utf8').split('\n')[0] ?? '';
    const meta = JSON.parse(first) as { type?: string; payload?: { model_provider?: unknown } };
    return meta.type === 'session_meta' && typeof meta.payload?.model_provider === 'string' ? meta.payload.model_provider : null;
  } catch {
    // No readable first line (gone, or not a rollout): the provider is not known.
    return null;
  } finally {
    if (fd !== null) closeSync(fd);
  }
}
