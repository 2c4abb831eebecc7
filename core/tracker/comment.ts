/**
 * The one comment sleds writes on a tracker item: the task it became, its band, its worth and what the picker
 * suggests; once the task lands, its receipt. A hidden mark names the task, so the comment can be found again
 * (a restart that lost its record never comments twice). Markdown; pure.
 */

export interface TrackerCommentInput {
  taskId: string;
  /** The estimate's paragraph: a band, or "no band yet: …". */
  estimate: string;
  worth: string | null;
  /** The worth levels the policy knows (high, normal, low by default). */
  worthLevels: string[];
  /** The picker's short paragraph; null when there is none yet. */
  picker: string | null;
  /** The receipt line once the task has landed. */
  receipt: string | null;
}

const MARK = /<!--\s*sleds:task\s+([a-z0-9]+)\s*-->/;

export function trackerMark(taskId: string): string {
  return `<!-- sleds:task ${taskId} -->`;
}

/** The task a comment was written for, from its mark; null for anyone else's comment. */
export function taskIdOfComment(body: string | null | undefined): string | null {
  return MARK.exec(body ?? '')?.[1] ?? null;
}

function oneParagraph(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

export function trackerComment(c: TrackerCommentInput): string {
  const worth = c.worth
    ? c.worth
    : `not set — work with no worth is held; set it with \`sleds task ${c.taskId} worth ${c.worthLevels.join('|') || 'high|normal|low'}\``;
  const lines = [
    trackerMark(c.taskId),
    `**sleds** took this issue as task \`${c.taskId}\`.`,
    '',
    `- **Band:** ${oneParagraph(c.estimate)}`,
    `- **Worth:** ${worth}`,
    `- **Picker:** ${c.picker ? oneParagraph(c.picker) : 'no suggestion yet'}`,
  ];
  if (c.receipt) lines.push(`- **Receipt:** ${oneParagraph(c.receipt)}`);
  return lines.join('\n');
}

const RECEIPT_LINE = /^- \*\*Receipt:\*\* .*$/m;

/** The comment as written, with the receipt line added (or replaced): the band stays the one the task had. */
export function withReceiptLine(comment: string, receipt: string): string {
  const line = `- **Receipt:** ${oneParagraph(receipt)}`;
  if (RECEIPT_LINE.test(comment)) return comment.replace(RECEIPT_LINE, line);
  return `${comment.replace(/\s+$/, '')}\n${line}`;
}
