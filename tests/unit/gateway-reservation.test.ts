import { describe, expect, it } from 'vitest';
import { admissionRefusalMessage, admit, ReservationLedger, type AdmissionVerdict } from '../../core/gateway/reservation.js';
import { checkAllowance, type Allowance } from '../../core/gateway/allowance.js';

const $ = (d: number) => Math.round(d * 1_000_000);

describe('the admission verdict: spent + held against each cap', () => {
  it.each<[string, Allowance, { dayMicros: number; weekMicros: number }, number, AdmissionVerdict]>([
    ['uncapped: always admitted, whatever is held', { perDayMicros: null, perWeekMicros: null }, { dayMicros: $(900), weekMicros: $(900) }, $(500), { ok: true }],
    ['nothing held: a lone request is admitted while spent < cap, whatever it may cost', { perDayMicros: $(1), perWeekMicros: null }, { dayMicros: $(0.99), weekMicros: $(0.99) }, 0, { ok: true }],
    ['spent + held just under the cap: admitted', { perDayMicros: $(1), perWeekMicros: null }, { dayMicros: $(0.5), weekMicros: $(0.5) }, $(0.49), { ok: true }],
    ['spent + held at the cap: refused, held named', { perDayMicros: $(1), perWeekMicros: null }, { dayMicros: $(0.5), weekMicros: $(0.5) }, $(0.5), { ok: false, period: 'today', capMicros: $(1), spentMicros: $(0.5), heldMicros: $(0.5) }],
    ['spent alone at the cap: refused', { perDayMicros: $(1), perWeekMicros: null }, { dayMicros: $(1), weekMicros: $(1) }, 0, { ok: false, period: 'today', capMicros: $(1), spentMicros: $(1), heldMicros: 0 }],
    ['the held amount counts against the week too, and the week is said first', { perDayMicros: $(40), perWeekMicros: $(100) }, { dayMicros: $(10), weekMicros: $(95) }, $(5), { ok: false, period: 'this week', capMicros: $(100), spentMicros: $(95), heldMicros: $(5) }],
    ['a negative held amount is no credit', { perDayMicros: $(1), perWeekMicros: null }, { dayMicros: $(1), weekMicros: $(1) }, -$(5), { ok: false, period: 'today', capMicros: $(1), spentMicros: $(1), heldMicros: 0 }],
  ])('%s', (_name, allowance, spent, held, verdict) => {
    expect(admit(allowance, spent, held)).toEqual(verdict);
  });

  it('with nothing held it is the allowance check itself', () => {
    const allowance = { perDayMicros: $(40), perWeekMicros: $(150) };
    for (const spent of [{ dayMicros: $(39), weekMicros: $(149) }, { dayMicros: $(40), weekMicros: $(40) }, { dayMicros: $(5), weekMicros: $(150) }]) {
      const plain = checkAllowance(allowance, spent);
      const held = admit(allowance, spent, 0);
      expect(held.ok).toBe(plain.ok);
      if (!held.ok && !plain.ok) expect({ period: held.period, cap: held.capMicros, spent: held.spentMicros }).toEqual({ period: plain.period, cap: plain.capMicros, spent: plain.spentMicros });
    }
  });
});

describe('the bound: spent ≤ cap + one estimate while no request costs more than its estimate', () => {
  /**
   * `n` requests arrive at once (each judged before any settles), then settle in order; `more` arrive one by one
   * after that. Returns what was spent.
   */
  function run(cap: number, estimate: number, cost: number, n: number, more: number): { spent: number; admitted: number } {
    const ledger = new ReservationLedger();
    let spent = 0;
    let admitted = 0;
    const judge = () => {
      const v = admit({ perDayMicros: cap, perWeekMicros: null }, { dayMicros: spent, weekMicros: spent }, ledger.heldMicros('s'));
      if (!v.ok) return null;
      admitted++;
      return ledger.hold('s', estimate);
    };
    const holds = Array.from({ length: n }, judge);
    for (const h of holds) {
      if (!h) continue;
      spent += cost; // recorded, then released, in one step
      h.release();
    }
    for (let i = 0; i < more; i++) {
      const h = judge();
      if (!h) continue;
      spent += cost;
      h.release();
    }
    expect(ledger.heldMicros('s')).toBe(0);
    return { spent, admitted };
  }

  it.each([
    ['estimate equal to the cost', $(1), $(0.2), $(0.2), 20, 20],
    ['estimate far above the cost', $(1), $(0.9), $(0.1), 20, 20],
    ['estimate bigger than the whole cap', $(1), $(3), $(0.4), 20, 20],
    ['cheap requests, many at once', $(40), $(0.5), $(0.45), 200, 50],
    ['a cap of zero admits nothing', 0, $(0.2), $(0.2), 20, 5],
  ])('%s', (_name, cap, estimate, cost, n, more) => {
    const { spent, admitted } = run(cap, estimate, cost, n, more);
    expect(spent).toBeLessThanOrEqual(cap + estimate);
    expect(spent).toBe(admitted * cost);
    if (cap > 0) expect(admitted).toBeGreaterThan(0); // a lone request always gets through while spent < cap
  });
});

describe('the ledger', () => {
  it('holds per seat, releases once whatever the number of calls, and forgets a seat holding nothing', () => {
    const l = new ReservationLedger();
    const a = l.hold('dana', 300);
    const b = l.hold('dana', 200.4);
    const c = l.hold('lee', 50);
    expect([l.heldMicros('dana'), l.holding('dana'), l.heldMicros('lee')]).toEqual([500, 2, 50]);
    a.release();
    a.release();
    expect([l.heldMicros('dana'), l.holding('dana')]).toEqual([200, 1]);
    b.release();
    c.release();
    expect([l.heldMicros('dana'), l.holding('dana'), l.heldMicros('lee'), l.heldMicros('nobody')]).toEqual([0, 0, 0, 0]);
    expect(l.hold('dana', -5).micros).toBe(0);
  });
});

describe('the refusal line', () => {
  it('spent: the allowance\'s own words', () => {
    expect(admissionRefusalMessage('dana', { ok: false, period: 'today', capMicros: $(1), spentMicros: $(1.2), heldMicros: $(0.3) })).toBe(
      'allowance for dana spent: $1.00 today — it renews at midnight; type /sled exits for the other ways on',
    );
  });
  it('not yet spent but held by requests under way: says so, and that it clears when they finish', () => {
    expect(admissionRefusalMessage('dana', { ok: false, period: 'this week', capMicros: $(150), spentMicros: $(148.5), heldMicros: $(2.25) })).toBe(
      'allowance for dana nearly spent: $148.50 of $150.00 this week, and $2.25 held by requests still under way — try again once they finish; type /sled exits for the other ways on',
    );
  });
});
