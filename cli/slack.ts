import { homedir } from 'node:os';
import { fingerprint } from '../musher/secrets/platform-keys.js';
import { cliSettings } from '../musher/config/cli-settings.js';
import { SLACK_APP_TOKEN_SECRET, SLACK_BOT_TOKEN_SECRET, slackApiUrl } from '../musher/notify/slack.js';
import { fail, openStore, removeToken, saveToken, type StoredToken } from './stored-token.js';

/**
 * `sleds slack set-token|set-app-token|status|rm [app-token]`: the Slack bot token (`xoxb-…`) hand-off notices and
 * parked questions are posted with, and the app-level token (`xapp-…`) their buttons are answered through (Socket Mode). Like
 * `sleds key set`, the token comes on stdin only (never argv) and is never printed: status shows a fingerprint.
 */
const SLACK_TOKEN: StoredToken = { command: 'sleds slack set-token', label: 'Slack bot token', prompt: 'the Slack bot token (xoxb-…)', secret: SLACK_BOT_TOKEN_SECRET };

/** The app-level token (`xapp-…`, connections:write): Socket Mode, so a parked question's buttons can be tapped. */
const SLACK_APP_TOKEN: StoredToken = { command: 'sleds slack set-app-token', label: 'Slack app-level token', prompt: 'the Slack app-level token (xapp-…)', secret: SLACK_APP_TOKEN_SECRET };

function setAppToken(args: string[], json: boolean): Promise<number> {
  return saveToken(SLACK_APP_TOKEN, args, json, {
    refuse: (v) => (v.startsWith('xoxb-') ? "that is the bot token (xoxb-…); Socket Mode needs the app-level token (xapp-…, under 'Basic Information' → App-Level Tokens, scope connections:write) — nothing saved" : null),
    warn: (v) => (v.startsWith('xapp-') ? null : 'this is not an app-level token (xapp-…); Slack may refuse it'),
  });
}

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
  let app: string | null;
  try {
    value = await store.get(SLACK_BOT_TOKEN_SECRET);
    app = await store.get(SLACK_APP_TOKEN_SECRET);
  } catch (e) {
    return fail((e as Error).message);
  }
  const apiUrl = slackApiUrl({ baseUrl: cliSettings(process.env, homedir()).upstream('slack') });
  const fp = value === null ? null : fingerprint(value);
  if (json) {
    process.stdout.write(`${JSON.stringify({ configured: value !== null, fingerprint: fp, appToken: app === null ? null : { fingerprint: fingerprint(app) }, apiUrl, backend: where.backend, location: where.location })}\n`);
    return 0;
  }
  process.stdout.write(
    value === null
      ? `Slack bot token: not set — sleds slack set-token < tokenfile (API ${apiUrl})\n`
      : `Slack bot token: set · fingerprint ${fp} · ${where.location} (API ${apiUrl})\n`,
  );
  process.stdout.write(
    app === null
      ? `Slack app-level token: not set — parked questions are posted without buttons; sleds slack set-app-token < tokenfile to answer them by tapping\n`
      : `Slack app-level token: set · fingerprint ${fingerprint(app)} (Socket Mode: question buttons)\n`,
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
    case 'set-app-token':
      return setAppToken(rest, json);
    case 'rm':
      return removeToken(rest[0] === 'app-token' ? SLACK_APP_TOKEN : SLACK_TOKEN, json);
    default:
      return fail('slack takes set-token, set-app-token, status or rm [app-token] — e.g. sleds slack set-token < tokenfile', 2);
  }
}
