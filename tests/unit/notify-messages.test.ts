import { describe, expect, it } from 'vitest';
import { pickupWays } from '../../musher/handoff/harness-words.js';
import { escapeMrkdwn, formatExpiry, handoffMessage, pickedUpMessage, handoffDesktopWords } from '../../core/notify/messages.js';
import { slackErrorLine } from '../../core/notify/slack-errors.js';

const AT = Date.UTC(2026, 9, 14, 14, 2); // Wed 14 Oct 2026 14:02 UTC

describe('hand-off notice words', () => {
  it('names the sender, the title, both pickup commands and the expiry, in text and blocks', () => {
    const m = handoffMessage({ sender: 'Jordan', title: 'Retry backoff', handoffId: 'abc123', expiresAt: AT, timeZone: 'UTC' }, pickupWays('abc123'));
    expect(m.text).toBe(
      'Jordan handed you a session: Retry backoff. Pick it up with `/sled pickup abc123` (Claude Code) or `sled pickup abc123` (Codex) — expires Wed 14 Oct 2:02pm.',
    );
    const blocks = JSON.stringify(m.blocks);
    expect(blocks).toContain('`/sled pickup abc123` (Claude Code)');
    expect(blocks).toContain('`sled pickup abc123` (Codex)');
    expect(blocks).toContain(`<!date^${AT / 1000}^{date_short_pretty} {time}|Wed 14 Oct 2:02pm>`);
    for (const b of m.blocks) expect((b.block_id ?? '').length).toBeLessThanOrEqual(255);
  });

  it('escapes what Slack would read as links or mentions, and flattens a multi-line title', () => {
    const m = handoffMessage({ sender: 'J<@U1>', title: 'a & b\n<!channel>', handoffId: 'x', expiresAt: AT, timeZone: 'UTC' }, pickupWays('x'));
    expect(m.text).not.toMatch(/<[@!]/);
    expect(m.text).toContain('J&lt;@U1&gt; handed you a session: a &amp; b &lt;!channel&gt;.');
    expect(JSON.stringify(m.blocks)).not.toContain('<!channel>');
  });

  it.each([
    ['a<b>&c', 'a&lt;b&gt;&amp;c'],
    ['plain', 'plain'],
  ])('escapeMrkdwn(%s)', (input, out) => expect(escapeMrkdwn(input)).toBe(out));

  it('formats the expiry in the given zone', () => {
    expect(formatExpiry(AT, 'UTC')).toBe('Wed 14 Oct 2:02pm');
    expect(formatExpiry(AT, 'America/New_York')).toBe('Wed 14 Oct 10:02am');
  });

  it('"picked up by dana" with the time', () => {
    const m = pickedUpMessage({ by: 'dana', at: AT, handoffId: 'abc', title: 'Retry backoff', timeZone: 'UTC' });
    expect(m.text).toBe('Retry backoff: picked up by dana 2:02pm');
    expect(JSON.stringify(m.blocks)).toContain('picked up by *dana*');
  });

  it('the desktop words carry the pickup command', () => {
    expect(handoffDesktopWords('dana', { title: 'Retry', handoffId: 'abc' }, pickupWays('abc')[0]!.command)).toEqual({
      title: 'sleds: handed off to dana',
      body: 'Retry — they pick it up with /sled pickup abc',
    });
  });
});

describe('Slack error lines', () => {
  it.each([
    ['not_authed', { channel: 'U1', handle: 'dana' }, "Slack refused the bot token (not_authed) — set the bot token with 'sleds slack set-token' (it reads the xoxb- token from stdin)"],
    ['invalid_auth', { channel: 'U1' }, "Slack refused the bot token (invalid_auth) — set the bot token with 'sleds slack set-token' (it reads the xoxb- token from stdin)"],
    ['channel_not_found', { channel: 'U1', handle: 'dana' }, "Slack does not know dana's slack id U1 (channel_not_found) — check dana's slack id in .sleds/roster.yml"],
    ['channel_not_found', { channel: 'C9' }, 'Slack does not know channel C9 (channel_not_found) — check the channel id, and that the bot can see it'],
    ['not_in_channel', { channel: 'C9' }, 'the Slack bot is not in channel C9 (not_in_channel) — invite it with /invite, or notify by DM'],
    ['weird_thing', { channel: 'C9' }, 'Slack refused the message (weird_thing) — see https://api.slack.com/methods/chat.postMessage#errors'],
  ])('%s → its line', (code, ctx, line) => expect(slackErrorLine(code, ctx)).toBe(line));

  it('missing_scope names the scope Slack says is needed', () => {
    expect(slackErrorLine('missing_scope', { channel: 'C9' }, { needed: 'chat:write' })).toContain('needs chat:write');
  });
});
