import { realTimers, type Timers } from '../timers.js';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import {
  readingsFromUsage,
  retryAfterMs,
  USAGE_ENDPOINT_BETA,
  USAGE_ENDPOINT_PATH,
  type UsageReadings,
} from '../../core/usage-endpoint.js';
import { formatAge, oneLine } from '../../core/format.js';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import { acquireLock } from '../lock.js';
import { DEFAULT_UPSTREAMS } from '../config/schema.js';
import type { ClaudeCredentials, CredentialsFailure } from './credentials.js';

/**
 * One poller per machine for Claude's usage endpoint. It asks `GET <base>/api/oauth/usage` and nothing else — never a
 * billable request to "probe" quota — at most once every 180 s, honours Retry-After on 429, stops on 401/403 until the
 * token changes, and starts fresh when the login (token fingerprint) changes. A failed poll never clears what was
 * read before: the readings simply age, and whoever shows them marks them stale.
 */

export const DEFAULT_USAGE_BASE_URL = DEFAULT_UPSTREAMS.claudeUsage;
/** Where a wrong base URL is fixed, for the error line. */
const USAGE_URL_SETTING = 'upstreams.claudeUsage in config.yml';
/** The floor: no option makes the poller ask more often than this. */
export const MIN_POLL_INTERVAL_MS = 180_000;
/** Backoff after a 429 without Retry-After: 5 min, doubling. */
const RATE_LIMIT_BACKOFF_MS = 300_000;
const DEFAULT_MAX_BACKOFF_MS = 60 * 60_000;
/** A Retry-After longer than this is treated as garbage and capped. */
const RETRY_AFTER_SANITY_MS = 24 * 60 * 60_000;


export interface UsagePollerOptions {
  clock: Clock;
  log: Log;
  /** `() => readClaudeCredentials({...})`; called before every poll (a local read, no request). */
  readCredentials: () => Promise<ClaudeCredentials>;
  /** Every good answer. The integrator records the bars (source 'usage-endpoint') and the credits. */
  onReadings: (readings: UsageReadings) => void;
  /** Every state change (for status and doctor); optional. */
  onState?: (state: UsagePollerState) => void;
  fetchImpl?: typeof fetch;
  /** config.yml's upstreams.claudeUsage; default https://api.anthropic.com. */
  baseUrl?: string;
  /** Raised to 180 s if lower. */
  minIntervalMs?: number;
  maxBackoffMs?: number;
  requestTimeoutMs?: number;
  /** `<runtimeDir>/usage-poller.lock`: one poller per lock; others follow. Null: no lock (unit use). */
  lockFile?: string | null;
  /** `<runtimeDir>/usage-poller.json`: survives restarts (no request storm on a crash loop), shared with followers. */
  stateFile?: string | null;
  timers?: Timers;
  userAgent?: string;
}

export type PollerRole = 'idle' | 'owner' | 'follower' | 'stopped';

export interface UsagePollerState {
  role: PollerRole;
  /** The lock holder when this poller follows. */
  ownerPid: number | null;
  tokenFingerprint: string | null;
  credentials: 'ok' | CredentialsFailure | 'unknown';
  lastAttemptAt: number | null;
  lastOkAt: number | null;
  /** One line, or null when the last poll went well. */
  lastError: string | null;
  lastErrorAt: number | null;
  /** The earliest time a request may go out (null: none planned — stopped, following, blocked, no login). */
  nextPollAt: number | null;
  backoffUntil: number | null;
  /** 401/403 for this token: no request until it changes. */
  authBlocked: boolean;
  consecutiveFailures: number;
  /** The last good answer, kept through failures. */
  lastReadings: UsageReadings | null;
}

/** What survives a restart and what a follower reads. No token, only its fingerprint. */
const Persisted = z.object({
  v: z.literal(1),
  tokenFingerprint: z.string().nullable(),
  lastAttemptAt: z.number().nullable(),
  lastOkAt: z.number().nullable(),
  lastError: z.string().nullable(),
  lastErrorAt: z.number().nullable(),
  backoffUntil: z.number().nullable(),
  backoffSteps: z.number().int().min(0),
  authBlocked: z.boolean(),
  consecutiveFailures: z.number().int().min(0),
  lastReadings: z.unknown().nullable(),
});
type Persisted = z.infer<typeof Persisted>;

