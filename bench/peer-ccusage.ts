import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The peer a user would otherwise pick, on the same history: ccusage. Its full scan is timed with its peak memory,
 * and its daily report is held against `sleds report daily` (issue 16 § 1 and § 3).
 *
 * It is a dev dependency, pinned (20.0.24, the version the issue measured). Its Rust binary ships in per-platform npm
 * packages; the registry this project's CI reaches holds only `@ccusage/ccusage-linux-x64`, so the lock file's entries
 * for the other platforms were written by hand (os and cpu only: `npm ci` skips a platform's package that is not this
 * machine's without fetching it). After an `npm install` that drops them, put them back the same way.
 */
export const CCUSAGE_VERSION = '20.0.24';

/** ccusage's launcher, when it is installed next to sleds' own packages; null when it is not. */
export function ccusageEntry(): { entry: string; version: string } | null {
  try {
    const pkg = createRequire(import.meta.url).resolve('ccusage/package.json');
    const meta = JSON.parse(readFileSync(pkg, 'utf8')) as { bin: Record<string, string>; version: string };
    return { entry: join(dirname(pkg), meta.bin.ccusage!), version: meta.version };
  } catch {
    // Not installed (an `npm ci --omit=dev`): the bench says so and goes on without the peer.
    return null;
  }
}

/** A process's peak resident memory so far (Linux `VmHWM`), in MB; null elsewhere or once it is gone. */
export function peakRssMb(pid: number): number | null {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    // Not Linux, or the process has exited: no reading.
    return null;
  }
}

export interface PeerRun {
  ms: number;
  peakMb: number | null;
  stdout: string;
}

/** Runs ccusage with `args` and `env`, timing it and sampling its peak memory until it exits. */
export function runCcusage(entry: string, args: string[], env: NodeJS.ProcessEnv): Promise<PeerRun> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(process.execPath, [entry, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let peak: number | null = null;
    // The launcher starts the Rust binary as its child: the peak is the larger of any process in the tree we can see.
    const sample = setInterval(() => {
      for (const pid of treeOf(child.pid!)) {
        const p = peakRssMb(pid);
        if (p !== null) peak = Math.max(peak ?? 0, p);
      }
    }, 10);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    child.on('error', reject);
    child.on('exit', (code) => {
      clearInterval(sample);
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (code !== 0) reject(new Error(`ccusage ${args.join(' ')} exited ${code}: ${stderr.slice(0, 300)}`));
      else resolve({ ms, peakMb: peak, stdout });
    });
  });
}

/** `pid` and its descendants (Linux /proc), so a launcher's child is measured too. */
function treeOf(pid: number): number[] {
  const out = [pid];
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    for (const c of children.split(/\s+/).filter(Boolean)) out.push(...treeOf(Number(c)));
  } catch {
    // No /proc, or it ended between two reads.
  }
  return out;
}

interface CcusageDay {
  period?: string;
  date?: string;
  inputTokens: number;
  outputTokens: number;
  cacheCreationTokens: number;
  cacheReadTokens: number;
  totalCost: number;
  modelBreakdowns: Array<{ modelName: string; cost: number; missingPricing?: boolean }>;
}

interface SledsDay {
  period: string;
  inputTokens: number;
  outputTokens: number;
  cacheCreationTokens: number;
  cacheReadTokens: number;
  costMicros: number;
  unpricedReplies: number;
  unpricedModels: string[];
}

export interface DailyComparison {
  days: number;
  /** Days whose four token counts differ between the two (the goal: none). */
  tokenMismatches: string[];
  ccusageUsd: number;
  sledsUsd: number;
  /** Models ccusage had no price for and counted as $0 (sleds names them unpriced, or prices them). */
  ccusageUnpriced: string[];
  sledsUnpriced: string[];
}

export function compareDaily(ccusageJson: string, sledsJson: string): DailyComparison {
  const theirs = (JSON.parse(ccusageJson) as { daily: CcusageDay[] }).daily;
  const ours = (JSON.parse(sledsJson) as { rows: SledsDay[] }).rows;
  const byDay = new Map(ours.map((d) => [d.period, d]));
  const mismatches: string[] = [];
  const unpriced = new Set<string>();
  for (const t of theirs) {
    const day = t.period ?? t.date ?? '';
    const o = byDay.get(day);
    byDay.delete(day);
    if (!o || o.inputTokens !== t.inputTokens || o.outputTokens !== t.outputTokens || o.cacheCreationTokens !== t.cacheCreationTokens || o.cacheReadTokens !== t.cacheReadTokens) mismatches.push(day);
    for (const b of t.modelBreakdowns) if (b.missingPricing) unpriced.add(b.modelName);
  }
  mismatches.push(...byDay.keys());
  return {
    days: theirs.length,
    tokenMismatches: mismatches,
    ccusageUsd: theirs.reduce((s, d) => s + d.totalCost, 0),
    sledsUsd: ours.reduce((s, d) => s + d.costMicros, 0) / 1e6,
    ccusageUnpriced: [...unpriced].sort(),
    sledsUnpriced: [...new Set(ours.flatMap((d) => d.unpricedModels))].sort(),
  };
}
