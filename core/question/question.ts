import { z } from 'zod';

/**
 * A parked question: an agent stops and asks the person one thing with exactly two answers, each a sentence that
 * says what it does to the band ("A: keep the old API — the band stays $4–11"). The task waits (state 'parked')
 * until someone answers with `/sled answer <id> A|B` or the MCP `answer` tool; the answer then goes back to the
 * session as context and the task is open again. Pure: the store keeps them, musher delivers them.
 */

export const CHOICES = ['A', 'B'] as const;
export type Choice = (typeof CHOICES)[number];

const Option = z
  .string()
  .trim()
  .min(3, 'each option is a sentence: what it does, and its effect on the band')
  .max(500, 'an option is one sentence (500 characters at most)');

/** The wire shape of `POST /v1/tasks/<id>/park` (and the MCP `park` tool's arguments, less the task). */
export const ParkRequest = z.object({
  question: z.string().trim().min(3, 'the question is empty — say what you need decided').max(2000),
  options: z.tuple([Option, Option], { message: 'options holds exactly two sentences: [A, B]' }),
  /** The session that asks (it gets the answer back). */
  sessionId: z.string().min(1).optional(),
});
export type ParkRequest = z.infer<typeof ParkRequest>;

/** "A", "b", "a)", "option B", "1", "2" → A or B; anything else → null. */
export function parseChoice(text: string | null | undefined): Choice | null {
  if (typeof text !== 'string') return null;
  const t = text.trim().toUpperCase().replace(/^OPTION\s+/, '').replace(/[).:]$/, '');
  if (t === 'A' || t === '1') return 'A';
  if (t === 'B' || t === '2') return 'B';
  return null;
}

/** The wire shape of `POST /v1/questions/<id>/answer`. */
export const AnswerRequest = z.object({
  choice: z.string().transform((s, ctx) => {
    const c = parseChoice(s);
    if (!c) {
      ctx.addIssue({ code: 'custom', message: `'${s}' is not an answer — choose A or B` });
      return z.NEVER;
    }
    return c;
  }),
  /** Who answered: 'verb' (typed /sled answer), 'tool' (the MCP answer tool), 'api'. */
  by: z.enum(['verb', 'tool', 'api']).optional(),
});
export type AnswerRequest = z.infer<typeof AnswerRequest>;

export const QUESTION_STATES = ['open', 'answered'] as const;
export type QuestionState = (typeof QUESTION_STATES)[number];

export interface Question {
  id: string;
  taskId: string;
  /** The session that asked, which gets the answer back. */
  sessionId: string | null;
  question: string;
  options: [string, string];
  state: QuestionState;
  choice: Choice | null;
  answeredBy: string | null;
  askedAt: number;
  answeredAt: number | null;
  /** When the answer went back into a session's context (null: not yet). */
  deliveredAt: number | null;
}

/** The option a choice picked. */
export function chosenOption(q: Question): string | null {
  if (!q.choice) return null;
  return q.options[q.choice === 'A' ? 0 : 1];
}

/** What the asking agent (and the person) reads once a question is parked. */
export function parkedText(q: Question, taskTitle: string): string {
  return [
    `Parked: task ${q.taskId} (${taskTitle}) waits for an answer to question ${q.id}: ${q.question}`,
    `A: ${q.options[0]}`,
    `B: ${q.options[1]}`,
    `Stop here and tell the user to answer with /sled answer ${q.id} A or /sled answer ${q.id} B (or the answer tool); the answer comes back to this session and the task goes on.`,
  ].join('\n');
}

/** The context a session gets with the answer: enough for a model to carry on without asking again. */
export function answerContext(q: Question): string {
  return `sleds: the user answered parked question ${q.id} ("${q.question}") with ${q.choice}: ${chosenOption(q)} Task ${q.taskId} is open again: carry on with option ${q.choice}, and do not ask this again.`;
}

/** One line for the person who answered. */
export function answeredLine(q: Question): string {
  return `sled: question ${q.id} answered ${q.choice} (${chosenOption(q)}); task ${q.taskId} is open again.`;
}

/** How to answer, for a `/sled answer` typed without its parts. */
export const ANSWER_USAGE = 'sled: which question, and which answer? e.g. /sled answer jd7k2m9qa45p A (the id is in the parked question)';
