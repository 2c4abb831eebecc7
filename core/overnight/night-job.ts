import { formatUsd, formatUsdShort } from '../format.js';
import type { RouteBand } from '../routes/band.js';
import { batchBand } from './night-gate.js';
import { parseMoney } from '../policy/money.js';

/**
 * An overnight job (issue 15 § 1) is a route of one node that musher makes when the job is queued (exit 3 at a wall,
 * `/sled overnight`, the picker's Queue, the MCP `dispatch`): its key, and whether it may be queued at all. Pure.
 */

/** The node id of a job route's one node. */
export const NIGHT_JOB_NODE = 'job';
/** A job route's key: `night-` and 6 lowercase letters and digits (a route key, core/routes/route-file.ts ROUTE_ID). */
export const NIGHT_JOB_KEY = /^night-[a-z0-9]{6}$/;

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** A job route's key from 6 random bytes. */
export function nightJobKey(bytes: Uint8Array): string {
  if (bytes.length < 6) throw new Error('a job key needs 6 random bytes');
  let s = '';
  for (let i = 0; i < 6; i++) s += ALPHABET[bytes[i]! % ALPHABET.length];
  return `night-${s}`;
}

/** A cap as a person reads it: "$12", "$6.40", and "<$0.01" for less than a cent (never a rounded "$0"). */
const capText = (micros: number): string => (micros > 0 && micros < 10_000 ? formatUsd(micros) : formatUsdShort(micros));

export type NightJobSizing =
  /** Its band at ½ price (the batch tier) and the cap it runs under. */
  | { ok: true; band: RouteBand; capMicros: number }
  | { ok: false; line: string };

/**
 * Sized first and capped: the band (at standard prices) halved for the batch tier, the job's own cap else the
 * policy's. A job with no band, or whose band's low end at ½ price is over its cap, is refused with the band and the
 * command that would let it through (`raise` is how the job's source says "with a cap of", e.g. "/sled overnight cap").
 */
export function sizeNightJob(band: RouteBand | null, ownCapMicros: number | null, policyCapMicros: number, raise: string): NightJobSizing {
  const capMicros = ownCapMicros ?? policyCapMicros;
  if (band === null) return { ok: false, line: 'refused: it has no band yet, and an overnight job is sized before it is queued — /sled estimate it first' };
  const half = batchBand(band);
  const lowMicros = Math.round(half.lowUsd * 1_000_000);
  const highMicros = Math.round(half.highUsd * 1_000_000);
  if (lowMicros > capMicros) {
    return {
      ok: false,
      line: `refused: its band at ½ price is ${formatUsdShort(lowMicros)}–${formatUsdShort(highMicros).slice(1)}, over its cap of ${capText(capMicros)} — raise it: ${raise} ${formatUsdShort(Math.max(highMicros, lowMicros))}`,
    };
  }
  return { ok: true, band: half, capMicros };
}

/** A job's own cap as typed after a verb (`cap $20`, `$20`, `cap 20`): micro-dollars, or what to type instead. */
export function parseCapWords(words: string): { ok: true; capMicros: number } | { ok: false; error: string } {
  const m = /^\s*(?:cap\s+)?(\S+)\s*$/i.exec(words);
  const money = m ? parseMoney(m[1]) : null;
  if (!money || !money.ok) return { ok: false, error: `'${words.slice(0, 40)}' is not a cap — write cap $20` };
  if (money.micros === 0) return { ok: false, error: 'a cap of $0 would stop the job at once — write e.g. cap $20' };
  return { ok: true, capMicros: money.micros };
}
