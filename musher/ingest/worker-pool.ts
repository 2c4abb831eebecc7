import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * A few worker threads that answer requests (a backlog's parse workers): each request goes to the least loaded, and
 * its answer comes back by id. A worker that fails fails what it held and the pool with it: the caller then does the
 * work on its own thread, so a broken worker costs speed, never data.
 */
export class WorkerPool<Req, Res> {
  private readonly workers: Array<{ worker: Worker; pending: Map<number, { resolve: (r: Res) => void; reject: (e: Error) => void }> }> = [];
  private nextId = 0;
  private broken: Error | null = null;

  constructor(entry: string, size: number) {
    for (let i = 0; i < Math.max(1, size); i++) {
      // Small heaps: a worker's garbage is a slice's lines, and left to V8's defaults two workers' heaps grew musher's
      // peak by 60-120 MB on 1 GB. A worker that runs out fails its slice, which is then read on the main thread.
      const worker = new Worker(entry, { resourceLimits: { maxOldGenerationSizeMb: 24, maxYoungGenerationSizeMb: 8 } });
      const slot = { worker, pending: new Map<number, { resolve: (r: Res) => void; reject: (e: Error) => void }>() };
      worker.on('message', (m: { id: number; result: Res }) => {
        const p = slot.pending.get(m.id);
        slot.pending.delete(m.id);
        p?.resolve(m.result);
      });
      const fail = (e: Error): void => {
        this.broken ??= e;
        for (const p of slot.pending.values()) p.reject(e);
        slot.pending.clear();
      };
      worker.on('error', fail);
      worker.on('exit', (code) => fail(new Error(`parse worker exited (${code})`)));
      // The pool is closed when its work is done; it must never be what keeps musher's process alive.
      worker.unref();
      this.workers.push(slot);
    }
  }

  run(req: Req): Promise<Res> {
    if (this.broken) return Promise.reject(this.broken);
    const slot = this.workers.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      slot.pending.set(id, { resolve, reject });
      slot.worker.postMessage({ id, req });
    });
  }

  get size(): number {
    return this.workers.length;
  }

  async close(): Promise<void> {
    this.broken ??= new Error('the parse pool is closed');
    await Promise.all(this.workers.map((w) => w.worker.terminate()));
  }
}

/**
 * The built transcript worker, dist/musher/ingest/transcript-worker.js: next to this module when it runs compiled file
 * by file, one folder down from musher's bundle (dist/musher/main.js, scripts/bundle.mjs), or dist's when this runs
 * from the sources (tests run after the build); null when there is none, and the backlog is read on the main thread.
 */
export function transcriptWorkerEntry(): string | null {
  const here = fileURLToPath(import.meta.url);
  const candidates = here.endsWith('.js')
    ? [join(here, '..', 'transcript-worker.js'), join(here, '..', 'ingest', 'transcript-worker.js')]
    : [join(here, '..', '..', '..', 'dist', 'musher', 'ingest', 'transcript-worker.js')];
  return candidates.find((c) => existsSync(c)) ?? null;
}
