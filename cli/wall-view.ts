import { renderCardForPrompt } from '../core/wall/card.js';
import type { WallCard } from '../core/wall/view.js';

/**
 * `sleds wall show <id>` renders the WallCard model musher answers with (not a sentence musher wrote for the
 * prompt). The terminal shows the card in the prompt's words, as it always has: the same reader types the
 * `/sled N` it names into the session.
 */
export function renderWallCardForTerminal(card: WallCard): string {
  return renderCardForPrompt(card);
}
