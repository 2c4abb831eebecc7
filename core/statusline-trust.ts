import type { BarView } from './statusline-render.js';

/** A bar as musher holds it: the figure it trusts, from which source, how old. */
export interface TrustedBar {
  label: string;
  usedPct: number;
  resetsAtMs: number | null;
  ageMs: number;
  source: string;
}

/**
 * The bars the line shows: Claude Code's own figure where musher holds the same, else the figure musher trusts,
 * named with its source and age (another session's higher reading, the usage endpoint's newer one). The line's
 * colour is computed from these same bars, so its text and its colour never disagree.
 */
export function trustedBars(fromStdin: BarView[], held: TrustedBar[]): BarView[] {
  return fromStdin.map((b) => {
    const h = held.find((x) => x.label === b.label);
    if (!h || h.usedPct === b.usedPct) return b;
    return { label: h.label, usedPct: h.usedPct, resetsAtMs: h.resetsAtMs, ageMs: h.ageMs, source: h.source };
  });
}
