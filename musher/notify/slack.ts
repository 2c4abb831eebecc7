import { z } from 'zod';
import {
  handoffMessage,
  pickedUpMessage,
  type HandoffNoticeWords,
  type PickedUpWords,
  type SlackMessage,
} from '../../core/notify/messages.js';
import { noChannelLine, noTokenLine, slackErrorLine, type SlackFailureContext } from '../../core/notify/slack-errors.js';
import { retryAfterMs } from '../../core/usage-endpoint.js';
import type { Log } from '../log.js';
import type { SecretStore } from '../secrets/store.js';
import { DEFAULT_UPSTREAMS } from '../config/schema.js';

/**
 * Slack's Web API, `chat.postMessage` only: JSON with the bot token as a Bearer header (never a form field, never
 * logged, never in an error). Slack answers API errors as HTTP 200 `{ok:false,error}`; a 429 carries Retry-After,
 * honoured once (a hand-off notice that waits longer than that is better reported than queued).
 */

export const DEFAULT_SLACK_API_URL = DEFAULT_UPSTREAMS.slack;
/** Where a wrong API URL is fixed, for the error lines. */
const API_URL_SETTING = 'upstreams.slack in config.yml';
/** The secret store's name for the bot token (`xoxb-…`). */
export const SLACK_BOT_TOKEN_SECRET = 'slack-bot-token';
/** A Retry-After longer than this is not waited for: the notice fails with its line instead. */
export const MAX_RETRY_AFTER_MS = 60_000;
const DEFAULT_TIMEOUT_MS = 10_000;

export interface SlackDeps {
  secrets: Pick<SecretStore, 'get'>;
  /** config.yml's upstreams.slack; default https://slack.com/api/. */
  baseUrl?: string;
  fetchImpl?: typeof fetch;
  /** Waits out a 429's Retry-After; tests pass one that records and returns at once. */
  sleep?: (ms: number) => Promise<void>;
  /** For Retry-After given as an HTTP date. Default Date.now. */
  now?: () => number;
  log?: Log;
  timeoutMs?: number;
}

export type SlackPostResult =
  | { ok: true; ts: string; channel: string }
  /** `error` is the one line to show; `code` is Slack's error code, or `no_token`, `no_channel`, `http_<status>`, `network`. */
  | { ok: false; error: string; code: string };

/** Where a notice goes: an explicit channel, else the teammate's Slack user id (Slack then posts in the bot's DM). */
export interface SlackTarget {
  /** A channel id (C…/G…/D…) from options; wins over the teammate's id. */
  channel?: string | null;
  /** The teammate's roster handle and Slack id (`slack:` in .sleds/roster.yml). */
  handle: string;
  slackId?: string | null;
}

export interface HandoffNotice extends HandoffNoticeWords {
  to: SlackTarget;
}

export interface PickedUpNotice extends PickedUpWords {
  /** Usually the hand-off post's own channel (the D… id `postHandoff` returned) and its ts, to answer in its thread. */
  channel: string;
  threadTs?: string | null;
}

const PostMessageAnswer = z.looseObject({
  ok: z.boolean(),
  error: z.string().optional(),
  needed: z.string().optional(),
  channel: z.string().optional(),
  ts: z.string().optional(),
});

export function slackApiUrl(deps: Pick<SlackDeps, 'baseUrl'>): string {
  const base = deps.baseUrl ?? DEFAULT_SLACK_API_URL;
  return base.endsWith('/') ? base : `${base}/`;
}

const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The token must never leave through an error: scrub it from any text that might have come near it. */
function scrub(text: string, token: string): string {
  return token ? text.split(token).join('[token]') : text;
}

function fail(error: string, code: string): SlackPostResult {
  return { ok: false, error, code };
}

