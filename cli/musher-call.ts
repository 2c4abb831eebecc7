import { homedir } from 'node:os';
import { resolvePaths } from '../core/paths.js';
import { MusherUnreachable, requestMusher } from '../hooks/musher-client.js';

/**
 * The commands' one way to ask musher: a JSON request over its socket, and the one line a user reads when that
 * does not work. Reports go to stderr here, so each command only handles the answer it got.
 */

export const MUSHER_AWAY = `sleds: musher is not running — start it with 'sleds musher start' or let the next hook start it\n`;

export interface MusherReply {
  status: number;
  body: Record<string, unknown>;
}

/** musher's answer; null (after one line on stderr) when it is away, timed out, or answered something not JSON. */
export async function callMusher(method: 'GET' | 'POST', path: string, body: unknown = null, timeoutMs = 5_000): Promise<MusherReply | null> {
  const socket = resolvePaths(process.env, homedir()).socketFile;
  let res;
  try {
    res = await requestMusher(socket, method, path, body === null ? null : JSON.stringify(body), body === null ? {} : { 'content-type': 'application/json' }, timeoutMs);
  } catch (e) {
    const reason = e instanceof MusherUnreachable ? e.reason : (e as Error).message;
    process.stderr.write(/^(ENOENT|ECONNREFUSED)$/.test(reason) ? MUSHER_AWAY : `sleds: musher did not answer (${reason}) — see its log (sleds doctor)\n`);
    return null;
  }
  try {
    return { status: res.status, body: JSON.parse(res.body) as Record<string, unknown> };
  } catch {
    process.stderr.write(`sleds: musher answered ${res.status} with something that is not JSON — see its log (sleds doctor)\n`);
    return null;
  }
}

/** A refusal from musher, as the command reports it: the body under --json, else its error in one line. Exit code 1. */
export function reportRefusal(reply: MusherReply, json: boolean): number {
  if (json) process.stdout.write(`${JSON.stringify(reply.body, null, 2)}\n`);
  else process.stderr.write(`sleds: ${typeof reply.body.error === 'string' ? reply.body.error : `musher answered HTTP ${reply.status}`}\n`);
  return 1;
}
