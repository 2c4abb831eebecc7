import type { KickHint, SourceProgress, UsageSource } from './port.js';

/**
 * The usage sources musher holds, in the order they start: asked the same questions through the port. Progress is
 * their sum, stop stops them all, and each gives its one line to doctor and status.
 */
export class UsageSources {
  private readonly list: UsageSource[] = [];

  constructor(initial: readonly UsageSource[] = []) {
    for (const s of initial) this.add(s);
  }

  /** One more source (the daemon's usage endpoint and gateway are built from its config); ids are unique. */
  add(source: UsageSource): void {
    if (this.list.some((s) => s.id === source.id)) throw new Error(`usage source ${source.id} is already held — each source is added once`);
    this.list.push(source);
  }

  all(): readonly UsageSource[] {
    return this.list;
  }

  get(id: string): UsageSource | null {
    return this.list.find((s) => s.id === id) ?? null;
  }

  /** Starts every source held (a source that detects nothing still starts: a harness installed later is read). */
  async start(): Promise<void> {
    await Promise.all(this.list.map((s) => s.start()));
  }

  kick(id: string, hint?: KickHint): void {
    this.get(id)?.kick(hint);
  }

  progress(): SourceProgress {
    return this.list.reduce<SourceProgress>(
      (sum, s) => {
        const p = s.progress();
        return { pendingBytes: sum.pendingBytes + p.pendingBytes, backfilling: sum.backfilling || p.backfilling };
      },
      { pendingBytes: 0, backfilling: false },
    );
  }

  /** Stops them all, even when one fails (the first failure is thrown after). */
  async stop(): Promise<void> {
    const results = await Promise.allSettled(this.list.map((s) => s.stop()));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  describe(): Array<{ id: string; line: string }> {
    return this.list.map((s) => ({ id: s.id, line: s.describe() }));
  }
}
