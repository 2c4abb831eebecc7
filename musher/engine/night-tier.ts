import { harnessById } from '../../harnesses/registry.js';
import type { EngineNode, EngineRoute } from './ports.js';

/**
 * The half-price tier for an overnight node (issue 15 § 3): musher mints a batch-tier gateway token for the node, and
 * the node's harness adapter says how to point it at the gateway, told that answers come slowly. The
 * token's session is the node's own (`night:<route>/<node>`), so what the gateway meters under it is the node's
 * spend, which its cap is held against.
 */

export const nightSessionId = (n: { routeKey: string; nodeId: string }): string => `night:${n.routeKey}/${n.nodeId}`;

export type MintBatchToken = (req: { sessionId: string; project: string | null; ttlMs: number }) => Promise<
  { ok: true; token: string; baseUrl: string; openaiBaseUrl: string } | { ok: false; why: string }
>;

export async function nightTierEnv(
  mint: MintBatchToken,
  route: EngineRoute,
  n: Pick<EngineNode, 'routeKey' | 'nodeId'>,
  harness: string,
  ttlMs: number,
): Promise<{ ok: true; env: Record<string, string>; args: string[] } | { ok: false; why: string }> {
  const found = harnessById(harness);
  if (!found.ok) return { ok: false, why: found.error };
  const adapter = found.adapter;
  // A harness that cannot be pointed at the gateway at all says so before a token is minted for it.
  const probe = adapter.gatewayLaunch({ token: '', anthropicBaseUrl: 'http://127.0.0.1', openaiBaseUrl: 'http://127.0.0.1/v1', sessionProvider: null, slow: true, ownSessions: true });
  if (!probe.ok) return { ok: false, why: `${adapter.displayName} cannot be sent to the half-price tier: ${probe.why}` };
  const minted = await mint({ sessionId: nightSessionId(n), project: route.key, ttlMs });
  if (!minted.ok) return minted;
  // slow: the batch tier answers in minutes, and the harness is told to wait for a silent stream. ownSessions: every
  // run of an overnight node is started (and resumed) here, so a harness that ties a thread to its provider (Codex)
  // gives it one of sleds' own, which its resumes name again.
  const launch = adapter.gatewayLaunch({ token: minted.token, anthropicBaseUrl: minted.baseUrl, openaiBaseUrl: minted.openaiBaseUrl, sessionProvider: null, slow: true, ownSessions: true });
  if (!launch.ok) return { ok: false, why: `${adapter.displayName} cannot be sent to the half-price tier: ${launch.why}` };
  return { ok: true, env: launch.env, args: launch.args };
}
