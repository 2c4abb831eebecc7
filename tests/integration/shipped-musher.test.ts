/**
 * The musher that ships: `sleds musher run` from dist/ loads musher as one bundle (scripts/bundle.mjs), and a cold
 * backfill there must still be read by its parse workers, which are files of their own beside it. (The other
 * integration tests run musher from the sources compiled file by file, where the worker sits next to worker-pool.)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeHistory } from '../../bench/gen-history.js';
import { disposeWorld, makeWorld, SHIPPED_CLI, status, waitFor, type SledsWorld } from '../support/sleds-env.js';

const BUNDLE = join(SHIPPED_CLI, '..', '..', 'musher', 'main.js');

let world: SledsWorld | null = null;
let musher: ChildProcess | null = null;
afterEach(async () => {
  musher?.kill('SIGKILL');
  musher = null;
  if (world) await disposeWorld(world);
  world = null;
});

describe('the shipped musher', () => {
  it('is one file, and reads a cold backlog with its parse workers, every reply counted once', async () => {
    if (!existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing — run 'npm run build' first`);
    // One file: no module of sleds' own is imported from it (packages are, from node_modules).
    const relative = readFileSync(BUNDLE, 'utf8').match(/\bfrom\s*["']\.\.?\/[^"']+["']|\bimport\(\s*["']\.\.?\/[^"']+["']\s*\)/g) ?? [];
    expect(relative).toEqual([]);

    world = makeWorld();
    // Over the 8 MB a backlog is staged from, in several files: a backlog that goes to the parse workers.
    const written = writeHistory({ projectsDir: join(world.claudeDir, 'projects'), targetBytes: 12_000_000, startMs: Date.UTC(2026, 10, 1), linesPerSession: 1500 });
    expect(written.files.length).toBeGreaterThan(2);
    const w = world;
    // In the foreground, so its log is its stderr.
    musher = spawn(process.execPath, [SHIPPED_CLI, 'musher', 'run'], { env: w.env, stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    musher.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    const done = await waitFor(
      'the backfill to end',
      async () => {
        if (!existsSync(w.socket)) return null;
        const s = await status(w).catch(() => null);
        return s !== null && !s.ingest.backfilling && s.ingest.pendingBytes === 0 && s.totals.usageRecords > 0 ? s : null;
      },
      50_000,
    );
    expect(done.totals.usageRecords).toBe(written.messages);
    expect(log).toMatch(/transcript backlog of [\d.]+ MB: parsed by 2 worker threads/);
    expect(log).not.toMatch(/read on the main thread/);
  }, 60_000);
});
