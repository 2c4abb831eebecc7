import type { Band } from '../../core/estimate/band.js';
import { landedInBand } from '../../core/estimate/estimator.js';
import { activeMinutes, filesTouched } from '../../core/receipt/activity.js';
import { receiptLine } from '../../core/receipt/line.js';
import type { ReceiptBody, SignedReceipt } from '../../core/receipt/receipt.js';
import { SYNTHETIC_MODEL } from '../../core/pricing.js';
import type { Clock } from '../clock.js';
import type { SeatKeyPair } from '../handoff/keys.js';
import type { Log } from '../log.js';
import type { HookEventStore } from '../store/hook-events.js';
import type { PlatformKeyStore } from '../store/platform-key.js';
import type { ReceiptStore } from '../store/receipts.js';
import type { SessionStore } from '../store/sessions.js';
import type { TaskStore } from '../store/tasks.js';
import type { UsageStore } from '../store/usage.js';
import { signReceipt } from './sign.js';

/** Why a task ended: `/sled done` (or `POST /v1/tasks/<id>/done`), all its sessions ended, or its PR opened. */
export type FinishReason = 'done' | 'sessions-ended' | 'pr-opened';
export type Finished = { receipt: SignedReceipt; line: string } | { error: string };
export type ReceiptListener = (r: SignedReceipt, line: string) => void;

export interface ReceiptServiceDeps {
  store: ReceiptStore;
  tasks: TaskStore;
  sessions: SessionStore;
  usage: UsageStore;
  platformKey: PlatformKeyStore;
  hookEvents: HookEventStore;
  clock: Clock;
  log: Log;
  /** The seat the receipt names: its roster handle in the task's repository, or the local seat name. */
  seatFor(repo: string | null, signer: string | null): string;
  /** The seat's Ed25519 key; null when it has none (the receipt is kept unsigned). */
  signingKey(): Promise<SeatKeyPair | null>;
  newId(): string;
  /** Runs `fn` in one SQLite transaction. */
  transaction<T>(fn: () => T): T;
  /** True while a session still has work coming (a hold or defer scheduled): its task has not ended with it. */
  workPending?(sessionId: string): boolean;
  /** The band the task keeps (the estimator's: a task not priced yet is priced first); default: as stored. */
  bandOf?(taskId: string): Band | null;
}

/**
 * Receipts: when a task ends, what it actually cost and took against the band it had, signed by the seat, written
 * once (a second end of the same task gives the first receipt back). Listeners (the PR body, the tracker) hear it.
 */
export class ReceiptService {
  private readonly listeners = new Set<ReceiptListener>();
  constructor(private readonly d: ReceiptServiceDeps) {}