export type Outcome =
  | { kind: 'ok'; readings: UsageReadings }
  | { kind: 'rate-limited'; retryAfter: number | null }
  | { kind: 'auth'; status: number }
  | { kind: 'failed'; line: string; retryAfter: number | null };

/** The poller's reading of the endpoint: everything state() reports but the role, in one record. */
export interface PollRecord {
  fp: string | null;
  credentials: UsagePollerState['credentials'];
  lastAttemptAt: number | null;
  lastOkAt: number | null;
  lastError: string | null;
  lastErrorAt: number | null;
  backoffUntil: number | null;
  backoffSteps: number;
  authBlocked: boolean;
  consecutiveFailures: number;
  lastReadings: UsageReadings | null;
}

/** A login's record before anything was read with it (the fingerprint, the credentials and the floor are kept by callers). */
const FRESH_RECORD: Omit<PollRecord, 'credentials' | 'lastAttemptAt'> = Object.freeze({
  fp: null,
  lastOkAt: null,
  lastError: null,
  lastErrorAt: null,
  backoffUntil: null,
  backoffSteps: 0,
  authBlocked: false,
  consecutiveFailures: 0,
  lastReadings: null,
});

interface RunState {
  role: PollerRole;
  /** The lock holder when this poller follows. */
  ownerPid: number | null;
  releaseLock: (() => void) | null;
  timer: unknown;
  cycle: Promise<void> | null;
  /** A kick came while a cycle ran: run again after it. */
  rerun: boolean;
}

function when(ms: number, now: number): string {
  return `${new Date(ms).toISOString()} (in ${formatAge(ms - now)})`;
}

/**
 * What one answer of the endpoint does to the record, pure: the record after it, when to look next, and the trouble
 * to report (null for a good answer). The backoff doubles from its base; a Retry-After is honoured up to a day.
 */
export function settleRecord(rec: PollRecord, outcome: Outcome, now: number, limits: { minIntervalMs: number; maxBackoffMs: number }): { rec: PollRecord; nextAt: number; problem: string | null } {
  const { minIntervalMs, maxBackoffMs } = limits;
  switch (outcome.kind) {
    case 'ok':
      return {
        rec: { ...rec, lastOkAt: now, lastError: null, lastErrorAt: null, backoffUntil: null, backoffSteps: 0, consecutiveFailures: 0, lastReadings: outcome.readings },
        nextAt: now + minIntervalMs,
        problem: null,
      };
    case 'rate-limited': {
      const backoffSteps = rec.backoffSteps + 1;
      const fallback = Math.min(maxBackoffMs, RATE_LIMIT_BACKOFF_MS * 2 ** (backoffSteps - 1));
      const wait = Math.max(minIntervalMs, Math.min(RETRY_AFTER_SANITY_MS, outcome.retryAfter ?? fallback));
      const backoffUntil = now + wait;
      const said = outcome.retryAfter !== null ? `Retry-After ${Math.round(outcome.retryAfter / 1000)} s` : 'no Retry-After';
      const keeping = rec.lastReadings ? '; keeping the last readings' : '';
      return {
        rec: { ...rec, backoffSteps, consecutiveFailures: rec.consecutiveFailures + 1, backoffUntil },
        nextAt: backoffUntil,
        problem: `claude usage endpoint rate-limited (429, ${said})${keeping}; next try at ${when(backoffUntil, now)}`,
      };
    }
    case 'auth':
      return {
        rec: { ...rec, authBlocked: true, consecutiveFailures: rec.consecutiveFailures + 1 },
        nextAt: now + minIntervalMs,
        problem: `claude usage endpoint refused the OAuth token ${rec.fp ?? ''} (${outcome.status}); not polling until the login changes — run \`claude\` to refresh it`,
      };
    case 'failed': {
      const backoffSteps = rec.backoffSteps + 1;
      const backoff = Math.min(maxBackoffMs, minIntervalMs * 2 ** (backoffSteps - 1));
      const wait = Math.max(backoff, Math.min(RETRY_AFTER_SANITY_MS, outcome.retryAfter ?? 0));
      return {
        rec: { ...rec, backoffSteps, consecutiveFailures: rec.consecutiveFailures + 1, backoffUntil: wait > minIntervalMs ? now + wait : null },
        nextAt: now + wait,
        problem: `${outcome.line}; next try at ${when(now + wait, now)}`,
      };
    }
  }
}

