/**
 * The six ways out of a wall, priced before any is taken. Pure: every figure comes from the context passed in, so
 * the card, the policy and the tests all see the same numbers. The `take` side (I/O) lives in musher/exits/.
 */
/** `/sled 1` … `/sled 6`, in this order. */
export const EXIT_ORDER = ['continue', 'hold', 'overnight', 'switch', 'handoff', 'defer'] as const;
export type ExitKind = (typeof EXIT_ORDER)[number];

export function exitNumber(kind: ExitKind): number {
  return EXIT_ORDER.indexOf(kind) + 1;
}

export function exitByNumber(n: number): ExitKind | null {
  return EXIT_ORDER[n - 1] ?? null;
}

/** A range of micro-dollars (lo ≤ hi). */
export interface MoneyBand {
  loMicros: number;
  hiMicros: number;
}

/** What the remaining work will take. Null fields: not known, and the card says "estimate: none". */
export interface RemainingWork {
  usd: MoneyBand | null;
  minutes: { lo: number; hi: number } | null;
  /** How often such bands held, 0–1 (task sizing supplies it). */
  fit: number | null;
  /** The session's own API-equivalent burn per active hour: the honest figure before task sizing exists. */
  burnPerHourMicros: number | null;
}

export interface ExitContext {
  nowMs: number;
  timeZone: string;
  wall: {
    window: string | null;
    resetAtMs: number | null;
  };
  /**
   * The session: its harness's id (a registry id; core names none), the plan provider whose platform key continues it
   * ('anthropic', 'openai': the adapter's provider), and its model.
   */
  session: { id: string; harness: string; provider: string; model: string | null };
  remaining: RemainingWork;
  /** The platform key: null when none is configured. Allowance fields null = uncapped. */
  key: { allowanceLeft: { dayMicros: number | null; weekMicros: number | null } } | null;
  /** The policy's cheaper step for the session's model, and its price relative to the current model (0–1). */
  cheaper: { model: string; priceRatio: number | null } | null;
  /** The next overnight window, if the policy has one. */
  overnight: { startMs: number; endMs: number } | null;
  /** Who would take it over unnamed: the owner of the changed files, else the teammate with the most headroom; null: nobody. */
  teammate: { handle: string; name: string; idleMs: number | null; why?: 'owner' | 'headroom' } | null;
  /** Every teammate in the roster but this seat: each can be named (`/sled 5 dana`). Absent on walls opened before it was kept. */
  teammates?: Array<{ handle: string; name: string }>;
  /** Whether this machine can seal and send a hand-off (seat keys and a transport). */
  handoffReady: boolean;
  /** Set when resuming after the reset will start with a cold prompt cache (SessionStart says so). */
  coldCache: { writeCostMicros: number | null } | null;
}

export interface Offer {
  exit: ExitKind;
  number: number;
  /** "Continue now", "Hold until reset", … */
  title: string;
  /** False when the exit cannot apply here; `detail` then says why. */
  ok: boolean;
  /** One line after the title: the price, the time, what happens. */
  detail: string;
  /** Short form for the statusline's wall line: "key $38 left", "hold → 9:00am". */
  short: string;
  /** Dollar cost of the rest of the work by this exit, when it can be said. */
  cost: MoneyBand | null;
}
