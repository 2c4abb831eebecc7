import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { canonicalReceipt } from '../core/receipt/canonical.js';
import type { ReceiptBody } from '../core/receipt/receipt.js';
import { DEFAULT_HARNESS_ID } from '../harnesses/hook-defaults.js';
import { requestMusher } from '../hooks/musher-client.js';

/**
 * What a session's first prompt costs on a seat with a long history: N stored receipts, every one of them in the
 * task's repository (the estimator's worst case). Each first prompt starts a task, which is sized from the receipts;
 * the session's next prompt, sent as soon as the first is answered, only counts a turn (and waits out any work musher
 * left for after the first answer). Both are timed as musher's own round trip (the hook's request straight over the
 * socket, no node start) and as the hook process the harness runs, interleaved.
 */
export interface FirstPromptBench {
  receipts: number;
  runs: number;
  /** Medians, ms. `socket*`: the request over the socket; `hook*`: the whole `hook.cjs` process. */
  socketFirstMs: number;
  socketLaterMs: number;
  hookFirstMs: number;
  hookLaterMs: number;
  /** Median of the same-round differences (first − later): what starting a task adds to a prompt's answer. */
  socketAddedMs: number;
  hookAddedMs: number;
}

const DAY = 86_400_000;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** `count` receipts of past tasks in `repo`, written straight into the store (as a seat with that history has them). */
export function seedReceipts(dbFile: string, repo: string, count: number, nowMs: number): void {
  const db = new Database(dbFile);
  const insert = db.prepare(`INSERT INTO receipts (id, task_id, body, signature, signer, created_at) VALUES (?, ?, ?, NULL, NULL, ?)`);
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const id = `bench${String(i).padStart(7, '0')}`;
      const endedAt = nowMs - (count - i) * 60_000;
      const body: ReceiptBody = {
        v: 1, id, taskId: `task-${id}`, title: `past task ${i}`, type: ['bugfix', 'feature', 'refactor'][i % 3]!, repo, seat: 'bench',
        harness: DEFAULT_HARNESS_ID, models: i % 4 === 0 ? ['claude-opus-5-5', 'claude-haiku-4-5'] : ['claude-opus-5-5'],
        costMicros: 500_000 + ((i * 7919) % 40) * 250_000, keyMicros: 0, activeMinutes: 5 + ((i * 104_729) % 90),
        promptChars: 80 + ((i * 31) % 4000), filesTouched: 1 + (i % 23), turns: 2 + (i % 31),
        band: null, inBand: i % 5 === 0 ? null : i % 3 !== 0, startedAt: endedAt - DAY / 24, endedAt,
      };
      insert.run(id, body.taskId, canonicalReceipt(body), endedAt);
    }
  })();
  db.close();
}