export class UsagePoller {
  private readonly clock: Clock;
  private readonly log: Log;
  private readonly timers: Timers;
  private readonly fetchImpl: typeof fetch;
  private readonly url: string;
  private readonly minIntervalMs: number;
  private readonly maxBackoffMs: number;
  private readonly timeoutMs: number;
  private readonly userAgent: string;

  /** Who polls, and the machinery of the next poll. */
  private run: RunState = { role: 'idle', ownerPid: null, releaseLock: null, timer: null, cycle: null, rerun: false };
  /** What has been read and how the endpoint last answered: what the state file keeps (one login's). */
  private rec: PollRecord = { ...FRESH_RECORD, credentials: 'unknown', lastAttemptAt: null };
  /** What was last said, so a trouble or a note is logged once and a follower delivers a reading once. */
  private said: { lastLogged: string | null; lastEmittedAt: number | null; lastNotes: string } = { lastLogged: null, lastEmittedAt: null, lastNotes: '' };

  constructor(private readonly opts: UsagePollerOptions) {
    this.clock = opts.clock;
    this.log = opts.log;
    this.timers = opts.timers ?? realTimers;
    this.fetchImpl = opts.fetchImpl ?? fetch;
    const base = (opts.baseUrl ?? DEFAULT_USAGE_BASE_URL).trim().replace(/\/+$/, '');
    this.url = `${base}${USAGE_ENDPOINT_PATH}`;
    this.minIntervalMs = Math.max(MIN_POLL_INTERVAL_MS, opts.minIntervalMs ?? MIN_POLL_INTERVAL_MS);
    this.maxBackoffMs = Math.max(this.minIntervalMs, opts.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS);
    this.timeoutMs = opts.requestTimeoutMs ?? 15_000;
    this.userAgent = opts.userAgent ?? 'sleds (usage poller)';
  }

  /** The URL it polls (for doctor). */
  get endpoint(): string {
    return this.url;
  }

  /** Takes the machine lock (or follows its holder) and schedules the first poll now, or when the last one allows. Once. */
  start(): void {
    if (this.run.role !== 'idle') return;
    this.tryLead();
    this.schedule(this.clock.now());
  }

  /** Stops polling and releases the lock; resolves once an in-flight poll has finished. */
  async stop(): Promise<void> {
    this.run.role = 'stopped';
    if (this.run.timer !== null) this.timers.clearTimeout(this.run.timer);
    this.run.timer = null;
    await this.whenIdle();
    this.run.releaseLock?.();
    this.run.releaseLock = null;
  }

  /** Resolves when no poll is in flight (tests: after moving the clock). */
  async whenIdle(): Promise<void> {
    while (this.run.cycle) await this.run.cycle;
  }

  state(): UsagePollerState {
    return {
      role: this.run.role,
      ownerPid: this.run.ownerPid,
      tokenFingerprint: this.rec.fp,
      credentials: this.rec.credentials,
      lastAttemptAt: this.rec.lastAttemptAt,
      lastOkAt: this.rec.lastOkAt,
      lastError: this.rec.lastError,
      lastErrorAt: this.rec.lastErrorAt,
      nextPollAt: this.nextPollAt(),
      backoffUntil: this.rec.backoffUntil,
      authBlocked: this.rec.authBlocked,
      consecutiveFailures: this.rec.consecutiveFailures,
      lastReadings: this.rec.lastReadings,
    };
  }

  // ---- scheduling ----

  /** The earliest a request may go out: 180 s after the last one on this machine, and not before a backoff ends. */
  private earliestPoll(): number {
    return Math.max(this.rec.lastAttemptAt === null ? 0 : this.rec.lastAttemptAt + this.minIntervalMs, this.rec.backoffUntil ?? 0);
  }

  private nextPollAt(): number | null {
    if (this.run.role !== 'owner' || this.rec.authBlocked || (this.rec.credentials !== 'ok' && this.rec.credentials !== 'unknown')) return null;
    return this.earliestPoll();
  }

  /**
   * Wakes at `at`, or sooner: at least every interval, to look at the login (a local read) so a new token is
   * noticed during a long backoff. Waking never sends a request by itself.
   */
  private schedule(at: number): void {
    if (this.run.role === 'stopped') return;
    if (this.run.timer !== null) this.timers.clearTimeout(this.run.timer);
    at = Math.min(at, this.clock.now() + this.minIntervalMs);
    this.run.timer = this.timers.setTimeout(() => {
      this.run.timer = null;
      this.kick();
    }, Math.max(0, at - this.clock.now()));
    this.emitState();
  }

