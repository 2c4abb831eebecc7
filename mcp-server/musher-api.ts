import { MusherUnreachable, requestMusher } from '../hooks/musher-client.js';
import { nobodyListens, startMusherDetached } from '../hooks/start-musher.js';

/** musher's socket API as the MCP tools use it: JSON in, JSON out, musher started when it is away (as the hooks do). */
export interface MusherApi {
  call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<ApiReply>;
}

export interface ApiReply {
  status: number;
  /** The parsed JSON body (null when the body was not JSON). */
  json: unknown;
}

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
  const once = async (method: string, path: string, body: unknown): Promise<ApiReply> => {
    const payload = body === undefined ? null : JSON.stringify(body);
    const res = await requestMusher(o.socketPath, method, path, payload, payload === null ? {} : { 'content-type': 'application/json' }, o.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    let json: unknown = null;
    try {
      json = JSON.parse(res.body);
    } catch {
      // Not JSON: the reply has no body; its status says what happened.
      json = null;
    }
    return { status: res.status, json };
  };
  let started = false;
  return {
    async call(method, path, body) {
      try {
        return await once(method, path, body);
      } catch (e) {
        if (!(e instanceof MusherUnreachable)) throw e;
        // Something listens but did not answer in time: a musher that is busy. Starting another would only lose the
        // lock, and sending the request again could do its work twice (a hand-off, a dispatch).
        if (!nobodyListens(e.reason)) throw new MusherAway(`sleds: musher did not answer (${e.reason}) — see its log (sleds doctor)`);
        if (!o.autostart) throw new MusherAway(`sleds: musher is not running (${e.reason}) — start it with 'sleds musher start'`);
        if (!started) {
          started = true;
          await startMusherDetached(o.cliMain);
        }
        // A musher that is starting answers within a second or two; keep asking until then.
        const end = Date.now() + (o.startWaitMs ?? START_WAIT_MS);
        let last = e.reason;
        while (Date.now() < end) {
          await new Promise((r) => setTimeout(r, RETRY_EVERY_MS));
          try {
            return await once(method, path, body);
          } catch (again) {
            if (!(again instanceof MusherUnreachable)) throw again;
            // It listens now but did not answer: the request may have reached it, so it is not sent a third time.
            if (!nobodyListens(again.reason)) throw new MusherAway(`sleds: musher did not answer (${again.reason}) — see its log (sleds doctor)`);
            last = again.reason;
          }
        }
        throw new MusherAway(`sleds: musher did not start (${last}) — run 'sleds doctor' to see why, or 'sleds musher start'`);
      }
    },
  };
}