export async function runFirstPromptBench(o: { cli: string; hook: string; receipts: number; runs: number }): Promise<FirstPromptBench> {
  const root = mkdtempSync(join(tmpdir(), 'slfp-'));
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: join(root, 'h'), SLEDS_HOME: join(root, 's'), TZ: process.env.TZ ?? 'UTC' };
  mkdirSync(join(root, 'h', '.claude', 'projects'), { recursive: true });
  const repo = join(root, 'repo');
  mkdirSync(join(repo, '.git'), { recursive: true });
  const socket = join(root, 's', 'run', 'musher.sock');
  const musher = (verb: 'start' | 'stop'): void => {
    const r = spawnSync(process.execPath, [o.cli, 'musher', verb], { env, encoding: 'utf8' });
    if (r.status !== 0 && verb === 'start') throw new Error(`musher start: ${r.stderr}`);
  };
  try {
    // The store is made by a first start; the history goes in while musher is stopped, and is there when it starts.
    musher('start');
    musher('stop');
    seedReceipts(join(root, 's', 'data', 'sleds.db'), repo, o.receipts, Date.now());
    musher('start');
    let n = 0;
    const payload = (sessionId: string, prompt: string): string => JSON.stringify({ session_id: sessionId, prompt, cwd: repo, hook_event_name: 'UserPromptSubmit' });
    const overSocket = async (sessionId: string, prompt: string): Promise<number> => {
      const t0 = process.hrtime.bigint();
      const r = await requestMusher(socket, 'POST', '/v1/hook/UserPromptSubmit', payload(sessionId, prompt), { 'x-sleds-event-id': `bench-${n++}`, 'x-sleds-harness': DEFAULT_HARNESS_ID }, 30_000);
      if (r.status !== 200) throw new Error(`hook answered ${r.status}`);
      return Number(process.hrtime.bigint() - t0) / 1e6;
    };
    const viaHook = (sessionId: string, prompt: string): number => {
      const t0 = process.hrtime.bigint();
      const r = spawnSync(process.execPath, [o.hook, 'UserPromptSubmit'], { env, input: payload(sessionId, prompt), stdio: ['pipe', 'ignore', 'ignore'] });
      if (r.status !== 0) throw new Error(`hook exited ${r.status}`);
      return Number(process.hrtime.bigint() - t0) / 1e6;
    };
    const s = { socketFirst: [] as number[], socketLater: [] as number[], hookFirst: [] as number[], hookLater: [] as number[] };
    // One warm-up round, not counted (the page cache, the first statements prepared).
    await overSocket('warm', 'Fix the checkout total rounding');
    await overSocket('warm', 'and its test');
    for (let i = 0; i < o.runs; i++) {
      s.socketFirst.push(await overSocket(`sock-${i}`, `Fix the checkout total rounding, case ${i}`));
      s.socketLater.push(await overSocket(`sock-${i}`, 'and add a test for it'));
      s.hookFirst.push(viaHook(`hook-${i}`, `Fix the cart badge count, case ${i}`));
      s.hookLater.push(viaHook(`hook-${i}`, 'and add a test for it'));
    }
    return {
      receipts: o.receipts,
      runs: o.runs,
      socketFirstMs: median(s.socketFirst),
      socketLaterMs: median(s.socketLater),
      hookFirstMs: median(s.hookFirst),
      hookLaterMs: median(s.hookLater),
      socketAddedMs: median(s.socketFirst.map((x, i) => x - s.socketLater[i]!)),
      hookAddedMs: median(s.hookFirst.map((x, i) => x - s.hookLater[i]!)),
    };
  } finally {
    musher('stop');
    rmSync(root, { recursive: true, force: true });
  }
}

export function formatFirstPromptBench(b: FirstPromptBench): string[] {
  return [
    `first prompt, ${b.receipts} receipts: over the socket ${b.socketFirstMs.toFixed(1)} ms, the next prompt at once ${b.socketLaterMs.toFixed(1)} ms (difference ${b.socketAddedMs.toFixed(1)} ms; medians of ${b.runs})`,
    `first prompt, ${b.receipts} receipts: hook process  ${b.hookFirstMs.toFixed(1)} ms, the next prompt at once ${b.hookLaterMs.toFixed(1)} ms (difference ${b.hookAddedMs.toFixed(1)} ms)`,
  ];
}

// `node dist/bench/first-prompt.js [receipts] [runs]` (or `npx tsx bench/first-prompt.ts …`): this measure alone (npm run bench runs it with the others).
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  // The built product is measured, whether this runs from dist/bench or from source (tsx bench/first-prompt.ts).
  const root = resolve(import.meta.dirname, '..', ...(import.meta.filename.endsWith('.ts') ? ['dist'] : []));
  const receipts = Number(process.argv[2]) || 5000;
  const runs = Number(process.argv[3]) || 30;
  for (const count of receipts === 0 ? [0] : [0, receipts]) {
    const b = await runFirstPromptBench({ cli: join(root, 'cli', 'main.js'), hook: join(root, 'hook.cjs'), receipts: count, runs });
    for (const l of formatFirstPromptBench(b)) process.stdout.write(`${l}\n`);
  }
}
