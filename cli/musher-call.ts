import { homedir } from 'node:os';
import { resolvePaths } from '../core/paths.js';
import { runningCliEntry } from '../musher/package-root.js';
import { musherClient, nobodyListens, NOT_JSON, type CallFailure, type CallResult } from '../protocol/client/client.js';
import type { RouteInput, RouteName, RouteReply } from '../protocol/routes.js';
import { fail, failuresAreJson } from './fail.js';
import { ensureStarted } from './musher-lifecycle.js';

/**
 * The commands' one way to ask musher: a route of the protocol (protocol/routes.ts) through its typed client, and
 * the one line (or, under --json, the one JSON object) a user reads when that does not work. A musher that is away
 * is started first, as the hooks do (unless SLEDS_NO_AUTOSTART=1), and the command says so once on stderr. Each
 * command only handles the answer: a typed reply, or musher's refusal.
 */

export const MUSHER_AWAY_MESSAGE = `musher is not running — start it with 'sleds musher start' or let the next hook start it`;


/** musher said no: its status and its body (which carries `{error}`). */
export type MusherRefusal = Extract<CallFailure, { kind: 'refused' }>;
export type MusherAnswer<N extends RouteName> = { ok: true; status: number; body: RouteReply<N> } | MusherRefusal;

/** Started by this process already (a command may ask several times): said once, tried once. */
let startTried = false;

/** Starts musher unless the user runs it themselves (or this process tried already). */
async function startForCommand(): Promise<'answers' | 'did-not-start' | 'not-tried'> {
  if (process.env.SLEDS_NO_AUTOSTART || startTried) return 'not-tried';
  startTried = true;
  // The CLI this command runs in: the compiled one, or the source entry under the same loader.
  const started = await ensureStarted(runningCliEntry());
  if (!started) return 'did-not-start';
  if (!started.alreadyRunning) process.stderr.write(`sleds: started musher (pid ${started.pid})\n`);
  return 'answers';
}

/**
 * musher's answer to route `name`: its typed reply, or its refusal; null (after reporting why through fail()) when
 * it is away, timed out, or answered something the route does not promise.
 */
export async function askMusher<N extends RouteName>(name: N, input: RouteInput<N>, timeoutMs = 5_000): Promise<MusherAnswer<N> | null> {
  const paths = resolvePaths(process.env, homedir());
  const client = musherClient({ socketPath: paths.socketFile, timeoutMs });
  let res: CallResult<N> = await client.call(name, input);
  if (!res.ok && nobodyListens(res)) {
    const start = await startForCommand();
    if (start === 'did-not-start') {
      fail(`musher is not running and did not start — see ${paths.logFile}, or run 'sleds musher' to watch it start`);
      return null;
    }
    if (start === 'answers') res = await client.call(name, input);
  }
  if (res.ok || res.kind === 'refused') return res;
  if (res.kind === 'unreachable') {
    fail(nobodyListens(res) ? MUSHER_AWAY_MESSAGE : `musher did not answer (${res.reason}) — see its log (sleds doctor)`);
    return null;
  }
  if (res.reason === NOT_JSON) fail(`musher answered ${res.status} with something that is not JSON — see its log (sleds doctor)`);
  else fail(`musher answered ${res.status} with something this version of sleds cannot read (${res.reason}) — update sleds, or see its log (sleds doctor)`);
  return null;
}

/** A refusal from musher, as the command reports it: the body under --json, else its error in one line. Exit code 1. */
export function reportRefusal(refusal: MusherRefusal, json: boolean = failuresAreJson()): number {
  if (json) {
    // musher's refusals carry { error }; one that does not still reaches a script as { error }.
    process.stdout.write(`${JSON.stringify({ ...refusal.body, error: refusal.error }, null, 2)}\n`);
    return 1;
  }
  process.stderr.write(`sleds: ${refusal.error}\n`);
  return 1;
}