/** `chat.postMessage` to `channel`: text plus blocks; one retry after a 429's Retry-After. */
export async function postMessage(
  channel: string,
  message: SlackMessage & { thread_ts?: string },
  deps: SlackDeps,
  ctx: SlackFailureContext = { channel },
): Promise<SlackPostResult> {
  let token: string | null;
  try {
    token = (await deps.secrets.get(SLACK_BOT_TOKEN_SECRET))?.trim() || null;
  } catch (e) {
    return fail(`Slack: could not read the bot token — ${(e as Error).message}`, 'no_token');
  }
  if (!token) return fail(noTokenLine(), 'no_token');

  const url = `${slackApiUrl(deps)}chat.postMessage`;
  const fetchImpl = deps.fetchImpl ?? fetch;
  const sleep = deps.sleep ?? realSleep;
  const now = deps.now ?? Date.now;
  const body = JSON.stringify({ channel, text: message.text, blocks: message.blocks, unfurl_links: false, unfurl_media: false, ...(message.thread_ts ? { thread_ts: message.thread_ts } : {}) });

  for (let attempt = 0; ; attempt++) {
    let res: Response;
    try {
      res = await fetchImpl(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json; charset=utf-8' },
        body,
        signal: AbortSignal.timeout(deps.timeoutMs ?? DEFAULT_TIMEOUT_MS),
      });
    } catch (e) {
      const cause = (e as Error).name === 'TimeoutError' ? 'it did not answer in time' : scrub((e as Error).message, token);
      return fail(`Slack could not be reached at ${new URL(url).host} (${cause}) — check the network or ${API_URL_SETTING}`, 'network');
    }
    if (res.status === 429) {
      await res.body?.cancel();
      const wait = retryAfterMs(res.headers.get('retry-after'), now()) ?? 1000;
      if (attempt === 0 && wait <= MAX_RETRY_AFTER_MS) {
        deps.log?.info(`slack: chat.postMessage rate-limited; retrying once in ${Math.ceil(wait / 1000)}s`);
        await sleep(wait);
        continue;
      }
      return fail(slackErrorLine('ratelimited', ctx), 'ratelimited');
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      return fail(`Slack answered HTTP ${res.status} to chat.postMessage — try again later, or check ${API_URL_SETTING}`, `http_${res.status}`);
    }
    let parsed: z.infer<typeof PostMessageAnswer>;
    try {
      const answer = PostMessageAnswer.safeParse(await res.json());
      if (!answer.success) throw new Error('not a Web API answer');
      parsed = answer.data;
    } catch {
      return fail(`Slack's answer to chat.postMessage was not its JSON — check ${API_URL_SETTING}`, 'bad_answer');
    }
    if (!parsed.ok) {
      const code = parsed.error ?? 'unknown_error';
      const line = slackErrorLine(code, ctx, { needed: parsed.needed });
      deps.log?.warn(`slack: chat.postMessage failed: ${line}`);
      return fail(line, code);
    }
    if (!parsed.ts || !parsed.channel) return fail(`Slack's answer to chat.postMessage had no ts or channel — check ${API_URL_SETTING}`, 'bad_answer');
    return { ok: true, ts: parsed.ts, channel: parsed.channel };
  }
}

/** The hand-off notice, to the channel from options or as a DM to the teammate. */
export async function postHandoff(msg: HandoffNotice, deps: SlackDeps): Promise<SlackPostResult> {
  const channel = msg.to.channel || msg.to.slackId;
  if (!channel) return fail(noChannelLine(msg.to.handle), 'no_channel');
  const ctx: SlackFailureContext = msg.to.channel ? { channel } : { channel, handle: msg.to.handle };
  return postMessage(channel, handoffMessage(msg), deps, ctx);
}

/** "picked up by dana 2:02pm", in the hand-off post's thread when its ts is known. */
export async function postPickedUp(msg: PickedUpNotice, deps: SlackDeps): Promise<SlackPostResult> {
  const message = pickedUpMessage(msg);
  return postMessage(msg.channel, msg.threadTs ? { ...message, thread_ts: msg.threadTs } : message, deps);
}
