import type { z } from 'zod';
import type { ApiAnswer } from '../scheduler/api.js';

/**
 * A route's JSON body, checked against its schema: the value, or the 400 answer that says what was wrong and what
 * shape to send. `shape` is that shape in words, e.g. `{title, worth?}`.
 */
export function parseBody<T>(raw: string, schema: z.ZodType<T>, shape: string): { ok: true; value: T } | { ok: false; answer: ApiAnswer } {
  let json: unknown;
  try {
    json = JSON.parse(raw || '{}');
  } catch {
    return { ok: false, answer: { status: 400, body: { error: `the body is not JSON — send ${shape}` } } };
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) return { ok: false, answer: { status: 400, body: { error: parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ') } } };
  return { ok: true, value: parsed.data };
}
