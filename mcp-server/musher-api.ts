import { musherClient, nobodyListens, type CallFailure } from '../protocol/client/client.js';
import type { RouteInput, RouteName, RouteReply } from '../protocol/routes.js';
import { startMusherDetached } from '../hooks/start-musher.js';

/**
 * musher's API as the MCP tools use it: a route of the protocol (protocol/routes.ts) through its typed client,
 * musher started when it is away (as the hooks do).
 */
export interface MusherApi {
  call<N extends RouteName>(name: N, input: RouteInput<N>): Promise<ApiReply<N>>;
}

/** musher's typed reply, its refusal, or an answer this version cannot read. */
export type ApiReply<N extends RouteName> = { ok: true; status: number; body: RouteReply<N> } | Exclude<CallFailure, { kind: 'unreachable' }>;

/** musher could not be reached, even after starting it: the one line says what to do. */
export class MusherAway extends Error {}

export interface MusherApiOptions {
  socketPath: string;
  /** dist/cli/main.js, to start musher with. */
  cliMain: string;
  /** false: the user runs musher themselves (SLEDS_NO_AUTOSTART). */
  autostart: boolean;
  /** Per request; tools that do real work (a pickup fetches and checks out) get longer. */
  timeoutMs?: number;
  /** How long to wait for a musher that is starting. */
  startWaitMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const START_WAIT_MS = 10_000;
const RETRY_EVERY_MS = 100;

export function musherApi(o: MusherApiOptions): MusherApi {
  const client = musherClient({ socketPath: o.socketPath, timeoutMs: o.timeoutMs ?? DEFAULT_TIMEOUT_MS });
  let started = false;
  return {
    async call(name, input) {
      const first = await client.call(name, input);
      if (first.ok || first.kind !== 'unreachable') return first;
      // Something listens but did not answer in time: a musher that is busy. Starting another would only lose the
      // lock, and sending the request again could do its work twice (a hand-off, a dispatch).
      if (!nobodyListens(first)) throw new MusherAway(`sleds: musher did not answer (${first.reason}) — see its log (sleds doctor)`);
      if (!o.autostart) throw new MusherAway(`sleds: musher is not running (${first.reason}) — start it with 'sleds musher start'`);
      if (!started) {
        started = true;
        await startMusherDetached(o.cliMain);
      }
      // A musher that is starting answers within a second or two; keep asking until then.
      const end = Date.now() + (o.startWaitMs ?? START_WAIT_MS);
      let last = first.reason;
      while (Date.now() < end) {
        await new Promise((r) => setTimeout(r, RETRY_EVERY_MS));
        const again = await client.call(name, input);
        if (again.ok || again.kind !== 'unreachable') return again;
        // It listens now but did not answer: the request may have reached it, so it is not sent a third time.
        if (!nobodyListens(again)) throw new MusherAway(`sleds: musher did not answer (${again.reason}) — see its log (sleds doctor)`);
        last = again.reason;
      }
      throw new MusherAway(`sleds: musher did not start (${last}) — run 'sleds doctor' to see why, or 'sleds musher start'`);
    },
  };
}
