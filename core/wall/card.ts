import type { Offer } from '../exits/types.js';
import { formatRemaining, formatWhen } from '../exits/words.js';
import { wallCardOf, type WallCard, type WallFacts } from './view.js';

/**
 * What the user sees at the wall, at the prompt: the card that answers the next prompt (rendered from the WallCard
 * view model), and the statusline's second line. Pure; the times are rendered in the card's zone.
 */

export { windowTitle } from './view.js';

const TITLE_WIDTH = 19;

/** The card as the hook's answer shows it at the prompt (the e2e and integration tests hold these words). */
export function renderCardForPrompt(card: WallCard): string {
  const lines: string[] = [];
  lines.push(card.snapshot.id ? 'Wall: usage limit reached. Session snapshotted.' : `Wall: usage limit reached. No snapshot: ${card.snapshot.note ?? 'unknown reason'}.`);
  const reset = card.resetAtMs !== null ? ` Resets ${formatWhen(card.resetAtMs, card.nowMs, card.timeZone)}.` : '';
  lines.push(`Provider: ${card.windowTitle} limit reached.${reset}`);
  lines.push(`Remaining work: ${formatRemaining(card.remaining)}`);
  for (const e of card.exits) {
    const detail = e.available ? (e.detail ?? '') : `— ${e.whyNot ?? 'not offered'}`;
    lines.push(`${e.number} ${e.title.padEnd(TITLE_WIDTH - 1)}${detail}`);
  }
  if (card.pick) {
    const name = `${card.pick.number} ${card.pick.title}`;
    lines.push(
      card.pick.by === 'policy'
        ? `The policy chose ${name}${card.pick.rule ? ` (rule: ${card.pick.rule})` : ''}; the audit log says so.`
        : `You chose ${name}.`,
    );
    if (card.pick.outcome) lines.push(card.pick.outcome);
    lines.push(`Reply /sled 1 … /sled 6 to choose otherwise.  wall ${card.wallId}`);
  } else {
    lines.push(`Reply /sled 1 … /sled 6.  wall ${card.wallId}`);
  }
  return lines.join('\n');
}

/** The prompt's card straight from a wall's facts. */
export function renderWallCard(f: WallFacts): string {
  return renderCardForPrompt(wallCardOf(f));
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
