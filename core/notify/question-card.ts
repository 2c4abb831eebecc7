import { z } from 'zod';
import { formatClock, oneLine } from '../format.js';
import { escapeMrkdwn, slackDate } from './messages.js';

/**
 * A parked question as a Slack card: the question, what each of its options (two for the park verb, up to four for
 * the ask verb's escalations) does, and a button for each. Pure: the clock and the zone are passed in. A tap comes back as a `block_actions` payload, which is
 * hostile until `parseAnswerAction` has checked it: the question id against a strict pattern, the choice A to D,
 * and the button's action_id, value and block_id agreeing with each other (so a forged value cannot answer another
 * question than the card it came from).
 */

export type Choice = 'A' | 'B' | 'C' | 'D';

export interface QuestionOption {
  /** The button's words ("Ship it"): at most 75 characters on the button, the whole label elsewhere. */
  label: string;
  /** What choosing it does to the band ("keeps the band at $2–$3"). */
  effect: string;
}

export interface QuestionCardInput {
  questionId: string;
  /** "eng-503 / mailer asks" */
  title: string;
  question: string;
  /** Two to four, A first. */
  options: readonly [QuestionOption, QuestionOption, ...QuestionOption[]];
  /** A page with more (the PR, the run): http(s) only; anything else is left out. */
  link?: string | null;
}

export interface AnsweredWords {
  /** Null: answered in words (from the CLI), not by a button. */
  choice: Choice | null;
  /** A Slack user id (U…/W…), shown as a mention; anything else ("cli") as plain words. */
  by: string;
  atMs: number;
  timeZone?: string;
  /** The chosen option's words as the store has them; default the card's label. */
  label?: string;
}

export interface CardText {
  type: 'mrkdwn' | 'plain_text';
  text: string;
}
export interface CardButton {
  type: 'button';
  action_id: string;
  value: string;
  text: { type: 'plain_text'; text: string };
}
export type CardBlock =
  | { type: 'section'; block_id: string; text: CardText }
  | { type: 'context'; block_id: string; elements: CardText[] }
  | { type: 'actions'; block_id: string; elements: CardButton[] };

export interface QuestionCard {
  text: string;
  blocks: CardBlock[];
}

export const QUESTION_ID_RE = /^[a-z0-9][a-z0-9/_-]{0,120}$/i;
export const ANSWER_ACTION_PREFIX = 'sleds_answer_';
/** The actions block's id: `sleds_answer:<question id>`, so a press names the card it came from. */
export const ANSWER_BLOCK_PREFIX = 'sleds_answer:';
const CHOICES: readonly Choice[] = ['A', 'B', 'C', 'D'];
/** The letters of a card's options: A, B (and C, D when it has them). */
const choicesOf = (q: QuestionCardInput): Choice[] => CHOICES.slice(0, Math.min(Math.max(q.options.length, 2), CHOICES.length));

const SLACK_USER_RE = /^[UW][A-Z0-9]{2,20}$/;
const SLACK_CHANNEL_RE = /^[CDG][A-Z0-9]{2,20}$/;
const SLACK_TS_RE = /^\d{1,12}\.\d{1,9}$/;
/** Slack's button text limit. */
const BUTTON_TEXT_MAX = 75;

export function actionIdOf(choice: Choice): string {
  return `${ANSWER_ACTION_PREFIX}${choice}`;
}

function optionOf(q: QuestionCardInput, choice: Choice): QuestionOption {
  return q.options[CHOICES.indexOf(choice)] ?? { label: choice, effect: '' };
}

/** An http(s) URL that cannot break out of Slack's `<url|words>` link syntax; else null. */
function safeLink(link: string | null | undefined): string | null {
  if (!link) return null;
  try {
    const url = new URL(link);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
    const href = url.toString();
    return /[\s<>|]/.test(href) || href.length > 3000 ? null : href;
  } catch {
    // Not a URL: the card goes without its link (the question is still whole).
    return null;
  }
}

function questionSection(q: QuestionCardInput, suffix: string): CardBlock {
  return {
    type: 'section',
    block_id: `sleds_q:${q.questionId}${suffix}`,
    text: { type: 'mrkdwn', text: `*${escapeMrkdwn(oneLine(q.title, 150))}*\n${escapeMrkdwn(oneLine(q.question, 2500))}` },
  };
}

