import { pickupWays } from '../handoff/harness-words.js';
import type { ChatPostMessageArguments, ChatUpdateArguments, Logger, WebAPICallError, WebAPIHTTPError, WebAPIPlatformError, WebAPIRateLimitedError, WebAPIRequestError } from '@slack/web-api';
import { z } from 'zod';
import {
  handoffMessage,
  pickedUpMessage,
  type HandoffNoticeWords,
  type PickedUpWords,
  type SlackMessage,
} from '../../core/notify/messages.js';
import { noChannelLine, noTokenLine, slackErrorLine, type SlackFailureContext } from '../../core/notify/slack-errors.js';
import type { Log } from '../log.js';
import type { SecretStore } from '../secrets/store.js';
import { DEFAULT_UPSTREAMS } from '../config/schema.js';

/**
 * Slack's Web API, `chat.postMessage` and `chat.update`, through Slack's own client (`@slack/web-api`'s WebClient): the bot token
 * as a Bearer header (never a form field, never logged, never in an error). Slack answers API errors as HTTP 200
 * `{ok:false,error}` (the WebClient throws them as platform errors); a 429 carries Retry-After, honoured once (a
 * hand-off notice that waits longer than that is better reported than queued).
 */

export const DEFAULT_SLACK_API_URL = DEFAULT_UPSTREAMS.slack;
/** Where a wrong API URL is fixed, for the error lines. */
const API_URL_SETTING = 'upstreams.slack in config.yml';
/** The secret store's name for the bot token (`xoxb-…`). */
export const SLACK_BOT_TOKEN_SECRET = 'slack-bot-token';
/** The secret store's name for the app-level token (`xapp-…`): Socket Mode's, for the question cards' buttons. */
export const SLACK_APP_TOKEN_SECRET = 'slack-app-token';
/** A Retry-After longer than this is not waited for: the notice fails with its line instead. */
export const MAX_RETRY_AFTER_MS = 60_000;
const DEFAULT_TIMEOUT_MS = 10_000;