  onReceipt(fn: ReceiptListener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  lineOf(r: SignedReceipt): string {
    return receiptLine(r.body, r.signature !== null);
  }

  forTask(taskId: string): SignedReceipt | null {
    return this.d.store.forTask(taskId);
  }

  /** Ends the task and writes its receipt (or gives back the one it has). Never throws: an error is one line. */
  async finishTask(taskId: string, reason: FinishReason): Promise<Finished> {
    try {
      return await this.finish(taskId, reason);
    } catch (e) {
      this.d.log.error(`receipt for task ${taskId}: ${(e as Error).message}`);
      return { error: `the receipt for task ${taskId} could not be written: ${(e as Error).message} — see the musher log` };
    }
  }

  private async finish(taskId: string, reason: FinishReason): Promise<Finished> {
    const lookup = this.d.tasks.lookup(taskId);
    if (!('task' in lookup)) return { error: lookup.error };
    const found = lookup.task;
    const known = this.d.store.forTask(found.id);
    if (known) return { receipt: known, line: this.lineOf(known) };
    let key: SeatKeyPair | null = null;
    try {
      key = await this.d.signingKey();
    } catch (e) {
      this.d.log.warn(`receipt for task ${found.id} kept unsigned: ${(e as Error).message}`);
    }
    const now = this.d.clock.now();
    const body = this.measure(found.id, now, key?.publicKey ?? null);
    const signed = signReceipt(body, key);
    const fresh = this.d.transaction(() => {
      const inserted = this.d.store.insert(signed, now);
      if (inserted) this.d.tasks.setState(found.id, 'done', now);
      return inserted;
    });
    if (!fresh) {
      // Another end of the task won the race: its receipt is the task's.
      const first = this.d.store.forTask(found.id)!;
      return { receipt: first, line: this.lineOf(first) };
    }
    const line = this.lineOf(signed);
    this.d.log.info(`receipt ${body.id} for task ${found.id} (${reason}): ${line}`);
    for (const fn of this.listeners) {
      try {
        fn(signed, line);
      } catch (e) {
        this.d.log.error(`receipt ${body.id}: a listener failed: ${(e as Error).message}`);
      }
    }
    return { receipt: signed, line };
  }

  /** The receipt's body: the task's sessions, measured now. */
  private measure(taskId: string, now: number, signer: string | null): ReceiptBody {
    const task = this.d.tasks.get(taskId)!;
    const sessions = this.d.tasks.sessionsOf(taskId);
    const spends = sessions.map((s) => this.d.usage.sessionSpend(s));
    const costMicros = spends.reduce((a, s) => a + s.costMicros, 0);
    const models = [...new Set(spends.flatMap((s) => s.models))].filter((m) => m !== SYNTHETIC_MODEL).sort();
    const harnesses = [...new Set(sessions.map((s) => this.d.sessions.get(s)?.harness).filter((h): h is string => !!h))].sort();
    const minutes = activeMinutes(this.d.usage.callTimes(sessions));
    const band = this.d.bandOf ? this.d.bandOf(taskId) : this.d.tasks.band(taskId);
    return {
      v: 1,
      id: this.d.newId(),
      taskId,
      title: task.title,
      type: task.type,
      repo: task.repo,
      seat: this.d.seatFor(task.repo, signer),
      harness: harnesses.length > 0 ? harnesses.join('+') : 'none',
      models,
      costMicros,
      keyMicros: this.d.platformKey.sessionsSpendMicros(sessions),
      activeMinutes: minutes,
      promptChars: task.promptChars,
      filesTouched: filesTouched(this.d.hookEvents.keptFieldsOf(sessions, 'PostToolUse')),
      turns: task.turns,
      band,
      inBand: landedInBand(band, costMicros, minutes),
      startedAt: task.createdAt,
      endedAt: now,
    };
  }

  /** `/sled done` typed in a session: its task ends, with its receipt line. */
  async answerDone(sessionId: string): Promise<string> {
    const task = this.d.tasks.forSession(sessionId);
    if (!task) return 'sled: no task yet in this session — type your request first, or /sled task <title>';
    const r = await this.finishTask(task.id, 'done');
    if ('error' in r) return `sled: ${r.error}`;
    return `sled: task ${task.id} done (${task.title}). Receipt ${r.receipt.body.id}: ${r.line}. Your next prompt starts a new task.`;
  }

  /**
   * The open task whose sessions have all ended (none resumed since, none waiting on a scheduled resume), or null.
   * A parked task waits for its answer, not for its sessions: it is not receipted half-way.
   */
  endedTask(sessionId: string): string | null {
    const task = this.d.tasks.forSession(sessionId);
    if (!task || task.state !== 'open') return null;
    return this.allSessionsEnded(task.id) ? task.id : null;
  }

  private allSessionsEnded(taskId: string): boolean {
    return this.d.tasks.sessionsOf(taskId).every((s) => {
      const row = this.d.sessions.get(s);
      // Resumed after its end (`claude --resume`): seen again since.
      return row?.endedAt != null && row.lastSeenAt <= row.endedAt && !this.d.workPending?.(s);
    });
  }

  /**
   * After the quiet period: the task ends with its receipt if its sessions are still all ended. A session resumed in
   * the meantime keeps the task open (closing Claude Code and resuming it later is the same task).
   */
  async finishIfStillEnded(taskId: string): Promise<{ ok: boolean; summary: string }> {
    const task = this.d.tasks.get(taskId);
    if (!task || task.state !== 'open') return { ok: true, summary: `task ${taskId} is ${task?.state ?? 'gone'}: nothing to end` };
    if (!this.allSessionsEnded(taskId)) return { ok: true, summary: `task ${taskId} goes on: a session of it was resumed` };
    const r = await this.finishTask(taskId, 'sessions-ended');
    return 'error' in r ? { ok: false, summary: r.error } : { ok: true, summary: `task ${taskId} ended with its sessions: ${r.line}` };
  }
}