  /** Looks now (the login, then the endpoint if its floor and backoff allow); after start only. A poll in flight runs again after. */
  kick(): void {
    if (this.run.role === 'idle') return;
    if (this.run.cycle) {
      this.run.rerun = true;
      return;
    }
    this.run.cycle = this.runCycle()
      .catch((e: unknown) => {
        // A bug here must not take musher down nor stop polling for good.
        this.fail(`usage poller: unexpected ${oneLine(e instanceof Error ? e.message : String(e))}`);
        this.schedule(this.clock.now() + this.minIntervalMs);
      })
      .finally(() => {
        this.run.cycle = null;
        if (this.run.rerun && this.run.role !== 'stopped') {
          this.run.rerun = false;
          this.kick();
        }
      });
  }

  private async runCycle(): Promise<void> {
    if (this.run.role === 'stopped') return;
    if (this.run.role !== 'owner') this.tryLead();

    const creds = await this.readCredentials();
    if (this.isStopped()) return;
    const now = this.clock.now();
    if (creds.ok || creds.fingerprint) this.noticeToken(creds.ok ? creds.fingerprint : creds.fingerprint!);
    this.rec.credentials = creds.ok ? 'ok' : creds.reason;

    if (this.run.role === 'follower') {
      this.follow(creds.ok ? creds.fingerprint : null);
      this.schedule(now + this.minIntervalMs);
      return;
    }
    if (!creds.ok) {
      // No request without a usable token; look again next interval (a local read only).
      this.fail(`claude usage endpoint: not polled — ${creds.message}`);
      this.schedule(now + this.minIntervalMs);
      return;
    }
    if (this.rec.authBlocked) {
      this.schedule(now + this.minIntervalMs);
      return;
    }
    const earliest = this.earliestPoll();
    if (now < earliest) {
      this.schedule(earliest);
      return;
    }
    this.rec.lastAttemptAt = now;
    this.persist(); // before the request: a crash mid-request still counts as an attempt
    const outcome = await this.request(creds.token);
    if (this.isStopped()) return;
    this.settle(outcome);
  }

  /** A method, not an inline test: the role changes across awaits, which narrowing cannot see. */
  private isStopped(): boolean {
    return this.run.role === 'stopped';
  }

  private async readCredentials(): Promise<ClaudeCredentials> {
    try {
      return await this.opts.readCredentials();
    } catch (e) {
      const line = oneLine(e instanceof Error ? e.message : String(e));
      return { ok: false, reason: 'unreadable', message: `cannot read the Claude login (${line})`, where: 'credentials', fingerprint: null };
    }
  }

  // ---- the lock ----

  private tryLead(): void {
    const file = this.opts.lockFile;
    if (!file) {
      this.run.role = 'owner';
      this.run.ownerPid = process.pid;
      this.restore();
      return;
    }
    let got: ReturnType<typeof acquireLock>;
    try {
      got = acquireLock(file);
    } catch (e) {
      // The lock dir is unusable: poll anyway rather than never (one musher per user already holds musher.lock).
      this.log.warn(`claude usage endpoint: cannot use the lock ${file} (${oneLine((e as Error).message)}); polling without it`);
      this.run.role = 'owner';
      this.run.ownerPid = process.pid;
      this.restore();
      return;
    }
    if (got.acquired) {
      const wasFollower = this.run.role === 'follower';
      this.run.role = 'owner';
      this.run.ownerPid = process.pid;
      this.run.releaseLock = got.release;
      this.restore();
      if (wasFollower) this.log.info('claude usage endpoint: the other poller is gone; this musher polls now');
    } else {
      if (this.run.role !== 'follower') {
        this.log.info(`claude usage endpoint: polled by another musher (pid ${Number.isNaN(got.ownerPid) ? '?' : got.ownerPid}); sharing its readings`);
      }
      this.run.role = 'follower';
      this.run.ownerPid = Number.isNaN(got.ownerPid) ? null : got.ownerPid;
    }
  }

  // ---- token changes ----

