import { taskIdOfComment, trackerComment, withReceiptLine } from '../../core/tracker/comment.js';
import { titleFromPrompt, type Task, type TaskIntake } from '../../core/task/task.js';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import { Rounds } from '../github/rounds.js';
import { realTimers, type Timers } from '../timers.js';
import type { TrackerItemRow, TrackerItemStore } from '../store/tracker-items.js';

export type { TrackerItemRow };
import type { TrackerAdapter, TrackerItem } from './adapter.js';

/**
 * Tracker intake: each round asks every configured tracker once for the items that ask for sleds; each new one
 * becomes a task (idempotent by its URL) and gets exactly one comment — band, worth, the picker's summary — whose
 * ref is kept in tracker_items, so a restart never comments twice (and an item with no record yet is searched for
 * sleds' mark before commenting, for a crash between the post and the record). When the task's receipt comes, that
 * same comment is updated with it.
 */

export interface TrackerIntakeDeps {
  adapters: TrackerAdapter[];
  tasks: { create(intake: TaskIntake): Task; get(id: string): Task | null };
  items: TrackerItemStore;
  /** The estimate's paragraph for a task (`POST /v1/estimate {taskId}` semantics). */
  estimateText(task: Task): Promise<string>;
  /** The picker's short paragraph for a task; null when there is none. */
  pickerText(task: Task): Promise<string | null>;
  worthLevels(task: Task): string[];
  /** The local checkout of a tracker's repository ("acme/shop"), when one is known: the task's repo. */
  localRepo?(repo: string): Promise<string | null>;
  clock: Clock;
  log: Log;
  timers?: Timers;
}

export interface TrackerAdapterRound {
  adapter: string;
  configured: boolean;
  /** Items the search gave. */
  items: number;
  /** Tasks created this round (new items). */
  created: Array<{ taskId: string; ref: string }>;
  /** Items commented on this round. */
  commented: Array<{ taskId: string; ref: string; commentRef: string }>;
  errors: string[];
}

export interface TrackerRound {
  at: number;
  adapters: TrackerAdapterRound[];
}

export class TrackerIntake {
  private readonly rounds: Rounds<TrackerRound>;

  constructor(private readonly d: TrackerIntakeDeps) {
    this.rounds = new Rounds('tracker', () => this.round(), () => this.interval(), d.timers ?? realTimers, d.log);
  }

  start(firstInMs = 0): void {
    this.rounds.start(firstInMs);
  }

  stop(): Promise<void> {
    return this.rounds.stop();
  }

  /** One round now (`sleds tracker poll`). */
  pollNow(): Promise<TrackerRound> {
    return this.rounds.runNow();
  }

  /** The items taken, newest first (`sleds tracker`). */
  items(): TrackerItemRow[] {
    return this.d.items.list(100);
  }

  private interval(): number | null {
    const all = this.d.adapters.map((a) => a.interval()).filter((v): v is number => v !== null);
    return all.length > 0 ? Math.min(...all) : null;
  }

  private async round(): Promise<TrackerRound> {
    const out: TrackerRound = { at: this.d.clock.now(), adapters: [] };
    for (const adapter of this.d.adapters) {
      const r: TrackerAdapterRound = { adapter: adapter.name, configured: adapter.interval() !== null, items: 0, created: [], commented: [], errors: [] };
      out.adapters.push(r);
      if (!r.configured) continue;
      const found = await adapter.search();
      if (!found.ok) {
        r.errors.push(found.error);
        this.d.log.warn(`tracker ${adapter.name}: ${found.error}`);
        continue;
      }
      if (found.value.cut) {
        r.errors.push(found.value.cut);
        this.d.log.warn(`tracker ${adapter.name}: the search stopped short; it goes on next round: ${found.value.cut}`);
      }
      r.items = found.value.items.length;
      for (const item of found.value.items) {
        try {
          await this.take(adapter, item, r);
        } catch (e) {
          r.errors.push(`${item.key}: ${(e as Error).message}`);
          this.d.log.error(`tracker ${adapter.name} ${item.key}: ${(e as Error).message}`);
        }
      }
    }
    return out;
  }

  private async take(adapter: TrackerAdapter, item: TrackerItem, r: TrackerAdapterRound): Promise<void> {
    const now = this.d.clock.now();
    let row = this.d.items.get(item.ref);
    // Known and commented on: nothing to do, not even a write (a round may give hundreds of these).
    if (row?.commentRef) return;
    if (!row) {
      const repo = item.repo && this.d.localRepo ? await this.d.localRepo(item.repo) : null;
      const task = this.d.tasks.create({ source: 'tracker', sourceRef: item.ref, title: titleFromPrompt(item.title), prompt: `${item.title}\n\n${item.body}`.trim(), ...(repo ? { repo } : {}) });
      row = this.d.items.seen({ sourceRef: item.ref, adapter: adapter.name, itemKey: item.key, taskId: task.id }, now);
      r.created.push({ taskId: task.id, ref: item.ref });
    }
    const task = this.d.tasks.get(row.taskId);
    if (!task) return;
    // No record of a comment: one may still be there (a crash after posting, before recording). Look first.
    const existing = await adapter.findComment(item.key, (body) => taskIdOfComment(body) === task.id);
    if (!existing.ok) throw new Error(existing.error);
    const body = trackerComment({
      taskId: task.id,
      estimate: await this.d.estimateText(task),
      worth: task.worth,
      worthLevels: this.d.worthLevels(task),
      picker: await this.d.pickerText(task),
      receipt: row.receiptLine,
    });
    if (existing.value) {
      this.d.items.commented(item.ref, existing.value, body, now);
      return;
    }
    const posted = await adapter.comment(item.key, body);
    if (!posted.ok) throw new Error(posted.error);
    this.d.items.commented(item.ref, posted.value, body, this.d.clock.now());
    r.commented.push({ taskId: task.id, ref: item.ref, commentRef: posted.value });
    this.d.log.info(`tracker ${adapter.name}: ${item.key} is task ${task.id}; commented`);
  }

  /** A task's receipt: its tracker comment (if it came from a tracker) is updated with the line. */
  async onReceipt(taskId: string, line: string): Promise<{ updated: boolean; error?: string }> {
    const row = this.d.items.forTask(taskId);
    if (!row?.commentRef || !row.commentBody) return { updated: false };
    const adapter = this.d.adapters.find((a) => a.name === row.adapter);
    if (!adapter) return { updated: false, error: `no tracker adapter ${row.adapter}` };
    const body = withReceiptLine(row.commentBody, line);
    if (body === row.commentBody) return { updated: false };
    const r = await adapter.updateComment(row.itemKey, row.commentRef, body);
    if (!r.ok) {
      this.d.log.warn(`tracker ${row.adapter} ${row.itemKey}: the receipt could not be added to sleds' comment: ${r.error}`);
      return { updated: false, error: r.error };
    }
    this.d.items.receipted(row.sourceRef, line, body, this.d.clock.now());
    return { updated: true };
  }
}