function checkId(questionId: string): void {
  if (!QUESTION_ID_RE.test(questionId)) throw new RangeError(`question id ${JSON.stringify(oneLine(questionId, 40))} is not one sleds makes (letters, digits, / _ -, at most 121)`);
}

export interface CardOptions {
  /** false: no buttons (no app-level token, so a tap could not arrive); the card says where to answer instead. */
  buttons?: boolean;
  /** Where to answer without buttons: "sleds needs". */
  answerElsewhere?: string;
}

/** The card with a button per option: `sleds_answer_A|B|…`, valued `<question id>:A|B|…`. Throws on a question id sleds would not accept back. */
export function questionCard(q: QuestionCardInput, opts: CardOptions = {}): QuestionCard {
  checkId(q.questionId);
  const link = safeLink(q.link);
  const choices = choicesOf(q);
  const effects: CardText[] = choices.map((c) => {
    const o = optionOf(q, c);
    return { type: 'mrkdwn', text: `*${c} · ${escapeMrkdwn(oneLine(o.label, 150))}*: ${escapeMrkdwn(oneLine(o.effect, 300))}` };
  });
  if (link) effects.push({ type: 'mrkdwn', text: `<${link}|Details>` });
  const buttons: CardButton[] = choices.map((c) => ({
    type: 'button',
    action_id: actionIdOf(c),
    value: `${q.questionId}:${c}`,
    text: { type: 'plain_text', text: oneLine(`${c}: ${oneLine(optionOf(q, c).label)}`, BUTTON_TEXT_MAX) },
  }));
  const said = choices.map((c) => `${c}: ${oneLine(optionOf(q, c).label, 150)} (${oneLine(optionOf(q, c).effect, 300)})`);
  const either = said.length > 2 ? `${said.slice(0, -1).join(', ')} or ${said.at(-1)!}` : said.join(' or ');
  return {
    text: escapeMrkdwn(`${oneLine(q.title, 150)}: ${oneLine(q.question, 2500)} — ${either}`),
    blocks: [
      questionSection(q, ''),
      { type: 'context', block_id: `sleds_q:${q.questionId}:effects`, elements: effects },
      opts.buttons === false
        ? { type: 'context', block_id: `sleds_q:${q.questionId}:elsewhere`, elements: [{ type: 'mrkdwn', text: `Answer with \`${escapeMrkdwn(oneLine(opts.answerElsewhere ?? 'sleds needs', 80))}\`` }] }
        : { type: 'actions', block_id: `${ANSWER_BLOCK_PREFIX}${q.questionId}`, elements: buttons },
    ],
  };
}

/** "Answered by <@U…> at 2:02pm: <label>": the question stays, the buttons go (new block ids: the message changed). */
export function answeredCard(q: QuestionCardInput, a: AnsweredWords): QuestionCard {
  checkId(q.questionId);
  const line = answeredLine(q.questionId, a.label ?? (a.choice ? optionOf(q, a.choice).label : ''), a);
  return {
    text: `${escapeMrkdwn(oneLine(q.title, 150))}: ${line.text}`,
    blocks: [questionSection(q, ':answered'), line.block],
  };
}

/** The answer alone, for a card whose words are no longer known (posted before musher restarted). */
export function answeredLineCard(questionId: string, a: AnsweredWords & { label: string }): QuestionCard {
  checkId(questionId);
  const line = answeredLine(questionId, a.label, a);
  return { text: `Question ${questionId}: ${line.text}`, blocks: [line.block] };
}

function answeredLine(questionId: string, rawLabel: string, a: AnsweredWords): { text: string; block: CardBlock } {
  const label = escapeMrkdwn(oneLine(rawLabel, 150));
  const by = SLACK_USER_RE.test(a.by) ? `<@${a.by}>` : escapeMrkdwn(oneLine(a.by, 80));
  const clock = formatClock(a.atMs, a.timeZone);
  return {
    text: `answered by ${by} at ${clock}: ${label}`,
    block: { type: 'context', block_id: `sleds_q:${questionId}:answer`, elements: [{ type: 'mrkdwn', text: `Answered by ${by} at ${slackDate(a.atMs, '{time}', clock)}: *${a.choice ? `${a.choice} · ` : ''}${label}*` }] },
  };
}

