import type { ApiAnswer } from '../scheduler/api.js';
import { EstimateRequest, type EstimateService } from './service.js';

/** `POST /v1/estimate` body {text?, taskId?, type?, model?, repo?} → {band, prior, similar, text}. server.ts only routes here. */
export function estimateRoute(service: EstimateService, raw: string): ApiAnswer {
  let json: unknown;
  try {
    json = JSON.parse(raw || '{}');
  } catch {
    return { status: 400, body: { error: 'the body is not JSON — send {text?, taskId?, type?, model?, repo?}' } };
  }
  const parsed = EstimateRequest.safeParse(json);
  if (!parsed.success) return { status: 400, body: { error: parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ') } };
  return service.request(parsed.data);
}
