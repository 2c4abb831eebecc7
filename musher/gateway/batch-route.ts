import { randomBytes, randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { BatchMessage, errorEvent, formatSse, messageEvents, SSE_KEEPALIVE, statusOfErrorType } from '../../core/gateway/batch-stream.js';
import { meteredMessage, type MeteredResponse } from '../../core/gateway/meter.js';
import type { Hold } from '../../core/gateway/reservation.js';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import type { Timers } from '../timers.js';
import { BATCH_LIFETIME_MS, type GatewayBatchStore, type StoredBatch } from '../store/gateway-batches.js';
import type { TokenGrant } from './tokens.js';

/**
 * The half-price tier for Claude (issue 15 § 3): a Messages request of a batch-tier token goes out as a Message Batch
 * of one, and its result comes back to the harness as the answer a normal request gets (shared/facts/model-apis.md §3,
 * §1.7). The client has its 200 and SSE headers at once, then keepalive comments while the batch is polled with
 * backoff, then the Message as SSE, `message_start` carrying its real id (nothing is made up before the result).
 *
 * The batch runs on its own, not on the connection: Claude Code aborts a stream that brings no data for its idle
 * timeout and sends the very same request again (shared/facts/claude-code.md "Slow responses"). That request (same
 * seat, same body) is attached to the batch already running, or answered from one that ended within `dedupMs`, and
 * the answer is metered once, when the batch ends, whoever is listening then. A request that ended in an error is
 * not kept: sent again, it gets a new batch.
 *
 * Every batch is kept in the store (musher/store/gateway-batches.ts) as soon as the API has it, before its client gets
 * a byte: a musher killed mid-batch (its client's connection dropped, the harness sending the request again to the
 * musher that restarts) finds the batch there and follows it rather than paying for another, and its answer is billed
 * in the transaction that marks it billed, by whichever process reads it first.
 *
 * `expired` and `canceled` results are not billed: a new batch is sent, up to `maxAttempts` in all, then the client
 * gets an `overloaded_error`. An `errored` result is the API's error, passed on. The API's own hiccups (a 429, a 5xx,
 * a dropped connection) on create, poll or results are retried with backoff, `maxUpstreamErrors` times in a row.
 */
export interface BatchSettings {
  /** The first poll's delay; each next one ×1.5, up to `maxPollMs`. One-request batches take ~1–13 min (§3.5). */
  pollMs: number;
  maxPollMs: number;
  /** How often a waiting client gets a keepalive comment. */
  keepaliveMs: number;
  /** Batches sent for one request when they expire or are canceled. */
  maxAttempts: number;
  /** How long an ended batch still answers the same request sent again. */
  dedupMs: number;
  /** Failed calls to the API in a row (429, 5xx, network) before the request is given up as overloaded. */
  maxUpstreamErrors: number;
}

/**
 * Polls 5 s → 30 s: every poll counts against the batch endpoints' 50 requests a minute (§3.5), shared by every
 * batch under way. Keepalives every 15 s: measured with Claude Code 2.1.328 on its default idle settings, SSE comment
 * lines every 15 s held `claude -p` on one request through a 7-minute batch (pings every 20 s did not: it aborted and
 * re-sent at ~6 min, shared/facts/claude-code.md). The dedup window outlasts that abort and re-send all the same.
 */
export const DEFAULT_BATCH_SETTINGS: BatchSettings = { pollMs: 5_000, maxPollMs: 30_000, keepaliveMs: 15_000, maxAttempts: 3, dedupMs: 10 * 60_000, maxUpstreamErrors: 5 };

export interface UpstreamReply {
  status: number;
  body: string;
}

/** One exchange with the Anthropic API, read whole; `path` is under the upstream's origin (its base path included). */
export type UpstreamCall = (req: { method: 'GET' | 'POST'; path: string; headers: Record<string, string>; body?: string }) => Promise<UpstreamReply>;

export interface BatchRouteDeps {
  call: UpstreamCall;
  /** The upstream's origin and base path (results_url must be on the same origin: the key goes nowhere else). */
  upstream: URL;
  timers: Timers;
  clock: Clock;
  log: Log;
  settings: BatchSettings;
  /** Where the batches sent are kept across restarts, and billed once. */
  store: GatewayBatchStore;
  /** Meters one answer into the platform-key rail (the gateway's own recorder); throws when it cannot. */
  record(m: MeteredResponse, requestId: string, grant: TokenGrant, project: string | null): void;
}

/** What one request sends: the body without `stream`, the client's version and betas, the key. */
export interface BatchRequest {
  dedupKey: string;
  params: Record<string, unknown>;
  /** The client called `?beta=true`: the batch is created (and polled) through the beta API. */
  beta: boolean;
  anthropicVersion: string;
  anthropicBeta: string | null;
  key: string;
  grant: TokenGrant;
  project: string | null;
  /** The seat's reservation, released once the answer is metered (or there is none). */
  hold: Hold | null;
  /** A batch an earlier musher sent for this same request (`BatchRoute.stored`): followed, not sent again. */
  resume?: StoredBatch | null;
}

type ApiError = { type: string; message: string } & Record<string, unknown>;
type Outcome = { kind: 'message'; message: BatchMessage } | { kind: 'error'; status: number; error: ApiError };

export interface BatchJob {
  readonly key: string;
  readonly seat: string;
  /** Batch ids sent for this request, in order (a retried one has several). */
  readonly batchIds: string[];
  readonly outcome: Promise<Outcome>;
  /** Settles once the first batch is kept in the store (or the request ended before any was sent). */
  readonly sent: Promise<void>;
  endedAtMs: number | null;
}

const MessageBatchObject = z.looseObject({ id: z.string(), processing_status: z.string(), results_url: z.string().nullish() });
const ResultLine = z.looseObject({
  custom_id: z.string(),
  result: z.looseObject({ type: z.string(), message: z.unknown().optional(), error: z.unknown().optional() }),
});
const ErrorEnvelope = z.looseObject({ error: z.looseObject({ type: z.string(), message: z.string() }) });

/** An answer the API refused (a 4xx other than 429): passed on as it is, never retried. */
class Refused extends Error {
  constructor(
    readonly status: number,
    readonly error: ApiError,
  ) {
    super(error.message);
  }
}
/** The API stayed unavailable, or the gateway is closing: the client is told it is overloaded (retryable). */
class Unavailable extends Error {}

function apiError(body: string, status: number): ApiError {
  try {
    const e = ErrorEnvelope.safeParse(JSON.parse(body));
    if (e.success) return e.data.error;
  } catch {
    // not the envelope: said below
  }
  return { type: status === 429 ? 'rate_limit_error' : status >= 500 ? 'api_error' : 'invalid_request_error', message: `sleds gateway: the Message Batches API answered ${status}` };
}

function overloaded(message: string): Outcome {
  return { kind: 'error', status: 529, error: { type: 'overloaded_error', message } };
}

export class BatchRoute {
  private readonly jobs = new Map<string, BatchJob>();
  private readonly sleeping = new Set<{ handle: unknown; wake: () => void }>();
  private closed = false;
  private prunedAtMs = Number.NEGATIVE_INFINITY;

  constructor(private readonly deps: BatchRouteDeps) {}

  /** The batch this same request already has (under way, or ended within the dedup window), if any. */
  attached(dedupKey: string): BatchJob | null {
    this.prune();
    return this.jobs.get(dedupKey) ?? null;
  }

  /** The batch an earlier musher (or this one, before) sent for this request and kept, still worth following. */
  stored(dedupKey: string): StoredBatch | null {
    return this.deps.store.find(dedupKey, this.deps.clock.now(), this.deps.settings.dedupMs);
  }

  /** Sends a new batch for this request (or follows `req.resume`) and keeps it for the same request sent again. */
  start(req: BatchRequest): BatchJob {
    this.prune();
    const batchIds: string[] = [];
    let markSent!: () => void;
    const sent = new Promise<void>((resolve) => (markSent = resolve));
    const outcome = this.run(req, batchIds, markSent).then((o) => {
      markSent();
      job.endedAtMs = this.deps.clock.now();
      // Only an answer is kept for the same request sent again: after a failure, it deserves a new try.
      if (o.kind !== 'message' && this.jobs.get(req.dedupKey) === job) this.jobs.delete(req.dedupKey);
      return o;
    });
    const job: BatchJob = { key: req.dedupKey, seat: req.grant.seat, batchIds, outcome, sent, endedAtMs: null };
    this.jobs.set(req.dedupKey, job);
    return job;
  }

  /**
   * Answers one connection from the job: a streaming client at once with the SSE head and keepalives, then the
   * Message as events; a non-streaming one with the Message (or the error) as JSON once the batch ends.
   */
  answer(job: BatchJob, res: ServerResponse, streaming: boolean): void {
    const requestId = `req_sleds_${randomUUID().replace(/-/g, '')}`;
    // Nothing reaches the client before its batch is in the store: a crash after its first byte loses no batch.
    // A request that ended before any batch was sent (the create refused) gets the error as a plain reply.
    if (streaming) {
      void job.sent.then(() => {
        if (res.destroyed) return;
        if (job.batchIds.length === 0) this.answerJson(job, res, requestId);
        else this.answerStream(job, res, requestId);
      });
      return;
    }
    this.answerJson(job, res, requestId);
  }

  private answerJson(job: BatchJob, res: ServerResponse, requestId: string): void {
    void job.outcome.then((o) => {
      if (res.destroyed) return;
      const body = o.kind === 'message' ? JSON.stringify(o.message) : JSON.stringify({ type: 'error', error: o.error, request_id: null });
      const status = o.kind === 'message' ? 200 : o.status;
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'request-id': requestId });
      res.end(body);
    });
  }

  private answerStream(job: BatchJob, res: ServerResponse, requestId: string): void {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'request-id': requestId });
    res.flushHeaders();
    let beat: unknown = null;
    const stop = () => {
      if (beat !== null) this.deps.timers.clearTimeout(beat);
      beat = null;
    };
    const arm = () => {
      beat = this.deps.timers.setTimeout(() => {
        if (res.destroyed || res.writableEnded) return;
        res.write(SSE_KEEPALIVE);
        arm();
      }, this.deps.settings.keepaliveMs);
    };
    arm();
    res.on('close', stop);
    void job.outcome.then((o) => {
      stop();
      if (res.destroyed || res.writableEnded) return;
      const events = o.kind === 'message' ? messageEvents(o.message) : [errorEvent(o.error)];
      res.end(events.map(formatSse).join(''));
    });
  }

  /** Stops every batch's polling (the gateway is closing): their clients are told the API is overloaded. */
  close(): void {
    this.closed = true;
    for (const s of [...this.sleeping]) {
      this.deps.timers.clearTimeout(s.handle);
      s.wake();
    }
  }

  private prune(): void {
    const now = this.deps.clock.now();
    for (const [key, job] of this.jobs) {
      if (job.endedAtMs !== null && now - job.endedAtMs > this.deps.settings.dedupMs) this.jobs.delete(key);
    }
    // No batch outlives a day: its row has nothing left to follow or bill (at most one sweep a minute).
    if (now - this.prunedAtMs >= 60_000) {
      this.prunedAtMs = now;
      this.deps.store.prune(now - BATCH_LIFETIME_MS);
    }
  }

  /** A new batch of one for this request, kept in the store before anyone hears of it. */
  private async send(req: BatchRequest, attempt: number): Promise<{ batch: z.infer<typeof MessageBatchObject>; customId: string }> {
    const customId = `sleds-${randomBytes(9).toString('hex')}`;
    const batch = MessageBatchObject.parse(await this.callJson('POST', this.batchesPath(req, ''), req, JSON.stringify({ requests: [{ custom_id: customId, params: req.params }] })));
    this.deps.store.created({ batchId: batch.id, dedupKey: req.dedupKey, seat: req.grant.seat, customId, createdAtMs: this.deps.clock.now() });
    this.deps.log.info(`gateway: ${req.grant.seat}'s request sent as Message Batch ${batch.id}${attempt > 1 ? ` (attempt ${attempt} of ${this.deps.settings.maxAttempts})` : ''}`);
    return { batch, customId };
  }

  private async run(req: BatchRequest, batchIds: string[], markSent: () => void): Promise<Outcome> {
    const { settings, log, store, clock } = this.deps;
    const who = req.grant.seat;
    let resume = req.resume ?? null;
    try {
      for (let attempt = 1; attempt <= settings.maxAttempts; attempt++) {
        let batch: z.infer<typeof MessageBatchObject>;
        let customId: string;
        // A batch followed after a restart is asked at once: it may have ended while nobody listened.
        let wait = resume === null;
        const following = resume !== null;
        if (resume) {
          // Sent by a musher that stopped before its end: polled from where it is, its custom_id as kept.
          batch = { id: resume.batchId, processing_status: 'in_progress', results_url: null };
          customId = resume.customId;
          log.info(`gateway: ${who}'s request follows Message Batch ${resume.batchId}, sent before musher restarted — not sent again`);
          resume = null;
        } else {
          ({ batch, customId } = await this.send(req, attempt));
        }
        const batchId = batch.id;
        batchIds.push(batchId);
        markSent();
        let delay = settings.pollMs;
        while (batch.processing_status !== 'ended') {
          if (wait) {
            await this.sleep(delay);
            delay = Math.min(settings.maxPollMs, Math.ceil(delay * 1.5));
          }
          wait = true;
          try {
            batch = MessageBatchObject.parse(await this.callJson('GET', this.batchesPath(req, `/${encodeURIComponent(batchId)}`), req));
          } catch (e) {
            // A kept batch the API no longer knows (deleted, or another workspace's): this request gets a new one.
            if (!(following && e instanceof Refused && e.status === 404)) throw e;
            store.finished(batchId, 'failed', clock.now());
            log.warn(`gateway: Message Batch ${batchId}, kept from before musher restarted, is unknown to the API — sending the request again`);
            break;
          }
        }
        if (batch.processing_status !== 'ended') {
          attempt -= 1; // following a kept batch was no attempt of this request's
          continue;
        }
        const line = await this.result(batch, customId, req);
        const type = line?.result.type;
        if (type === 'succeeded') {
          const message = BatchMessage.safeParse(line!.result.message);
          if (!message.success) {
            store.finished(batchId, 'failed', clock.now());
            return { kind: 'error', status: 500, error: { type: 'api_error', message: `sleds gateway: the result of Message Batch ${batchId} is not a Message` } };
          }
          this.meter(message.data, batchId, req);
          store.finished(batchId, 'ended', clock.now());
          return { kind: 'message', message: message.data };
        }
        store.finished(batchId, 'failed', clock.now());
        if (type === 'errored') {
          const e = ErrorEnvelope.safeParse(line!.result.error);
          const error: ApiError = e.success ? e.data.error : { type: 'api_error', message: `sleds gateway: Message Batch ${batchId} errored` };
          log.warn(`gateway: ${who}'s Message Batch ${batchId} errored (${error.type}) — passed on to the client`);
          return { kind: 'error', status: statusOfErrorType(error.type), error };
        }
        // expired or canceled (not billed), or no line for this request at all: a new batch.
        log.warn(`gateway: ${who}'s Message Batch ${batchId} ended ${type ?? 'without a result for its request'}${attempt < settings.maxAttempts ? ' — sending it again' : ''}`);
      }
      return overloaded(`sleds gateway: the Message Batch for this request ended without an answer ${settings.maxAttempts} times (expired or canceled) — try again later, or on the standard tier`);
    } catch (e) {
      // A batch that was sent and not seen to end stays `running` in the store: it may still end and be billed, so
      // the same request sent again follows it rather than paying for a second one.
      if (e instanceof Refused) {
        log.warn(`gateway: the Message Batches API refused ${who}'s request (${e.status} ${e.error.type}) — passed on to the client`);
        return { kind: 'error', status: e.status, error: e.error };
      }
      const why = e instanceof Unavailable ? e.message : `sleds gateway: the Message Batch could not be followed (${(e as Error).message})`;
      log.warn(`gateway: ${who}'s batch request given up: ${why}`);
      return overloaded(why);
    } finally {
      req.hold?.release();
    }
  }

  private batchesPath(req: BatchRequest, rest: string): string {
    return `${this.deps.upstream.pathname.replace(/\/$/, '')}/v1/messages/batches${rest}${req.beta ? '?beta=true' : ''}`;
  }

  private headers(req: BatchRequest): Record<string, string> {
    const h: Record<string, string> = {
      'x-api-key': req.key,
      'anthropic-version': req.anthropicVersion,
      'content-type': 'application/json',
      'accept-encoding': 'identity',
    };
    if (req.anthropicBeta) h['anthropic-beta'] = req.anthropicBeta;
    return h;
  }

  /** One call, its JSON reply; the API's hiccups retried with backoff, a refusal thrown as it is. */
  private async callJson(method: 'GET' | 'POST', path: string, req: BatchRequest, body?: string): Promise<unknown> {
    const text = await this.callText(method, path, req, body);
    return JSON.parse(text) as unknown;
  }

  private async callText(method: 'GET' | 'POST', path: string, req: BatchRequest, body?: string): Promise<string> {
    const { settings } = this.deps;
    let delay = settings.pollMs;
    for (let failures = 1; ; failures++) {
      if (this.closed) throw new Unavailable('sleds gateway: the gateway closed while the batch ran — send the request again');
      let why: string;
      try {
        const r = await this.deps.call({ method, path, headers: this.headers(req), ...(body === undefined ? {} : { body }) });
        if (r.status >= 200 && r.status < 300) return r.body;
        if (r.status !== 429 && r.status < 500) throw new Refused(r.status, apiError(r.body, r.status));
        why = `${r.status} ${apiError(r.body, r.status).type}`;
      } catch (e) {
        if (e instanceof Refused) throw e;
        why = (e as Error & { code?: string }).code ?? (e as Error).message;
      }
      if (failures >= settings.maxUpstreamErrors) {
        throw new Unavailable(`sleds gateway: the Message Batches API failed ${failures} times in a row (last: ${why}) — try again later`);
      }
      this.deps.log.warn(`gateway: ${method} ${path.split('?')[0]} failed (${why}) — trying again`);
      await this.sleep(delay);
      delay = Math.min(settings.maxPollMs, delay * 2);
    }
  }

  /** This request's line of the batch's results (JSONL, in any order: matched on custom_id). */
  private async result(batch: z.infer<typeof MessageBatchObject>, customId: string, req: BatchRequest): Promise<z.infer<typeof ResultLine> | null> {
    if (!batch.results_url) throw new Error(`Message Batch ${batch.id} ended with no results_url`);
    const url = new URL(batch.results_url, this.deps.upstream);
    // The key goes to the configured upstream only, whatever a reply names.
    if (url.origin !== this.deps.upstream.origin) throw new Error(`Message Batch ${batch.id}'s results_url is on ${url.host}, not the upstream`);
    const text = await this.callText('GET', url.pathname + url.search, req);
    for (const raw of text.split(/\r?\n/)) {
      if (raw.trim() === '') continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch {
        continue; // a line cut or garbled is not this request's answer
      }
      const line = ResultLine.safeParse(parsed);
      if (line.success && line.data.custom_id === customId) return line.data;
    }
    return null;
  }

  private meter(message: BatchMessage, batchId: string, req: BatchRequest): void {
    const metered = meteredMessage(message);
    if (!metered) {
      this.deps.log.warn(`gateway: Message Batch ${batchId} for ${req.grant.seat} carried no usage — not metered`);
      return;
    }
    // Whatever the result's usage says, a Message Batch is billed at the batch price.
    metered.tokens.serviceTier = 'batch';
    try {
      const billed = this.deps.store.billOnce(batchId, this.deps.clock.now(), () => this.deps.record(metered, batchId, req.grant, req.project));
      if (!billed) this.deps.log.info(`gateway: Message Batch ${batchId}'s answer was billed before (by a musher before a restart) — streamed, not billed again`);
    } catch (e) {
      this.deps.log.error(`gateway: could not meter Message Batch ${batchId}: ${(e as Error).message}`);
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.closed) return Promise.reject(new Unavailable('sleds gateway: the gateway closed while the batch ran — send the request again'));
    return new Promise((resolve, reject) => {
      const s = {
        handle: null as unknown,
        wake: () => {
          this.sleeping.delete(s);
          reject(new Unavailable('sleds gateway: the gateway closed while the batch ran — send the request again'));
        },
      };
      s.handle = this.deps.timers.setTimeout(() => {
        this.sleeping.delete(s);
        resolve();
      }, ms);
      this.sleeping.add(s);
    });
  }
}
