import { homedir } from 'node:os';
import { resolvePaths } from '../core/paths.js';
import { openSecretStore, type SecretStore } from '../musher/secrets/store.js';
import { fingerprint } from '../musher/secrets/platform-keys.js';
import { SLACK_BOT_TOKEN_SECRET, slackApiUrl } from '../musher/notify/slack.js';
import { readSecretInput } from './key.js';

/**
 * `sleds slack set-token|status|rm`: the Slack bot token (`xoxb-…`) hand-off notices are posted with. Like
 * `sleds key set`, the token comes on stdin only (never argv) and is never printed: status shows a fingerprint.
 */
const MAX_TOKEN_CHARS = 512;

function fail(message: string, code = 1): number {
  process.stderr.write(`sleds: ${message}\n`);
  return code;
}

function open(): SecretStore {
  return openSecretStore(resolvePaths(process.env, homedir()));
}

async function setToken(args: string[], json: boolean): Promise<number> {
  if (args.filter((a) => a !== '--json').length > 0) {
    return fail("the token is read from stdin, never from the command line (other users see argv in ps, and shells keep it in history) — run 'sleds slack set-token' and paste it, or pipe it in: sleds slack set-token < tokenfile", 2);
  }
  let value: string;
  try {
    value = (await readSecretInput('the Slack bot token (xoxb-…)')).trim();
  } catch (e) {
    return fail((e as Error).message);
  }
  if (value === '') return fail('no token on stdin — pipe it in (sleds slack set-token < tokenfile) or paste it at the prompt', 2);
  if (/\s/.test(value) || value.length > MAX_TOKEN_CHARS) return fail('that does not look like one Slack token (it holds spaces or is very long) — nothing saved', 2);
  if (value.startsWith('xapp-')) return fail("that is an app-level token (xapp-…); posting needs the bot token (xoxb-…, under 'OAuth & Permissions') — nothing saved", 2);
  const store = open();
  try {
    await store.set(SLACK_BOT_TOKEN_SECRET, value);
  } catch (e) {
    return fail(`could not save the token: ${(e as Error).message}`);
  }
  const where = store.describe();
  const fp = fingerprint(value);
  const warning = value.startsWith('xoxb-') ? null : 'this is not a bot token (xoxb-…); Slack may refuse it';
  if (json) process.stdout.write(`${JSON.stringify({ saved: true, fingerprint: fp, backend: where.backend, location: where.location, warning })}\n`);
  else process.stdout.write(`Slack bot token saved (fingerprint ${fp}) in ${where.location}${warning ? ` — note: ${warning}` : ''}\n`);
  return 0;
}

async function status(json: boolean): Promise<number> {
  const store = open();
  const where = store.describe();
  let value: string | null;
  try {
    value = await store.get(SLACK_BOT_TOKEN_SECRET);
  } catch (e) {
    return fail((e as Error).message);
  }
  const apiUrl = slackApiUrl({});
  const fp = value === null ? null : fingerprint(value);
  if (json) {
    process.stdout.write(`${JSON.stringify({ configured: value !== null, fingerprint: fp, apiUrl, backend: where.backend, location: where.location })}\n`);
    return 0;
  }
  process.stdout.write(
    value === null
      ? `Slack bot token: not set — sleds slack set-token < tokenfile (API ${apiUrl})\n`
      : `Slack bot token: set · fingerprint ${fp} · ${where.location} (API ${apiUrl})\n`,
  );
  return 0;
}

async function remove(json: boolean): Promise<number> {
  let removed: boolean;
  try {
    removed = await open().delete(SLACK_BOT_TOKEN_SECRET);
  } catch (e) {
    return fail((e as Error).message);
  }
  if (json) process.stdout.write(`${JSON.stringify({ removed })}\n`);
  else process.stdout.write(removed ? 'Slack bot token removed\n' : 'no Slack bot token was set\n');
  return 0;
}

export async function runSlack(args: string[], json: boolean): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'set-token':
      return setToken(rest, json);
    case 'status':
      return status(json);
    case 'rm':
      return remove(json);
    default:
      return fail('slack takes set-token, status or rm — e.g. sleds slack set-token < tokenfile', 2);
  }
}
