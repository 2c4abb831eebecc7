import { HandOffRequest } from '../../protocol/requests.js';
import { parseBody } from '../api/parse-body.js';
import type { ApiAnswer } from '../scheduler/api.js';
import type { HandoffRow } from '../store/handoffs.js';
import type { HandedOff } from './session-handoff.js';

/**
 * `POST /v1/handoffs {sessionId, to?}`: hands the session to a teammate now and answers once the push is done
 * (unlike the hook's `/sled handoff`, a caller here can wait): 200 with the id and the sentence to show, or 409 with
 * what stopped it.
 */
export async function handOffRoute(raw: string, handOff: (sessionId: string, to: string | null) => Promise<HandedOff>, row: (id: string) => HandoffRow | null): Promise<ApiAnswer> {
  const body = parseBody(raw, HandOffRequest, '{sessionId, to?}');
  if (!body.ok) return body.answer;
  const r = await handOff(body.value.sessionId, body.value.to ?? null);
  if (!r.ok) return { status: 409, body: { error: r.line.replace(/^sled: /, '') } };
  await r.after?.();
  const sent = r.id ? row(r.id) : null;
  if (sent?.state === 'failed') {
    const why = (JSON.parse(sent.note ?? '{}') as { error?: string }).error ?? 'the push failed';
    return { status: 409, body: { error: `hand-off ${sent.id} was sealed but not sent: ${why} — sleds handoffs shows it` } };
  }
  const outcome = r.outcome?.();
  return { status: 200, body: { id: r.id ?? null, line: r.said?.() ?? r.line, handoff: sent, ...(outcome ? { outcome } : {}) } };
}
