import { z } from 'zod';

/**
 * A task: one unit of work, sized before and receipted after. It starts from a session's first prompt, from
 * `/sled task <title>`, from the MCP `intake` verb, or from a tracker item, and owns the sessions that work on it.
 * Pure: the store (musher/store/tasks.ts) keeps them; the estimator (core/estimate) and receipts read them.
 */
export const TASK_SOURCES = ['prompt', 'verb', 'mcp', 'tracker'] as const;
export type TaskSource = (typeof TASK_SOURCES)[number];

/** open: being worked on · parked: waiting for an answer to a question (`park`) · done: receipted. */
export const TASK_STATES = ['open', 'parked', 'done'] as const;
export type TaskState = (typeof TASK_STATES)[number];

export interface Task {
  id: string;
  title: string;
  /** high / normal / low (the policy's worth levels), or null: nobody stated a worth. */
  worth: string | null;
  /** A label the user gives (`/sled type bugfix`): similar tasks share it. */
  type: string | null;
  /** The repository's top-level folder (or the session's folder outside git). */
  repo: string | null;
  source: TaskSource;
  /** Where it came from outside sleds: a tracker item's URL, an MCP client's name. */
  sourceRef: string | null;
  state: TaskState;
  /** The prompt's size in characters: the estimator's first neighbour feature. */
  promptChars: number;
  /** Prompts typed in the task's sessions (sled verbs not counted). */
  turns: number;
  createdAt: number;
  updatedAt: number;
  endedAt: number | null;
}

/** The longest title kept; the rest of a first prompt is its size, not its name. */
export const TITLE_MAX = 80;

/** A task's title from the prompt that started it: its first non-empty line, trimmed to TITLE_MAX with an ellipsis. */
export function titleFromPrompt(prompt: string): string {
  const line = prompt.split('\n').map((l) => l.trim()).find((l) => l !== '') ?? '';
  const flat = line.replace(/\s+/g, ' ');
  if (flat === '') return 'untitled task';
  return flat.length <= TITLE_MAX ? flat : `${flat.slice(0, TITLE_MAX - 1).trimEnd()}…`;
}

/** The wire shape of a new task (MCP `intake`, `POST /v1/tasks`, a tracker item). */
export const TaskIntake = z.object({
  title: z.string().trim().min(1, 'a task needs a title').max(500),
  /** The full request, when there is more than the title: its size feeds the estimate. */
  prompt: z.string().max(1_000_000).optional(),
  worth: z.string().trim().toLowerCase().min(1).nullable().optional(),
  type: z.string().trim().toLowerCase().min(1).max(60).nullable().optional(),
  repo: z.string().min(1).nullable().optional(),
  source: z.enum(TASK_SOURCES).optional(),
  sourceRef: z.string().max(2000).nullable().optional(),
  /** A session that works on it from now on. */
  sessionId: z.string().min(1).optional(),
});
export type TaskIntake = z.infer<typeof TaskIntake>;

/** The fields a user or a tool may change on a task. */
export const TaskUpdate = z.object({
  title: z.string().trim().min(1).max(500).optional(),
  worth: z.string().trim().toLowerCase().min(1).nullable().optional(),
  type: z.string().trim().toLowerCase().min(1).max(60).nullable().optional(),
  state: z.enum(TASK_STATES).optional(),
});
export type TaskUpdate = z.infer<typeof TaskUpdate>;
