import { homedir } from 'node:os';
import { fingerprint } from '../musher/secrets/platform-keys.js';
import { cliSettings } from '../musher/config/cli-settings.js';
import { SLACK_BOT_TOKEN_SECRET, slackApiUrl } from '../musher/notify/slack.js';
import { fail, openStore, removeToken, saveToken, type StoredToken } from './stored-token.js';

/**
 * `sleds slack set-token|status|rm`: the Slack bot token (`xoxb-…`) hand-off notices are posted with. Like
 * `sleds key set`, the token comes on stdin only (never argv) and is never printed: status shows a fingerprint.
 */
const SLACK_TOKEN: StoredToken = { command: 'sleds slack set-token', label: 'Slack bot token', prompt: 'the Slack bot token (xoxb-…)', secret: SLACK_BOT_TOKEN_SECRET };

function setToken(args: string[], json: boolean): Promise<number> {
  return saveToken(SLACK_TOKEN, args, json, {
    refuse: (v) => (v.startsWith('xapp-') ? "that is an app-level token (xapp-…); posting needs the bot token (xoxb-…, under 'OAuth & Permissions') — nothing saved" : null),
    warn: (v) => (v.startsWith('xoxb-') ? null : 'this is not a bot token (xoxb-…); Slack may refuse it'),
  });
}

async function status(json: boolean): Promise<number> {
  const store = openStore();
  const where = store.describe();
  let value: string | null;
  try {
    value = await store.get(SLACK_BOT_TOKEN_SECRET);
  } catch (e) {
    return fail((e as Error).message);
  }
  const apiUrl = slackApiUrl({ baseUrl: cliSettings(process.env, homedir()).upstream('slack') });
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

export async function runSlack(args: string[], json: boolean): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'set-token':
      return setToken(rest, json);
    case 'status':
      return status(json);
    case 'rm':
      return removeToken(SLACK_TOKEN, json);
    default:
      return fail('slack takes set-token, status or rm — e.g. sleds slack set-token < tokenfile', 2);
  }
}
