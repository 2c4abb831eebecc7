import type { ApiAnswer } from '../scheduler/api.js';
import { parseBody } from '../api/parse-body.js';
import { EstimateRequest, type EstimateService } from './service.js';

/** `POST /v1/estimate` body {text?, taskId?, type?, model?, repo?} → {band, prior, similar, text}. server.ts only routes here. */
export function estimateRoute(service: EstimateService, raw: string): ApiAnswer {
  const body = parseBody(raw, EstimateRequest, '{text?, taskId?, type?, model?, repo?}');
  return body.ok ? service.request(body.value) : body.answer;
}