export interface SlackDeps {
  secrets: Pick<SecretStore, 'get'>;
  /** config.yml's upstreams.slack; default https://slack.com/api/. */
  baseUrl?: string;
  /** Waits out a 429's Retry-After; tests pass one that records and returns at once. */
  sleep?: (ms: number) => Promise<void>;
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

/** A good answer (the WebClient has checked `ok`): what the thread reply needs from it. */
const PostMessageAnswer = z.looseObject({
  channel: z.string().optional(),
  ts: z.string().optional(),
});

export function slackApiUrl(deps: Pick<SlackDeps, 'baseUrl'>): string {
  const base = deps.baseUrl ?? DEFAULT_SLACK_API_URL;
  return base.endsWith('/') ? base : `${base}/`;
}

const noop = (): void => undefined;
/** For Slack's clients: their own lines (debug bodies, "http request failed") stay out of the musher log. */
export const QUIET_LOGGER: Logger = { debug: noop, info: noop, warn: noop, error: noop, setLevel: noop, getLevel: () => 'error' as never, setName: noop };

const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The token must never leave through an error: scrub it from any text that might have come near it. */
function scrub(text: string, token: string): string {
  return token ? text.split(token).join('[token]') : text;
}

function fail(error: string, code: string): SlackPostResult {
  return { ok: false, error, code };
}

/** What a message carries: the fallback text and its blocks (the notices' sections, a question card's buttons). */
export interface SlackMessageBody {
  text: string;
  blocks: SlackMessage['blocks'] | readonly object[];
}

/** `chat.postMessage` to `channel`: text plus blocks; one retry after a 429's Retry-After. */
export function postMessage(
  channel: string,
  message: SlackMessageBody & { thread_ts?: string },
  deps: SlackDeps,
  ctx: SlackFailureContext = { channel },
): Promise<SlackPostResult> {
  const args = { channel, text: message.text, blocks: message.blocks, unfurl_links: false, unfurl_media: false, ...(message.thread_ts ? { thread_ts: message.thread_ts } : {}) };
  return callChat('postMessage', args, deps, ctx);
}

/** `chat.update` of the message at (`channel`, `ts`): text and blocks both (Slack keeps the old blocks when they are left out). */
export function updateMessage(channel: string, ts: string, message: SlackMessageBody, deps: SlackDeps): Promise<SlackPostResult> {
  return callChat('update', { channel, ts, text: message.text, blocks: message.blocks }, deps, { channel });
}

async function callChat(method: 'postMessage' | 'update', args: Record<string, unknown>, deps: SlackDeps, ctx: SlackFailureContext): Promise<SlackPostResult> {
  const name = `chat.${method}`;
  let token: string | null;
  try {
    token = (await deps.secrets.get(SLACK_BOT_TOKEN_SECRET))?.trim() || null;
  } catch (e) {
    return fail(`Slack: could not read the bot token — ${(e as Error).message}`, 'no_token');
  }
  if (!token) return fail(noTokenLine(), 'no_token');

  const apiUrl = slackApiUrl(deps);
  const sleep = deps.sleep ?? realSleep;
  // Loaded on the first notice, not when musher starts (the Web API client and axios cost ~100 ms to load).
  const { WebClient } = await import('@slack/web-api');
  const client = new WebClient(token, {
    slackApiUrl: apiUrl,
    // A 429 comes back to this loop (its wait is the injected sleep, once); nothing else is retried, as before.
    rejectRateLimitedCalls: true,
    retryConfig: { retries: 0 },
    timeout: deps.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    // Its own lines (debug bodies, "http request failed") stay out of the musher log: each outcome is logged here, in one line.
    logger: QUIET_LOGGER,
  });
  for (let attempt = 0; ; attempt++) {
    let answer: unknown;
    try {
      answer = method === 'postMessage' ? await client.chat.postMessage(args as unknown as ChatPostMessageArguments) : await client.chat.update(args as unknown as ChatUpdateArguments);
    } catch (e) {
      const failure = failureOf(e, token, apiUrl, ctx, name);
      if (failure.kind === 'ratelimited') {
        if (attempt === 0 && failure.waitMs <= MAX_RETRY_AFTER_MS) {
          deps.log?.info(`slack: ${name} rate-limited; retrying once in ${Math.ceil(failure.waitMs / 1000)}s`);
          await sleep(failure.waitMs);
          continue;
        }
        return fail(slackErrorLine('ratelimited', ctx), 'ratelimited');
      }
      if (failure.kind === 'platform') deps.log?.warn(`slack: ${name} failed: ${failure.error}`);
      return fail(failure.error, failure.code);
    }
    const parsed = PostMessageAnswer.safeParse(answer);
    if (!parsed.success || !parsed.data.ts || !parsed.data.channel) return fail(`Slack's answer to ${name} had no ts or channel — check ${API_URL_SETTING}`, 'bad_answer');
    return { ok: true, ts: parsed.data.ts, channel: parsed.data.channel };
  }
}

type Failure = { kind: 'ratelimited'; waitMs: number } | { kind: 'platform' | 'transport'; error: string; code: string };

/** What a WebClient error means here: its error codes (`@slack/web-api` ErrorCode) mapped to this module's lines. */
function failureOf(e: unknown, token: string, apiUrl: string, ctx: SlackFailureContext, name: string): Failure {
  const err = e as Partial<WebAPICallError> & Error;
  switch (err.code) {
    case 'slack_webapi_rate_limited_error':
      return { kind: 'ratelimited', waitMs: (err as WebAPIRateLimitedError).retryAfter * 1000 };
    case 'slack_webapi_platform_error': {
      const data = (err as WebAPIPlatformError).data;
      const code = typeof data?.error === 'string' ? data.error : 'unknown_error';
      // A body that is not JSON arrives as a platform error whose `error` is that body.
      if (!/^[a-z_]+$/.test(code)) return { kind: 'transport', error: `Slack's answer to ${name} was not its JSON — check ${API_URL_SETTING}`, code: 'bad_answer' };
      const needed = (data as { needed?: unknown }).needed;
      return { kind: 'platform', error: slackErrorLine(code, ctx, { needed: typeof needed === 'string' ? needed : undefined }), code };
    }
    case 'slack_webapi_http_error': {
      const status = (err as WebAPIHTTPError).statusCode;
      return { kind: 'transport', error: `Slack answered HTTP ${status} to ${name} — try again later, or check ${API_URL_SETTING}`, code: `http_${status}` };
    }
    case 'slack_webapi_request_error': {
      const original = (err as WebAPIRequestError).original as (Error & { code?: string }) | undefined;
      const cause = original?.code === 'ECONNABORTED' || original?.code === 'ETIMEDOUT' ? 'it did not answer in time' : scrub(original?.message ?? err.message, token);
      return { kind: 'transport', error: `Slack could not be reached at ${new URL(apiUrl).host} (${cause}) — check the network or ${API_URL_SETTING}`, code: 'network' };
    }
    default:
      // A 429 whose Retry-After is not a number of seconds: the WebClient gives up on it; wait a second, as before.
      if (/^Retry header did not contain a valid timeout/.test(err.message ?? '')) return { kind: 'ratelimited', waitMs: 1000 };
      return { kind: 'transport', error: `Slack: ${name} failed (${scrub(err.message ?? String(e), token)}) — check ${API_URL_SETTING}`, code: 'network' };
  }
}

/** The hand-off notice, to the channel from options or as a DM to the teammate. */
export async function postHandoff(msg: HandoffNotice, deps: SlackDeps): Promise<SlackPostResult> {
  const channel = msg.to.channel || msg.to.slackId;
  if (!channel) return fail(noChannelLine(msg.to.handle), 'no_channel');
  const ctx: SlackFailureContext = msg.to.channel ? { channel } : { channel, handle: msg.to.handle };
  return postMessage(channel, handoffMessage(msg, pickupWays(msg.handoffId)), deps, ctx);
}

/** "picked up by dana 2:02pm", in the hand-off post's thread when its ts is known. */
export async function postPickedUp(msg: PickedUpNotice, deps: SlackDeps): Promise<SlackPostResult> {
  const message = pickedUpMessage(msg);
  return postMessage(msg.channel, msg.threadTs ? { ...message, thread_ts: msg.threadTs } : message, deps);
}