  private noticeToken(fp: string): void {
    if (this.rec.fp === fp) return;
    const had = this.rec.fp;
    this.rec.fp = fp;
    if (had === null && this.rec.lastAttemptAt === null && this.rec.lastOkAt === null) return; // first sight
    if (had !== null) this.log.info(`claude usage endpoint: the login changed (token ${had} → ${fp}); starting fresh`);
    // Fresh state for the new login. lastAttemptAt stays: the 180 s floor is per machine, not per token.
    this.rec = { ...FRESH_RECORD, fp, credentials: this.rec.credentials, lastAttemptAt: this.rec.lastAttemptAt };
    this.said.lastLogged = null;
    this.persist();
  }

  // ---- the request ----

  private async request(token: string): Promise<Outcome> {
    let res: Response;
    try {
      res = await this.fetchImpl(this.url, {
        method: 'GET',
        headers: {
          authorization: `Bearer ${token}`,
          'anthropic-beta': USAGE_ENDPOINT_BETA,
          accept: 'application/json',
          'user-agent': this.userAgent,
        },
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (e) {
      const err = e as Error & { cause?: { code?: string } };
      const why =
        err.name === 'TimeoutError' || err.name === 'AbortError'
          ? `no answer within ${this.timeoutMs >= 1000 ? `${Math.round(this.timeoutMs / 1000)} s` : `${this.timeoutMs} ms`}`
          : oneLine(err.cause?.code ?? err.message);
      return { kind: 'failed', line: `claude usage endpoint unreachable (${why})`, retryAfter: null };
    }
    let text = '';
    try {
      text = await res.text();
    } catch {
      // A body that breaks off: the status alone says what happened.
      text = '';
    }
    const now = this.clock.now();
    const retryAfter = retryAfterMs(res.headers.get('retry-after'), now);
    if (res.status === 429) return { kind: 'rate-limited', retryAfter };
    if (res.status === 401 || res.status === 403) return { kind: 'auth', status: res.status };
    if (res.status >= 300 && res.status < 400) {
      return { kind: 'failed', line: `claude usage endpoint redirected (${res.status}) — is ${USAGE_URL_SETTING} right?`, retryAfter };
    }
    if (res.status !== 200) {
      const parsed = readingsFromUsage(text, now);
      const said = parsed.ok ? '' : parsed.error.replace(/^the usage endpoint answered /, '');
      const detail = /^(an error|HTML)/.test(said) ? `: ${said.replace(/^an error /, '')}` : '';
      return { kind: 'failed', line: `claude usage endpoint answered ${res.status}${detail}`, retryAfter };
    }
    const parsed = readingsFromUsage(text, now);
    if (!parsed.ok) return { kind: 'failed', line: parsed.error.replace(/^the usage endpoint /, 'claude usage endpoint '), retryAfter: null };
    return { kind: 'ok', readings: parsed };
  }

  private settle(outcome: Outcome): void {
    const now = this.clock.now();
    const recovered = this.rec.lastError !== null;
    const step = settleRecord(this.rec, outcome, now, { minIntervalMs: this.minIntervalMs, maxBackoffMs: this.maxBackoffMs });
    this.rec = step.rec;
    if (step.problem !== null) {
      this.fail(step.problem);
      this.schedule(step.nextAt);
      return;
    }
    if (outcome.kind !== 'ok') return; // only a good answer settles without a problem
    this.said.lastLogged = null;
    if (recovered) this.log.info('claude usage endpoint: answering again');
    // Notes (an untracked window, a credits mismatch) are logged when they change, not every poll.
    const notes = outcome.readings.notes.join('\n');
    if (notes !== this.said.lastNotes) for (const note of outcome.readings.notes) this.log.info(`claude usage endpoint: ${note}`);
    this.said.lastNotes = notes;
    this.persist();
    this.deliver(outcome.readings);
    this.schedule(step.nextAt);
  }

  private fail(line: string): void {
    const now = this.clock.now();
    this.rec.lastError = line;
    this.rec.lastErrorAt = now;
    // One log line per distinct trouble, not one per poll.
    const key = line.replace(/; next try at .*$/, '').replace(/\(429, [^)]*\)/, '(429)');
    if (key !== this.said.lastLogged) {
      this.log.warn(line);
      this.said.lastLogged = key;
    }
    this.persist();
    this.emitState();
  }

  private deliver(readings: UsageReadings): void {
    this.said.lastEmittedAt = readings.observedAt;
    try {
      this.opts.onReadings(readings);
    } catch (e) {
      this.log.error(`claude usage endpoint: recording the readings failed (${oneLine(e instanceof Error ? e.message : String(e))})`);
    }
    this.emitState();
  }

  private emitState(): void {
    if (!this.opts.onState) return;
    try {
      this.opts.onState(this.state());
    } catch {
      // status is best-effort
    }
  }

  // ---- persistence and following ----

  private readPersisted(): Persisted | null {
    const file = this.opts.stateFile;
    if (!file) return null;
    try {
      const parsed = Persisted.safeParse(JSON.parse(readFileSync(file, 'utf8')));
      return parsed.success ? parsed.data : null;
    } catch {
      // No state file (first start) or one not ours: start without it.
      return null;
    }
  }

  private restore(): void {
    const p = this.readPersisted();
    if (!p) return;
    // The floor and the backoff survive a restart; the rest belongs to the login it was read with.
    this.rec.lastAttemptAt = Math.max(this.rec.lastAttemptAt ?? 0, p.lastAttemptAt ?? 0) || null;
    if (this.rec.fp === null || this.rec.fp === p.tokenFingerprint) {
      const { v: _v, tokenFingerprint, lastReadings, ...kept } = p;
      this.rec = { ...this.rec, ...kept, lastAttemptAt: this.rec.lastAttemptAt, fp: tokenFingerprint, lastReadings: asReadings(lastReadings) };
      this.said.lastEmittedAt = this.rec.lastReadings?.observedAt ?? null;
    }
  }

  private persist(): void {
    const file = this.opts.stateFile;
    if (!file || this.run.role !== 'owner') return;
    // The record as it is, but the credentials' verdict (read afresh on each poll) and the token itself (never kept).
    const { fp, credentials: _credentials, ...kept } = this.rec;
    const body: Persisted = { v: 1, tokenFingerprint: fp, ...kept };
    try {
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(body), { mode: 0o600 });
      renameSync(tmp, file);
    } catch {
      // Losing this file costs at most one early poll after a restart.
    }
  }

  /** A follower takes the owner's readings for the same login, never asks the endpoint itself. */
  private follow(ownFp: string | null): void {
    const p = this.readPersisted();
    if (!p) return;
    this.rec.lastAttemptAt = p.lastAttemptAt;
    this.rec.backoffUntil = p.backoffUntil;
    this.rec.lastError = p.lastError;
    this.rec.lastErrorAt = p.lastErrorAt;
    if (!ownFp || p.tokenFingerprint !== ownFp) return;
    const readings = asReadings(p.lastReadings);
    this.rec.lastOkAt = p.lastOkAt;
    if (readings && (this.said.lastEmittedAt === null || readings.observedAt > this.said.lastEmittedAt)) {
      this.rec.lastReadings = readings;
      this.deliver(readings);
    }
  }
}

function asReadings(v: unknown): UsageReadings | null {
  if (!v || typeof v !== 'object') return null;
  const r = v as Partial<UsageReadings>;
  return r.ok === true && typeof r.observedAt === 'number' && Array.isArray(r.bars) && Array.isArray(r.notes) ? (r as UsageReadings) : null;
}

/** One line for `sleds doctor`. */
export function describeUsagePoller(s: UsagePollerState, now: number): string {
  const age = s.lastOkAt !== null ? `last good read ${formatAge(now - s.lastOkAt)} ago` : 'no good read yet';
  if (s.role === 'stopped') return 'claude usage endpoint: poller stopped';
  if (s.role === 'follower') return `claude usage endpoint: polled by another musher (pid ${s.ownerPid ?? '?'}); ${age}`;
  if (s.credentials !== 'ok' && s.credentials !== 'unknown') return s.lastError ?? `claude usage endpoint: not polled — credentials ${s.credentials}`;
  if (s.authBlocked) return `${s.lastError ?? 'claude usage endpoint refused the token'}; ${age}`;
  if (s.lastError) return `${s.lastError.replace(/; next try at .*$/, '')}; ${age}${s.nextPollAt !== null ? `; next try in ${formatAge(s.nextPollAt - now)}` : ''}`;
  if (s.lastOkAt !== null) return `claude usage endpoint: ok, ${age} (token ${s.tokenFingerprint ?? '?'})`;
  return 'claude usage endpoint: not polled yet';
}