/** The card again, buttons kept, with a line under it: a tap that sleds could not record (the presser sees why). */
export function notRecordedCard(q: QuestionCardInput, a: { by: string; choice: Choice; error: string }): QuestionCard {
  const card = questionCard(q);
  const by = SLACK_USER_RE.test(a.by) ? `<@${a.by}>` : escapeMrkdwn(oneLine(a.by, 80));
  const line = `${by} chose ${a.choice}, but sleds could not record it: ${escapeMrkdwn(oneLine(a.error, 300))}`;
  return {
    text: `${card.text} — ${line}`,
    blocks: [...card.blocks, { type: 'context', block_id: `sleds_q:${q.questionId}:not-recorded`, elements: [{ type: 'mrkdwn', text: line }] }],
  };
}

/** The card again, buttons kept, with a line under it ("no reply in 30 min: parked; a late answer still resumes it"). */
export function notedCard(q: QuestionCardInput, line: string): QuestionCard {
  const card = questionCard(q);
  const words = escapeMrkdwn(oneLine(line, 300));
  return {
    text: `${card.text} — ${words}`,
    blocks: [...card.blocks, { type: 'context', block_id: `sleds_q:${q.questionId}:note`, elements: [{ type: 'mrkdwn', text: words }] }],
  };
}

export interface AnswerAction {
  questionId: string;
  choice: Choice;
  userId: string;
  userName: string;
  /** Where the card is (container.channel_id) and its ts: what chat.update takes. */
  channel: string;
  messageTs: string;
  actionTs: string;
}

const BlockActionsPayload = z.looseObject({
  type: z.literal('block_actions'),
  user: z.looseObject({
    id: z.string().regex(SLACK_USER_RE),
    username: z.string().max(200).optional(),
    name: z.string().max(200).optional(),
  }),
  container: z.looseObject({
    type: z.literal('message'),
    message_ts: z.string().regex(SLACK_TS_RE),
    channel_id: z.string().regex(SLACK_CHANNEL_RE),
  }),
  actions: z
    .array(
      z.looseObject({
        type: z.literal('button'),
        action_id: z.string().max(255),
        block_id: z.string().max(255),
        value: z.string().max(2000),
        action_ts: z.string().regex(SLACK_TS_RE),
      }),
    )
    .length(1),
});

/** A short, quoted, one-line view of a hostile string, for an error line. */
function quote(s: string): string {
  return JSON.stringify(oneLine(s, 40));
}

/** A `block_actions` payload → the answer it carries, or why it is not one of sleds' own buttons. */
export function parseAnswerAction(payload: unknown): AnswerAction | { error: string } {
  const parsed = BlockActionsPayload.safeParse(payload);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { error: `not a button press on a message card (${issue ? `${issue.path.join('.') || 'payload'}: ${issue.message}` : 'unreadable'})` };
  }
  const p = parsed.data;
  const action = p.actions[0]!;
  const choice = action.action_id.startsWith(ANSWER_ACTION_PREFIX) ? action.action_id.slice(ANSWER_ACTION_PREFIX.length) : null;
  if (choice === null || !(CHOICES as readonly string[]).includes(choice)) return { error: `action ${quote(action.action_id)} is not a sleds answer button` };
  const m = /^(.*):([ABCD])$/.exec(action.value);
  if (!m) return { error: `button value ${quote(action.value)} is not <question id>:A|B|C|D` };
  const [, questionId, valueChoice] = m as unknown as [string, string, Choice];
  if (!QUESTION_ID_RE.test(questionId)) return { error: `question id ${quote(questionId)} is not one sleds makes` };
  if (valueChoice !== choice) return { error: `button value says ${valueChoice} but its action says ${choice}` };
  if (action.block_id !== `${ANSWER_BLOCK_PREFIX}${questionId}`) return { error: `button value names question ${quote(questionId)} but its card is ${quote(action.block_id)}` };
  return {
    questionId,
    choice: choice as Choice,
    userId: p.user.id,
    userName: oneLine(p.user.username ?? p.user.name ?? p.user.id, 80),
    channel: p.container.channel_id,
    messageTs: p.container.message_ts,
    actionTs: action.action_ts,
  };
}
