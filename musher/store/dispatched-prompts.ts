import type { Db } from './db.js';

/**
 * Prompts the picker handed out (Dispatch/Switch) and the task each belongs to, until the session started with it
 * sends it (or the claim expires). The only writer of `dispatched_prompts`. Kept in the store so a musher restarted
 * between the Dispatch and the new session's first prompt still lands that session on its task.
 */
export class DispatchedPromptStore {
  private readonly putStmt;
  private readonly expireStmt;
  private readonly takeStmt;
  constructor(db: Db) {
    this.putStmt = db.prepare(
      `INSERT INTO dispatched_prompts (prompt, task_id, until_ms) VALUES (?, ?, ?)
       ON CONFLICT(prompt) DO UPDATE SET task_id = excluded.task_id, until_ms = excluded.until_ms`,
    );
    this.expireStmt = db.prepare(`DELETE FROM dispatched_prompts WHERE until_ms < ?`);
    this.takeStmt = db.prepare(`DELETE FROM dispatched_prompts WHERE prompt = ? RETURNING task_id`);
  }

  /** The prompt belongs to the task until `untilMs` (a later Dispatch of the same prompt replaces it). */
  put(prompt: string, taskId: string, untilMs: number): void {
    this.putStmt.run(prompt, taskId, untilMs);
  }

  /** The task of a prompt still claimable at `now`, taken (a prompt is claimed once); null for any other prompt. */
  take(prompt: string, now: number): string | null {
    this.expireStmt.run(now);
    const row = this.takeStmt.get(prompt) as { task_id: string } | undefined;
    return row?.task_id ?? null;
  }
}
