import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { harnessById } from '../../harnesses/registry.js';
import type { HarnessAdapter } from '../../harnesses/port.js';
import { runFile } from './run-files.js';
import { join } from 'node:path';
import type { PriceTable } from '../../core/price-table.js';
import { nodeReceiptBody, nodeReceiptLine, priceRuns, type RunStream } from '../../core/routes/node-receipt.js';
import type { NodeReceipt } from '../../core/routes/route-line.js';
import { wallIdFrom, WALL_ID_LENGTH } from '../../core/wall/wall-id.js';
import { batchBand } from '../../core/overnight/night-gate.js';
import type { Clock } from '../clock.js';
import type { SeatKeyPair } from '../handoff/keys.js';
import { signReceipt } from '../receipts/sign.js';
import type { EngineLog, NodeReceipts, Runner } from './ports.js';

/**
 * Node receipts from real parts: every run folder of the node (`<runsDir>/<route>/<node>/<n>/`) read through its
 * harness adapter (the runner's `leftover`: the same reading the engine follows a run by), priced with the shipped
 * price table, signed exactly as task receipts are (musher/receipts/sign.ts) with the seat's Ed25519 key, loaded
 * when a receipt is made (keys made later count), as musher loads it.
 */

export interface NodeReceiptDeps {
  runner: Runner;
  prices: PriceTable;
  clock: Clock;
  log: EngineLog;
  /** The seat the receipt names (SLEDS_SEAT, config.yml's handle:, else the OS user: musher's seatName). */
  seat(): string;
  /** This machine, for the route's line ("across 2 machines"). */
  host: string;
  /** The seat's Ed25519 key; null: the receipt is kept unsigned. May throw (an unreadable key): kept unsigned, logged. */
  signingKey(): Promise<SeatKeyPair | null>;
  /** The repository's GitHub slug (`owner/name`), or null. */
  repoOf?(repoRoot: string): Promise<string | null>;
  newId?(): string;
}

/** The node's run folders, oldest first (each named by its number). */
export function runDirsOf(nodeDir: string): Array<{ attempt: number; dir: string }> {
  let names: string[];
  try {
    names = readdirSync(nodeDir);
  } catch {
    // No run ever started: no usage.
    return [];
  }
  return names
    .map((name) => ({ attempt: Number(name), dir: join(nodeDir, name) }))
    .filter((r) => Number.isInteger(r.attempt) && r.attempt > 0)
    .sort((a, b) => a.attempt - b.attempt);
}

/** The adapter of the harness a run dir records, else the node's own. */
function adapterOf(runDir: string, fallback: HarnessAdapter): HarnessAdapter {
  let id: string;
  try {
    id = readFileSync(runFile(runDir, 'harness'), 'utf8').trim();
  } catch {
    // a run from before the harness was recorded: the node's harness ran it
    return fallback;
  }
  const found = id === fallback.id ? null : harnessById(id);
  return found?.ok ? found.adapter : fallback;
}

export function nodeReceipts(d: NodeReceiptDeps): NodeReceipts {
  const newId = d.newId ?? (() => wallIdFrom(randomBytes(WALL_ID_LENGTH)));
  return {
    make: async ({ route, node, adapter, nodeDir, filesTouched }) => {
      // Each run read by the harness that ran it: a node that switched harness at a limit has runs of two.
      const runs: RunStream[] = runDirsOf(nodeDir).map((r) => ({ attempt: r.attempt, events: d.runner.leftover(adapterOf(r.dir, adapter), r.dir) }));
      const now = d.clock.now();
      // A stream that names no model (Codex's does not) on a node that names none ran on its harness's default.
      // An overnight job ran on the half-price tier: priced, and judged against its band, at batch prices.
      const tier = node.overnight ? ('batch' as const) : ('standard' as const);
      const priced = priceRuns(d.prices, runs, node.model ?? `${adapter.displayName}'s default model`, now, tier);
      if (priced.unpriced.length > 0) d.log.warn(`${route.key}/${node.nodeId}: ${priced.unpriced.join(', ')} not priced (no price under prices/effective/, or its stream reported no usage) — named on the receipt, not counted as $0`);
      let key: SeatKeyPair | null = null;
      try {
        key = await d.signingKey();
      } catch (e) {
        d.log.warn(`${route.key}/${node.nodeId}: receipt kept unsigned: ${e instanceof Error ? e.message : String(e)}`);
      }
      const body = nodeReceiptBody({
        id: newId(),
        routeKey: route.key,
        nodeId: node.nodeId,
        title: node.title,
        repo: d.repoOf ? await d.repoOf(route.repoRoot).catch(() => null) : null,
        seat: d.seat(),
        harness: adapter.id,
        priced,
        runtimeMs: node.runtimeMs,
        band: node.overnight && node.band ? batchBand(node.band) : node.band,
        promptChars: node.brief.length,
        filesTouched,
        turns: runs.length,
        // When it was claimed: its runtime and its waits before now.
        startedAt: now - node.runtimeMs - node.waitedMs,
        endedAt: now,
        tier,
      });
      const receipt: NodeReceipt = { ...signReceipt(body, key), host: d.host, unpriced: priced.unpriced };
      return { receipt, line: nodeReceiptLine(receipt) };
    },
  };
}
