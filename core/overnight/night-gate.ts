import { formatUsd } from '../format.js';
import type { RouteBand } from '../routes/band.js';
import { admit, planNight } from './night-plan.js';

/**
 * Which ready overnight nodes the engine may start this round (issue 15 § 1–2). Pure. Each node comes with its
 * repository's window (the one in progress, else the next), its cap, and its band at standard prices; a night's band is
 * half that (the batch tier), in the same minutes. A node whose band's low end is over its cap is held with the band
 * (it would stop at the cap before it could land); the rest go in priority order, up to the window's free slots,
 * while their band's low end still fits before the window closes.
 */

export interface NightCandidate {
  key: string;
  band: RouteBand | null;
  capMicros: number;
  window: { startMs: number; endMs: number; concurrency: number } | null;
  /** Overnight nodes of the same window at work now (they hold its slots). */
  working: number;
}

export interface NightGate {
  start: string[];
  waiting: Array<{ key: string; why: string }>;
}

/** A band at the batch tier: every token at half price, the minutes as they were. */
export function batchBand(band: RouteBand): RouteBand {
  const half = (usd: number) => Math.round(usd * 50) / 100;
  return { ...band, lowUsd: half(band.lowUsd), highUsd: half(band.highUsd) };
}

export function gateNight(candidates: readonly NightCandidate[], nowMs: number, formatTime: (ms: number) => string): NightGate {
  const out: NightGate = { start: [], waiting: [] };
  const byWindow = new Map<string, NightCandidate[]>();
  for (const c of candidates) {
    if (c.window === null) {
      out.waiting.push({ key: c.key, why: 'its repository’s policy has no overnight window — add overnight: {from: "22:00", to: "06:00"}' });
      continue;
    }
    const band = c.band === null ? null : batchBand(c.band);
    const admitted = admit(band, c.capMicros / 1_000_000);
    if (!admitted.ok) {
      out.waiting.push({ key: c.key, why: `held: ${admitted.why}` });
      continue;
    }
    const w = `${c.window.startMs}:${c.window.endMs}:${c.window.concurrency}`;
    byWindow.set(w, [...(byWindow.get(w) ?? []), c]);
  }
  for (const group of byWindow.values()) {
    const window = group[0]!.window!;
    const free = Math.max(0, window.concurrency - Math.max(...group.map((c) => c.working)));
    const plan = planNight(
      group.map((c) => ({ id: c.key, worthUsd: null, band: batchBand(c.band!), capUsd: c.capMicros / 1_000_000 })),
      window,
      nowMs,
      free,
      formatTime,
    );
    out.start.push(...plan.start);
    out.waiting.push(...plan.waiting.map((p) => ({ key: p.id, why: p.why })));
  }
  return out;
}

const CAPPED = 'the cap ';

/** The line a node stopped at its cap says (its state kept, for the next night or a person to raise the cap). */
export function cappedLine(spentMicros: number, capMicros: number): string {
  return `${CAPPED}${formatUsd(capMicros)} stopped it at ${formatUsd(spentMicros)} — its work and session are kept; raise cap: in its route file to let it go on`;
}

/** Whether a node's last line is the cap's (it waits for a raised cap, not a limit's reset). */
export const isCappedLine = (line: string | null): boolean => line !== null && line.startsWith(CAPPED);
