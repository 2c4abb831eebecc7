import type { SignedReceipt } from '../../core/receipt/receipt.js';
import type { Task, TaskState } from '../../core/task/task.js';

/**
 * What the GitHub parts need from the rest of musher, as narrow ports. The receipts are branch `estimate`'s
 * (`musher.receipts`): the daemon passes them in, and a stand-in until they exist.
 */

export type FinishReason = 'done' | 'sessions-ended' | 'pr-opened';
export type FinishAnswer = { receipt: SignedReceipt; line: string } | { error: string };

export interface ReceiptsPort {
  /** Ends the task and writes its receipt. */
  finishTask(taskId: string, reason: FinishReason): Promise<FinishAnswer>;
  /** Every receipt written, with its one line ("31 min · $7.40 · in band · seat dana · claude-opus-5-5 · signed"). */
  onReceipt(fn: (r: SignedReceipt, line: string) => void): void;
}

/** The task store's reads (musher/store/tasks.ts fits). */
export interface TaskLookup {
  get(id: string): Task | null;
  sessionsOf(taskId: string): string[];
  list(opts: { limit?: number; state?: TaskState }): Task[];
}

/** The session store's reads (musher/store/sessions.ts fits). */
export interface SessionLookup {
  get(sessionId: string): { cwd: string | null; lastSeenAt: number } | null;
}
