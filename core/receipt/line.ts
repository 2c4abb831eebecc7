import { formatUsd } from '../format.js';
import type { ReceiptBody } from './receipt.js';

/** The receipt in one line, for the PR body, the task's row and the tracker: "31 min · $7.40 · in band · seat dana · claude-opus-5-5 · signed". Pure. */

export const UNSIGNED_NOTE = 'unsigned — run sleds keys init';

/** "in band", "over band" (dollars or minutes above it), "under band", or "no band". */
export function bandWord(body: Pick<ReceiptBody, 'band' | 'inBand' | 'costMicros' | 'activeMinutes'>): string {
  if (body.inBand === null || !body.band) return 'no band';
  if (body.inBand) return 'in band';
  const over = body.costMicros > body.band.highMicros || Math.round(body.activeMinutes) > body.band.highMinutes;
  return over ? 'over band' : 'under band';
}

export function receiptLine(body: ReceiptBody, signed: boolean): string {
  return [
    `${Math.round(body.activeMinutes)} min`,
    formatUsd(body.costMicros),
    bandWord(body),
    `seat ${body.seat}`,
    body.models.length > 0 ? body.models.join('+') : 'no model',
    signed ? 'signed' : UNSIGNED_NOTE,
  ].join(' · ');
}
