/**
 * One line per Slack failure: what happened (Slack's own error code, so it can be looked up) and what to do.
 * Pure; the caller says which channel it asked for and where that id came from.
 */

export interface SlackFailureContext {
  /** The channel or user id the message went to. */
  channel: string;
  /** Who that id belongs to, when it came from the roster ("dana"). */
  handle?: string;
}

export const SET_TOKEN_HINT = "set the bot token with 'sleds slack set-token' (it reads the xoxb- token from stdin)";

export function noTokenLine(): string {
  return `Slack is not set up: no bot token — ${SET_TOKEN_HINT}`;
}

export function noChannelLine(handle: string): string {
  return `Slack: ${handle} has no slack id in .sleds/roster.yml — add 'slack: U…' to their entry (or set a channel)`;
}

export function slackErrorLine(code: string, ctx: SlackFailureContext, extra: { needed?: string } = {}): string {
  const who = ctx.handle ? `${ctx.handle}'s slack id ${ctx.channel}` : `channel ${ctx.channel}`;
  switch (code) {
    case 'not_authed':
    case 'invalid_auth':
    case 'token_revoked':
    case 'token_expired':
    case 'account_inactive':
      return `Slack refused the bot token (${code}) — ${SET_TOKEN_HINT}`;
    case 'channel_not_found':
    case 'user_not_found':
      return ctx.handle
        ? `Slack does not know ${who} (${code}) — check ${ctx.handle}'s slack id in .sleds/roster.yml`
        : `Slack does not know ${who} (${code}) — check the channel id, and that the bot can see it`;
    case 'not_in_channel':
      return `the Slack bot is not in ${who} (not_in_channel) — invite it with /invite, or notify by DM`;
    case 'is_archived':
      return `${who} is archived (is_archived) — pick another channel`;
    case 'missing_scope':
      return `the Slack bot lacks a scope (missing_scope${extra.needed ? `, needs ${extra.needed}` : ''}) — add it in the app's OAuth settings and reinstall the app`;
    case 'ratelimited':
    case 'rate_limited':
      return `Slack is rate-limiting sleds (${code}) — the notice was not sent; try again in a minute`;
    default:
      return `Slack refused the message (${code}) — see https://api.slack.com/methods/chat.postMessage#errors`;
  }
}
