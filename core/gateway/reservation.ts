/**
 * Reservations against a seat's allowance: what lets concurrent requests not walk past it. Pure (state in memory,
 * no I/O, no clock).
 *
 * Without them each request is judged on spend already recorded, so twenty started together all pass a $1
 * allowance. With them, a metered request reserves its estimate (core/gateway/request-estimate.ts) before it goes
 * upstream, the verdict counts recorded spend plus what running requests hold, and the reservation is released in
 * the same turn of the event loop as its real cost is recorded, so no instant counts it twice or not at all.
 *
 * The rule: admit while spent + held < cap (for the day's cap and the week's). The last request admitted found
 * spent + held below the cap, and what it adds is its own estimate, so as long as no running request costs more
 * than its estimate, spent ≤ cap + one request's estimate. A lone request (nothing held) is admitted whenever
 * spent < cap, whatever its estimate: a high estimate never refuses a request on its own, it only narrows how many
 * run at once near the end of the allowance.
 */
import { formatUsd } from '../format.js';
import { allowanceRefusalMessage, checkAllowance, type Allowance, type AllowanceSpend } from './allowance.js';

export type AdmissionVerdict =
  | { ok: true }
  | {
      ok: false;
      period: 'today' | 'this week';
      capMicros: number;
      /** Recorded spend in the period. */
      spentMicros: number;
      /** Held by requests under way, at the verdict. */
      heldMicros: number;
    };

/** The verdict before a metered request goes upstream. */
export function admit(allowance: Allowance, spent: AllowanceSpend, heldMicros: number): AdmissionVerdict {
  const held = Math.max(0, heldMicros);
  const v = checkAllowance(allowance, { dayMicros: spent.dayMicros + held, weekMicros: spent.weekMicros + held });
  if (v.ok) return v;
  return { ok: false, period: v.period, capMicros: v.capMicros, spentMicros: v.spentMicros - held, heldMicros: held };
}

/**
 * The one line the harness shows. Spent: the allowance's own message. Not yet spent but held by requests under way:
 * says so, and that it clears when they finish.
 */
export function admissionRefusalMessage(seat: string, v: Extract<AdmissionVerdict, { ok: false }>): string {
  if (v.spentMicros >= v.capMicros) return allowanceRefusalMessage(seat, { ok: false, period: v.period, capMicros: v.capMicros, spentMicros: v.spentMicros });
  return (
    `allowance for ${seat} nearly spent: ${formatUsd(v.spentMicros)} of ${formatUsd(v.capMicros)} ${v.period}, ` +
    `and ${formatUsd(v.heldMicros)} held by requests still under way — try again once they finish; type /sled exits for the other ways on`
  );
}

/** A reservation's handle: `release` it once, on whichever path the request ends (later calls do nothing). */
export interface Hold {
  readonly micros: number;
  release(): void;
}

/** What each seat's running requests hold. */
export class ReservationLedger {
  private readonly held = new Map<string, { micros: number; count: number }>();

  heldMicros(seat: string): number {
    return this.held.get(seat)?.micros ?? 0;
  }

  /** Requests of this seat holding a reservation now. */
  holding(seat: string): number {
    return this.held.get(seat)?.count ?? 0;
  }

  hold(seat: string, micros: number): Hold {
    const amount = Math.max(0, Math.round(micros));
    const entry = this.held.get(seat) ?? { micros: 0, count: 0 };
    entry.micros += amount;
    entry.count += 1;
    this.held.set(seat, entry);
    let released = false;
    return {
      micros: amount,
      release: () => {
        if (released) return;
        released = true;
        const e = this.held.get(seat);
        if (!e) return;
        e.micros -= amount;
        e.count -= 1;
        if (e.count <= 0) this.held.delete(seat);
      },
    };
  }
}
