import { homedir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { resolvePaths } from '../core/paths.js';
import { MusherUnreachable, requestMusher } from '../hooks/musher-client.js';
import { fail, failuresAreJson } from './fail.js';
import { ensureStarted } from './musher-lifecycle.js';
import { nobodyListens } from '../hooks/start-musher.js';

/**
 * The commands' one way to ask musher: a JSON request over its socket, and the one line (or, under --json, the one
 * JSON object) a user reads when that does not work. A musher that is away is started first, as the hooks do
 * (unless SLEDS_NO_AUTOSTART=1), and the command says so once on stderr. Each command only handles the answer.
 */

export const MUSHER_AWAY_MESSAGE = `musher is not running — start it with 'sleds musher start' or let the next hook start it`;

/** dist/cli/main.js, beside this file: what the background start runs. */
const CLI_MAIN = fileURLToPath(new URL('./main.js', import.meta.url));

export interface MusherReply {
  status: number;
  body: Record<string, unknown>;
}

/** Started by this process already (a command may ask several times): said once, tried once. */
let startTried = false;

/** Starts musher unless the user runs it themselves (or this process tried already). */
async function startForCommand(): Promise<'answers' | 'did-not-start' | 'not-tried'> {
  if (process.env.SLEDS_NO_AUTOSTART || startTried) return 'not-tried';
  startTried = true;
  const started = await ensureStarted(CLI_MAIN);
  if (!started) return 'did-not-start';
  if (!started.alreadyRunning) process.stderr.write(`sleds: started musher (pid ${started.pid})\n`);
  return 'answers';
}

/** musher's answer; null (after reporting why through fail()) when it is away, timed out, or answered something not JSON. */
export async function callMusher(method: 'GET' | 'POST', path: string, body: unknown = null, timeoutMs = 5_000): Promise<MusherReply | null> {
  const socket = resolvePaths(process.env, homedir()).socketFile;
  const ask = () => requestMusher(socket, method, path, body === null ? null : JSON.stringify(body), body === null ? {} : { 'content-type': 'application/json' }, timeoutMs);
  let res;
  try {
    try {
      res = await ask();
    } catch (e) {
      if (!(e instanceof MusherUnreachable && nobodyListens(e.reason))) throw e;
      const start = await startForCommand();
      if (start === 'did-not-start') {
        const log = resolvePaths(process.env, homedir()).logFile;
        fail(`musher is not running and did not start — see ${log}, or run 'sleds musher' to watch it start`);
        return null;
      }
      if (start === 'not-tried') throw e;
      res = await ask();
    }
  } catch (e) {
    const reason = e instanceof MusherUnreachable ? e.reason : (e as Error).message;
    fail(nobodyListens(reason) ? MUSHER_AWAY_MESSAGE : `musher did not answer (${reason}) — see its log (sleds doctor)`);
    return null;
  }
  try {
    return { status: res.status, body: JSON.parse(res.body) as Record<string, unknown> };
  } catch {
    fail(`musher answered ${res.status} with something that is not JSON — see its log (sleds doctor)`);
    return null;
  }
}

/** A refusal from musher, as the command reports it: the body under --json, else its error in one line. Exit code 1. */
export function reportRefusal(reply: MusherReply, json: boolean = failuresAreJson()): number {
  if (json) {
    // musher's refusals carry { error }; one that does not still reaches a script as { error }.
    const body = typeof reply.body.error === 'string' ? reply.body : { ...reply.body, error: `musher answered HTTP ${reply.status}` };
    process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
    return 1;
  }
  process.stderr.write(`sleds: ${typeof reply.body.error === 'string' ? reply.body.error : `musher answered HTTP ${reply.status}`}\n`);
  return 1;
}
