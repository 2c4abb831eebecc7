import { EXIT_ORDER, exitNumber, type ExitKind, type Offer, type RemainingWork } from '../exits/types.js';
import { formatRemaining, formatWhen } from '../exits/words.js';

/**
 * What the user sees at the wall: the card that answers the next prompt, and the statusline's second line.
 * Pure; the times are rendered in the zone passed in.
 */

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

export interface WallChoiceView {
  exit: ExitKind;
  by: 'policy' | 'user';
  /** The policy rule that chose it, when the policy did. */
  rule: string | null;
  /** What happened when it was taken, one line. */
  outcome: string | null;
}

export interface WallCardView {
  wallId: string;
  window: string | null;
  resetAtMs: number | null;
  nowMs: number;
  timeZone: string;
  /** Null when the snapshot failed; the reason is then in snapshotNote. */
  snapshotId: string | null;
  snapshotNote: string | null;
  remaining: RemainingWork;
  offers: Offer[];
  choice: WallChoiceView | null;
}

const TITLE_WIDTH = 19;

export function renderWallCard(v: WallCardView): string {
  const lines: string[] = [];
  lines.push(v.snapshotId ? 'Wall: usage limit reached. Session snapshotted.' : `Wall: usage limit reached. No snapshot: ${v.snapshotNote ?? 'unknown reason'}.`);
  const reset = v.resetAtMs !== null ? ` Resets ${formatWhen(v.resetAtMs, v.nowMs, v.timeZone)}.` : '';
  lines.push(`Provider: ${windowTitle(v.window)} limit reached.${reset}`);
  lines.push(`Remaining work: ${formatRemaining(v.remaining)}`);
  for (const kind of EXIT_ORDER) {
    const o = v.offers.find((x) => x.exit === kind);
    if (!o) continue;
    const detail = o.ok ? o.detail : `— ${o.detail}`;
    lines.push(`${o.number} ${o.title.padEnd(TITLE_WIDTH - 1)}${detail}`);
  }
  if (v.choice) {
    const chosen = v.offers.find((o) => o.exit === v.choice!.exit);
    const name = `${exitNumber(v.choice.exit)} ${chosen?.title ?? v.choice.exit}`;
    lines.push(
      v.choice.by === 'policy'
        ? `The policy chose ${name}${v.choice.rule ? ` (rule: ${v.choice.rule})` : ''}; the audit log says so.`
        : `You chose ${name}.`,
    );
    if (v.choice.outcome) lines.push(v.choice.outcome);
    lines.push(`Reply /sled 1 … /sled 6 to choose otherwise.  wall ${v.wallId}`);
  } else {
    lines.push(`Reply /sled 1 … /sled 6.  wall ${v.wallId}`);
  }
  return lines.join('\n');
}

/** The statusline's second line at the wall: `⛔ wall jd7k2m9qa41p · 1 key $38 left · 2 hold → 9:00am · …`. */
export function renderWallLine(wallId: string, offers: Offer[]): string {
  const parts = offers.filter((o) => o.ok).map((o) => `${o.number} ${o.short}`);
  return [`⛔ wall ${wallId}`, ...parts].join(' · ');
}

/** At amber: the exits that would be offered at 100%, in a few words. */
export function renderExitsHint(offers: Offer[]): string {
  const ok = offers.filter((o) => o.ok).map((o) => o.short);
  return ok.length > 0 ? `at 100%: ${ok.join(' · ')}` : '';
}
