import { formatUsd } from '../format.js';
import type { RouteBand } from '../routes/band.js';

/**
 * The overnight queue's two rules before anything runs (issue 15 § 1–2). Pure: the window, the clock and the jobs
 * come in.
 *
 * - **Sized first, capped.** A job whose band's low end is over its cap is refused with the band: it would stop at
 *   the cap before it could land.
 * - **The window.** Jobs start in priority order (worth ÷ the band's middle dollars), up to the free slots, inside
 *   the window only; a job that cannot finish its band's low end before the window closes waits for the next night
 *   and says so.
 */

export interface NightJob {
  id: string;
  /** What finishing it is worth, in dollars (the policy's worth value of its level); null: not valued. */
  worthUsd: number | null;
  /** The band at batch prices. */
  band: RouteBand;
  capUsd: number;
}

export type Admission = { ok: true } | { ok: false; why: string };

const usd = (n: number) => formatUsd(Math.round(n * 1_000_000));

export function admit(band: RouteBand | null, capUsd: number): Admission {
  if (band === null) return { ok: false, why: 'it has no band yet, and an overnight job is sized before it is queued — sleds estimate it first' };
  if (band.lowUsd > capUsd) return { ok: false, why: `its band ${usd(band.lowUsd)}–${usd(band.highUsd)} starts above its cap ${usd(capUsd)} — raise the cap or split the job` };
  return { ok: true };
}

/**
 * Worth ÷ the band's middle: what a dollar of the night buys. A job with no worth value goes after every valued one,
 * the cheaper of them first.
 */
export function priorityOf(j: NightJob): number {
  const middle = (j.band.lowUsd + j.band.highUsd) / 2;
  if (j.worthUsd === null) return -(1 + middle);
  return j.worthUsd / Math.max(middle, 0.01);
}

export interface NightPlan {
  /** In the order they start. */
  start: string[];
  /** Jobs that do not start now, with why in one line. */
  waiting: Array<{ id: string; why: string }>;
}

export function planNight(jobs: readonly NightJob[], window: { startMs: number; endMs: number }, nowMs: number, freeSlots: number, formatTime: (ms: number) => string): NightPlan {
  const ordered = [...jobs].sort((a, b) => priorityOf(b) - priorityOf(a) || a.id.localeCompare(b.id));
  if (nowMs < window.startMs || nowMs >= window.endMs) {
    const opens = nowMs < window.startMs ? window.startMs : null;
    return { start: [], waiting: ordered.map((j) => ({ id: j.id, why: opens ? `the window opens at ${formatTime(opens)}` : 'the window has closed: the next night' })) };
  }
  const start: string[] = [];
  const waiting: NightPlan['waiting'] = [];
  for (const j of ordered) {
    const finishesAt = nowMs + j.band.lowMin * 60_000;
    if (finishesAt > window.endMs) waiting.push({ id: j.id, why: `waits for the next night: its band's low end (${j.band.lowMin} min) does not fit before ${formatTime(window.endMs)}` });
    else if (start.length >= freeSlots) waiting.push({ id: j.id, why: 'every slot of the night is taken: it starts when one is free' });
    else start.push(j.id);
  }
  return { start, waiting };
}
