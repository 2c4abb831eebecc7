import { EXIT_ORDER, exitNumber, type ExitKind, type MoneyBand, type Offer, type RemainingWork } from '../exits/types.js';

/**
 * The wall as a typed view model: what the card shows, as facts, so each surface (the prompt's hook answer, the CLI,
 * the MCP tools, `--json`) renders the same thing its own way. Pure; no sentence is built here.
 */

/** One of the six exits as the card lists it. */
export interface WallExit {
  number: number;
  kind: ExitKind;
  /** "Continue now", "Hand off to Dana", … */
  title: string;
  available: boolean;
  /** The price, the time, what happens (when available). */
  detail: string | null;
  /** Why it cannot be taken here (when not available). */
  whyNot: string | null;
  /** The statusline's few words for it. */
  short: string;
  cost: MoneyBand | null;
}

/** The exit taken at the wall, and by whom. */
export interface WallPick {
  exit: ExitKind;
  number: number;
  title: string;
  by: 'policy' | 'user';
  /** The policy rule that chose it, when the policy did. */
  rule: string | null;
  /** What happened when it was taken (the prompt's words for its ExitOutcome). */
  outcome: string | null;
}

export interface WallCard {
  wallId: string;
  /** The provider's window id (`five_hour`, `seven_day`, `codex_primary`, …); null when not known. */
  window: string | null;
  /** "5-hour", "Weekly", … */
  windowTitle: string;
  resetAtMs: number | null;
  /** When the card was made and the zone its times are rendered in. */
  nowMs: number;
  timeZone: string;
  snapshot: { id: string | null; note: string | null };
  remaining: RemainingWork;
  /** In /sled order. */
  exits: WallExit[];
  pick: WallPick | null;
}

/** "5-hour", "Weekly", "Opus weekly" — how the provider names the window in its own message. */
export function windowTitle(window: string | null): string {
  switch (window) {
    case 'five_hour':
    case 'codex_primary':
      return '5-hour';
    case 'seven_day':
    case 'codex_secondary':
      return 'Weekly';
    case 'seven_day_opus':
      return 'Opus weekly';
    case 'seven_day_sonnet':
      return 'Sonnet weekly';
    case 'overage':
      return 'Usage credit';
    case null:
      return 'Usage';
    default:
      return window.replace(/_/g, ' ');
  }
}

/** What a wall keeper knows of a wall: its row's facts and the offers priced when it opened. */
export interface WallFacts {
  wallId: string;
  window: string | null;
  resetAtMs: number | null;
  nowMs: number;
  timeZone: string;
  /** Null when the snapshot failed (or is still being written); the reason is then in snapshotNote. */
  snapshotId: string | null;
  snapshotNote: string | null;
  remaining: RemainingWork;
  offers: Offer[];
  choice: { exit: ExitKind; by: 'policy' | 'user'; rule: string | null; outcome: string | null } | null;
}

export function exitOf(o: Offer): WallExit {
  return { number: o.number, kind: o.exit, title: o.title, available: o.ok, detail: o.ok ? o.detail : null, whyNot: o.ok ? null : o.detail, short: o.short, cost: o.cost };
}

export function wallCardOf(f: WallFacts): WallCard {
  const exits = EXIT_ORDER.flatMap((kind) => {
    const o = f.offers.find((x) => x.exit === kind);
    return o ? [exitOf(o)] : [];
  });
  const picked = f.choice ? f.offers.find((o) => o.exit === f.choice!.exit) : undefined;
  return {
    wallId: f.wallId,
    window: f.window,
    windowTitle: windowTitle(f.window),
    resetAtMs: f.resetAtMs,
    nowMs: f.nowMs,
    timeZone: f.timeZone,
    snapshot: { id: f.snapshotId, note: f.snapshotNote },
    remaining: f.remaining,
    exits,
    pick: f.choice
      ? { exit: f.choice.exit, number: exitNumber(f.choice.exit), title: picked?.title ?? f.choice.exit, by: f.choice.by, rule: f.choice.rule, outcome: f.choice.outcome }
      : null,
  };
}
