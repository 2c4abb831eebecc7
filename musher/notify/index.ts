import { pickupWays } from '../handoff/harness-words.js';
import { handoffDesktopWords, pickedUpDesktopWords } from '../../core/notify/messages.js';
import { notifyDesktop, type DesktopDeps } from './desktop.js';
import { postHandoff, postPickedUp, type HandoffNotice, type PickedUpNotice, type SlackDeps, type SlackPostResult } from './slack.js';

/**
 * notify: the hand-off's two notices, Slack and the desktop, each independent (one failing never stops the other)
 * and neither ever throwing. The caller keeps Slack's `{channel, ts}` to answer in the thread at pickup.
 */

export * from './slack.js';
export * from './desktop.js';

/** What config.yml says about notices: Slack's API URL (upstreams.slack) and the desktop notifier's binaries. */
export interface NotifySettings {
  slackApiUrl?: string;
  binaries?: DesktopDeps['binaries'];
}

export interface NotifyDeps {
  slack: SlackDeps;
  desktop?: DesktopDeps;
}

export interface NotifyOutcome {
  slack: SlackPostResult;
  /** Whether a desktop notification was shown on this machine. */
  desktop: boolean;
}

/** On the sender's machine: Slack tells the teammate; the desktop confirms to the sender. */
export async function notifyHandoff(msg: HandoffNotice, deps: NotifyDeps): Promise<NotifyOutcome> {
  // The desktop line names one way: the default harness's (the first).
  const words = handoffDesktopWords(msg.to.handle, msg, pickupWays(msg.handoffId)[0]?.command ?? `sleds pickup ${msg.handoffId}`);
  const [slack, desktop] = await Promise.all([postHandoff(msg, deps.slack), notifyDesktop(words.title, words.body, deps.desktop)]);
  return { slack, desktop };
}

/** When the pickup is known: Slack in the hand-off's thread, and the desktop of whoever runs this. */
export async function notifyPickedUp(msg: PickedUpNotice, deps: NotifyDeps): Promise<NotifyOutcome> {
  const words = pickedUpDesktopWords(msg);
  const [slack, desktop] = await Promise.all([postPickedUp(msg, deps.slack), notifyDesktop(words.title, words.body, deps.desktop)]);
  return { slack, desktop };
}
