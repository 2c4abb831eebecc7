import { z } from 'zod';

/**
 * A band: what a task is expected to cost and take, as a range (the 20th–80th percentiles of similar past tasks),
 * with its fit: how often similar tasks landed inside their own band. "$4–11 · 20–55 min · 81%".
 * `basis` says where it came from: real receipts, or a labelled prior from the prompt's size and the model's prices
 * when fewer than five similar receipts exist (never shown as if it were measured).
 */
export const Band = z.object({
  lowMicros: z.number().int().nonnegative(),
  highMicros: z.number().int().nonnegative(),
  lowMinutes: z.number().nonnegative(),
  highMinutes: z.number().nonnegative(),
  /** Similar tasks that landed in their band, of those that had one; null when none had one yet. */
  fit: z.object({ inBand: z.number().int().nonnegative(), of: z.number().int().nonnegative() }).nullable(),
  basis: z.enum(['receipts', 'prior']),
  /** How many past receipts the band stands on (0 for a prior). */
  n: z.number().int().nonnegative(),
});
export type Band = z.infer<typeof Band>;

/** Fewer similar receipts than this: "no band yet". */
export const MIN_SIMILAR_RECEIPTS = 5;
