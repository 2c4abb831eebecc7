import type { SignedReceipt } from '../../core/receipt/receipt.js';
import type { ApiAnswer } from '../scheduler/api.js';
import type { ReceiptService } from './service.js';
import type { ReceiptStore } from '../store/receipts.js';

/** The receipts routes, as functions of the request: server.ts only routes here. */

export interface ReceiptList {
  receipts: Array<{ receipt: SignedReceipt; line: string }>;
}

export function listReceipts(service: ReceiptService, store: ReceiptStore, query: URLSearchParams): ApiAnswer {
  const receipts = store.list(Number(query.get('limit')) || 50).map((receipt) => ({ receipt, line: service.lineOf(receipt) }));
  return { status: 200, body: { receipts } satisfies ReceiptList };
}

/** By receipt id, its prefix, or its task's id. */
export function showReceipt(service: ReceiptService, store: ReceiptStore, idOrPrefix: string): ApiAnswer {
  const r = store.find(idOrPrefix);
  if (r === 'ambiguous') return { status: 409, body: { error: `'${idOrPrefix}' matches more than one receipt — type more of its id` } };
  if (!r) return { status: 404, body: { error: `no receipt ${idOrPrefix} — sleds receipts lists them` } };
  return { status: 200, body: { receipt: r, line: service.lineOf(r) } };
}

/** `POST /v1/tasks/<id>/done`: ends the task and writes its receipt (or gives the one it has). */
export async function finishTaskRoute(service: ReceiptService, idOrPrefix: string): Promise<ApiAnswer> {
  const r = await service.finishTask(idOrPrefix, 'done');
  if ('error' in r) return { status: r.error.startsWith('no task') ? 404 : r.error.includes('more than one') ? 409 : 500, body: r };
  return { status: 200, body: r };
}
