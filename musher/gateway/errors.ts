import type { GatewayProvider } from '../../core/gateway/meter.js';

/**
 * The gateway's own refusals, in each provider's error envelope (shared/facts/model-apis.md §4.1, §5.5), so the harness
 * shows the message as it shows the vendor's.
 *
 * Every refusal carries `x-should-retry: false`: measured on Claude Code 2.1.328, the SDK honours it for every
 * status (a bare 401 or 429 is retried 10 times over ~3 minutes; with the header, one request).
 */
export interface GatewayRefusal {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type RefusalKind = 'no-token' | 'allowance' | 'no-key' | 'upstream-unreachable' | 'not-found' | 'bad-request' | 'too-large';

/**
 * Status per kind. The allowance is 402 `billing_error`: the real Claude Code sends one request and prints
 * "API Error: 402 <message>" (400 set off six retries that drop beta features one by one; 403 printed
 * "Please run /login"). An unreachable upstream is 529 `overloaded_error`, left retryable: it is usually brief.
 */
const ANTHROPIC: Record<RefusalKind, { status: number; type: string; retry: boolean }> = {
  'no-token': { status: 401, type: 'authentication_error', retry: false },
  allowance: { status: 402, type: 'billing_error', retry: false },
  'no-key': { status: 500, type: 'api_error', retry: false },
  'upstream-unreachable': { status: 529, type: 'overloaded_error', retry: true },
  'not-found': { status: 404, type: 'not_found_error', retry: false },
  'bad-request': { status: 400, type: 'invalid_request_error', retry: false },
  'too-large': { status: 413, type: 'request_too_large', retry: false },
};

/**
 * Codex 0.169 (measured, custom provider, default retries) ignores `x-should-retry`: a 401, 402 or 403 is retried
 * five times ("Reconnecting... 5/5", ~7 s) before the message shows; a 429 `insufficient_quota` is not retried but
 * replaced by Codex's own "Quota exceeded. Check your plan and billing details."; a 400 is sent once and its body
 * shown whole. So what must be read once is a 400 here.
 */
const OPENAI: Record<RefusalKind, { status: number; type: string; code: string; retry: boolean }> = {
  'no-token': { status: 401, type: 'invalid_request_error', code: 'invalid_api_key', retry: false },
  allowance: { status: 400, type: 'invalid_request_error', code: 'allowance_spent', retry: false },
  'no-key': { status: 400, type: 'invalid_request_error', code: 'platform_key_missing', retry: false },
  'upstream-unreachable': { status: 503, type: 'service_unavailable_error', code: 'upstream_unreachable', retry: true },
  'not-found': { status: 404, type: 'invalid_request_error', code: 'not_found', retry: false },
  'bad-request': { status: 400, type: 'invalid_request_error', code: 'invalid_json', retry: false },
  'too-large': { status: 413, type: 'invalid_request_error', code: 'request_too_large', retry: false },
};

export function refusal(provider: GatewayProvider, kind: RefusalKind, message: string): GatewayRefusal {
  if (provider === 'openai') {
    const r = OPENAI[kind];
    return {
      status: r.status,
      headers: { 'content-type': 'application/json', ...(r.retry ? {} : { 'x-should-retry': 'false' }) },
      body: JSON.stringify({ error: { message, type: r.type, param: null, code: r.code } }),
    };
  }
  const r = ANTHROPIC[kind];
  return {
    status: r.status,
    headers: { 'content-type': 'application/json', ...(r.retry ? {} : { 'x-should-retry': 'false' }) },
    body: JSON.stringify({ type: 'error', error: { type: r.type, message }, request_id: null }),
  };
}
