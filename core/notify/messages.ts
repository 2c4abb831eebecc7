import { formatClock, oneLine } from '../format.js';
import { zonedParts as parts } from '../zoned-time.js';

/**
 * The words of hand-off notifications, for Slack and the desktop. Pure: the clock and the zone are passed in.
 * Slack gets `text` (what its notifications and screen readers show) and `blocks` (what the message shows), so
 * both carry the pickup commands; times in blocks are Slack date tokens, rendered in the reader's own zone.
 */

export interface SlackText {
  type: 'mrkdwn' | 'plain_text';
  text: string;
}
export interface SlackBlock {
  type: 'section' | 'context';
  block_id?: string;
  text?: SlackText;
  elements?: SlackText[];
}
export interface SlackMessage {
  text: string;
  blocks: SlackBlock[];
}

export interface HandoffNoticeWords {
  /** Who handed it off: a roster name or handle ("Jordan"). */
  sender: string;
  /** The session's title (the brief's first line, or the branch). */
  title: string;
  /** The hand-off id, as `/sled pickup <id>` takes it. */
  handoffId: string;
  /** Epoch ms. */
  expiresAt: number;
  /** The sender's zone for the plain-text fallback (default: the runtime's). */
  timeZone?: string;
}

export interface PickedUpWords {
  /** Who picked it up ("dana"). */
  by: string;
  /** Epoch ms. */
  at: number;
  handoffId: string;
  title: string;
  timeZone?: string;
}

/** Slack's mrkdwn control characters: &, <, > must be entities or Slack reads them as links and mentions. */
export function escapeMrkdwn(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** "Tue 14 Oct 4:10pm": a date a week away needs its day and month. */
export function formatExpiry(ms: number, timeZone?: string): string {
  const p = parts(ms, timeZone, { weekday: 'short', day: 'numeric', month: 'short' });
  return `${p.weekday} ${p.day} ${p.month} ${formatClock(ms, timeZone)}`;
}

/** `<!date^…|fallback>`: Slack renders it in the reader's zone; clients that cannot show the fallback. */
export function slackDate(ms: number, format: string, fallback: string): string {
  return `<!date^${Math.floor(ms / 1000)}^${format}|${escapeMrkdwn(fallback)}>`;
}

/** How a hand-off is picked up in one harness: its display name and what is typed there (`/sled pickup <id>`). */
export interface PickupWay {
  harness: string;
  command: string;
}

/** "`/sled pickup <id>` (Claude Code) or `sled pickup <id>` (Codex)": every way, the default harness's first. */
function pickupWays(ways: readonly PickupWay[], quote: (s: string) => string): string {
  return ways.map((w) => `${quote(w.command)} (${w.harness})`).join(' or ');
}

/**
 * "<sender> handed you a session: <title>. Pick it up with `/sled pickup <id>` (Claude Code) or …"; `ways`: how it is
 * picked up in each harness (musher's, from the adapters: the reader's harness is not known here).
 */
export function handoffMessage(w: HandoffNoticeWords, ways: readonly PickupWay[]): SlackMessage {
  const sender = oneLine(w.sender, 80);
  const title = oneLine(w.title);
  const expiry = formatExpiry(w.expiresAt, w.timeZone);
  const text = `${sender} handed you a session: ${title}. Pick it up with ${pickupWays(ways, (c) => `\`${c}\``)} — expires ${expiry}.`;
  const blockId = `sleds.handoff.${w.handoffId}`.slice(0, 255);
  return {
    text: escapeMrkdwn(text),
    blocks: [
      {
        type: 'section',
        block_id: blockId,
        text: { type: 'mrkdwn', text: `*${escapeMrkdwn(sender)}* handed you a session: *${escapeMrkdwn(title)}*` },
      },
      {
        type: 'section',
        block_id: `${blockId}.pickup`.slice(0, 255),
        text: { type: 'mrkdwn', text: `Pick it up with ${pickupWays(ways, (c) => `\`${c}\``)}` },
      },
      {
        type: 'context',
        block_id: `${blockId}.expiry`.slice(0, 255),
        elements: [{ type: 'mrkdwn', text: `Expires ${slackDate(w.expiresAt, '{date_short_pretty} {time}', expiry)}` }],
      },
    ],
  };
}

/** "Picked up by dana 4:02pm: <title>" */
export function pickedUpMessage(w: PickedUpWords): SlackMessage {
  const by = oneLine(w.by, 80);
  const title = oneLine(w.title);
  const clock = formatClock(w.at, w.timeZone);
  return {
    text: escapeMrkdwn(`${title}: picked up by ${by} ${clock}`),
    blocks: [
      {
        type: 'section',
        block_id: `sleds.pickedup.${w.handoffId}`.slice(0, 255),
        text: { type: 'mrkdwn', text: `*${escapeMrkdwn(title)}*: picked up by *${escapeMrkdwn(by)}* ${slackDate(w.at, '{time}', clock)}` },
      },
    ],
  };
}

/** What the desktop shows on the sender's machine (plain text: no mrkdwn there). */
export function handoffDesktopWords(recipient: string, w: Pick<HandoffNoticeWords, 'title' | 'handoffId'>, pickup: string): { title: string; body: string } {
  return {
    title: `sleds: handed off to ${oneLine(recipient, 80)}`,
    body: `${oneLine(w.title)} — they pick it up with ${pickup}`,
  };
}

export function pickedUpDesktopWords(w: PickedUpWords): { title: string; body: string } {
  return { title: `sleds: picked up by ${oneLine(w.by, 80)} ${formatClock(w.at, w.timeZone)}`, body: oneLine(w.title) };
}
