import { parentPort } from 'node:worker_threads';
import { readTranscriptSlice, type SliceRequest } from './transcript-slice.js';

/**
 * A backlog's parse worker (musher/ingest/worker-pool.ts starts it): reads the transcript slices it is sent and posts
 * back what their lines said. It opens no store and writes nothing: the main thread records what comes back.
 */
parentPort?.on('message', (msg: { id: number; req: SliceRequest }) => {
  let result;
  try {
    result = readTranscriptSlice(msg.req);
  } catch (e) {
    result = { ok: false as const, reason: (e as Error).message };
  }
  parentPort!.postMessage({ id: msg.id, result });
});
