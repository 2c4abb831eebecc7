import { HookPayload, StatuslinePayload, type HookAnswer } from '../core/wire.js';
import { parseSledPrompt, sledUsage, SLED_HELP } from '../core/sled-command.js';
import { barStatus, liveBars, renderStatusCard, type BarStatus, type StatusSnapshot } from '../core/status.js';
import { renderStatusline, type BarView, type StatuslineView } from '../core/statusline-render.js';
import { barsFromStatuslineJson, looksLikeApiKeySession } from '../core/statusline-local.js';
import { parseLimitText } from '../core/limit-text.js';
import type { PriceTable } from '../core/price-table.js';
import type { SledsPaths } from '../core/paths.js';
import type { Clock } from './clock.js';
import type { Log } from './log.js';
import { openStore, type Db } from './store/db.js';
import { HookEventStore } from './store/hook-events.js';
import { SessionStore } from './store/sessions.js';
import { UsageStore } from './store/usage.js';
import { BarStore } from './store/bars.js';
import { WallStore } from './store/walls.js';
import { OffsetStore } from './store/offsets.js';
import { CreditStore } from './store/credits.js';
import { PlatformKeyStore } from './store/platform-key.js';
import type { UsageReadings } from '../core/usage-endpoint.js';
import { describeUsagePoller, type UsagePollerState } from './quota/usage-poller.js';
import { FileFollower } from './ingest/file-follower.js';
import { ClaudeTranscriptSource } from './ingest/claude-transcripts.js';
import { CodexRolloutSource, type CodexSeatReading } from './ingest/codex-rollouts.js';
import { Forecaster, type ForecastSnapshot } from './forecast/forecaster.js';
import { SpoolDrain, type SpooledEvent } from './ingest/spool-drain.js';
import type { GatewayService } from './gateway/service.js';

export interface MusherOptions {
  paths: SledsPaths;
  clock: Clock;
  log: Log;
  prices: PriceTable;
  claudeConfigDir: string;
  /** Codex's rollouts: $CODEX_HOME/sessions. */
  codexSessionsDir: string;
  version: string;
  onBackfillProgress?: (done: number, total: number) => void;
}

export interface HookDelivery extends SpooledEvent {
  viaSpool: boolean;
}

/** How stale the cached forecast may be when the statusline reads it. */
const FORECAST_REFRESH_MS = 10_000;

export const CARRY_ON: HookAnswer = { stdout: '', exitCode: 0 };
/** The hook events whose answer the harness acts on; the others are answered "carry on" before they are recorded. */
const ANSWERED_EVENTS = new Set(['UserPromptSubmit']);
const PROVIDER = 'anthropic';

/** Local midnight in musher's time zone: "today" for spend. */
function startOfLocalDay(ms: number): number {
  const d = new Date(ms);
  d.setHours(0, 0, 0, 0);
  return d.getTime();
}

/**
 * Blocks the typed prompt and answers it in place. Claude Code gets `suppressOriginalPrompt` so the prompt is not
 * echoed; Codex validates hook output strictly and fails the hook on any field it does not know (facts, measured
 * on 0.169.0), so it gets the bare decision.
 */
function blockWith(reason: string, harness: string): HookAnswer {
  const answer =
    harness === 'codex'
      ? { decision: 'block', reason }
      : { decision: 'block', reason, hookSpecificOutput: { hookEventName: 'UserPromptSubmit', suppressOriginalPrompt: true } };
  return { stdout: JSON.stringify(answer), exitCode: 0 };
}

/** musher's state and decisions, without the socket: the HTTP layer (server.ts) only routes to this. */
export class Musher {
  readonly db: Db;
  readonly hookEvents: HookEventStore;
  readonly sessions: SessionStore;
  readonly usage: UsageStore;
  readonly bars: BarStore;
  readonly walls: WallStore;
  readonly offsets: OffsetStore;
  readonly credits: CreditStore;
  readonly platformKey: PlatformKeyStore;
  readonly transcripts: ClaudeTranscriptSource;
  readonly codex: CodexRolloutSource;
  readonly forecaster: Forecaster;
  readonly spool: SpoolDrain;
  readonly startedAt: number;
  /** Set by the daemon (main.ts): its state is shown by doctor. */
  usagePoller: { state(): UsagePollerState } | null = null;
  /** Set by the daemon (main.ts): the platform-key gateway and its tokens. */
  gateway: GatewayService | null = null;

  constructor(private readonly opts: MusherOptions) {
    this.db = openStore(opts.paths.dbFile);
    this.hookEvents = new HookEventStore(this.db);
    this.sessions = new SessionStore(this.db);
    this.usage = new UsageStore(this.db);
    this.bars = new BarStore(this.db);
    this.walls = new WallStore(this.db);
    this.offsets = new OffsetStore(this.db);
    this.credits = new CreditStore(this.db);
    this.platformKey = new PlatformKeyStore(this.db);
    this.startedAt = opts.clock.now();
    // One follower for both adapters: they share the byte offsets, keyed by path.
    const follower = new FileFollower(this.db, this.offsets, opts.clock, opts.log);
    this.transcripts = new ClaudeTranscriptSource({
      projectsDir: `${opts.claudeConfigDir}/projects`,
      follower,
      sessions: this.sessions,
      usage: this.usage,
      walls: this.walls,
      prices: opts.prices,
      clock: opts.clock,
      log: opts.log,
      onProgress: opts.onBackfillProgress,
    });
    this.codex = new CodexRolloutSource({
      sessionsDir: opts.codexSessionsDir,
      follower,
      sessions: this.sessions,
      usage: this.usage,
      walls: this.walls,
      bars: this.bars,
      prices: opts.prices,
      clock: opts.clock,
      log: opts.log,
      onSeat: (seat) => this.recordCodexCredits(seat),
    });
    this.forecaster = new Forecaster(this.bars, this.usage, opts.clock);
    this.spool = new SpoolDrain(opts.paths.spoolDir, (e) => this.handleHook({ ...e, viaSpool: true }), opts.log);
  }

  /** Starts the sources. Resolves when the transcript watcher has listed what exists (reading goes on after). */
  async start(): Promise<void> {
    const drained = this.spool.start();
    if (drained > 0) this.opts.log.info(`drained ${drained} spooled hook event(s)`);
    await Promise.all([this.transcripts.start(), this.codex.start()]);
  }

  async close(): Promise<void> {
    this.spool.stop();
    await Promise.all([this.transcripts.stop(), this.codex.stop()]);
    this.db.close();
  }

  answers(event: string): boolean {
    return ANSWERED_EVENTS.has(event);
  }

  handleHook(d: HookDelivery): HookAnswer {
    let json: unknown;
    try {
      json = JSON.parse(d.raw);
    } catch {
      this.opts.log.error(`hook ${d.event}: malformed JSON (${d.raw.length} bytes, starts ${JSON.stringify(d.raw.slice(0, 40))}) — ignored`);
      return CARRY_ON;
    }
    const parsed = HookPayload.safeParse(json);
    if (!parsed.success) {
      this.opts.log.error(`hook ${d.event}: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'payload'} ${i.message}`).join('; ')} — ignored`);
      return CARRY_ON;
    }
    const p = parsed.data;
    const fresh = this.hookEvents.record({
      eventId: d.eventId,
      event: d.event,
      sessionId: p.session_id,
      receivedAt: d.receivedAt,
      viaSpool: d.viaSpool,
      payload: d.raw,
    });
    if (!fresh) return CARRY_ON; // delivered before: a spooled copy
    this.sessions.touch({
      sessionId: p.session_id,
      harness: d.harness,
      at: d.receivedAt,
      cwd: p.cwd ?? null,
      transcriptPath: p.transcript_path ?? null,
      model: d.event === 'SessionStart' ? (p.model ?? null) : null,
    });
    if (p.transcript_path) this.kickTranscript(p.transcript_path, d.harness);
    switch (d.event) {
      case 'UserPromptSubmit':
        return d.viaSpool ? CARRY_ON : this.answerPrompt(p.prompt ?? '', p.session_id, d.harness);
      case 'StopFailure':
        if (p.error === 'rate_limit') this.recordStopFailureWall(d, p);
        return CARRY_ON;
      case 'SessionEnd':
        this.sessions.end(p.session_id, p.reason ?? 'other', d.receivedAt);
        return CARRY_ON;
      default:
        return CARRY_ON;
    }
  }

  /** Reads a session file's new lines now, with the adapter that owns it (both share the offsets, keyed by path). */
  private kickTranscript(path: string, harness: string): void {
    if (harness === 'codex' || this.codex.owns(path)) this.codex.kick(path);
    else this.transcripts.kick(path);
  }

  private answerPrompt(prompt: string, sessionId: string, harness: string): HookAnswer {
    const command = parseSledPrompt(prompt);
    if (!command) return CARRY_ON;
    switch (command.verb) {
      case 'status':
        return blockWith(renderStatusCard(this.status(), sessionId), harness);
      case 'help':
        return blockWith(SLED_HELP, harness);
      case 'unknown':
        return blockWith(sledUsage(command.word), harness);
    }
  }

  private recordStopFailureWall(d: HookDelivery, p: HookPayload): void {
    const text = p.last_assistant_message ?? '';
    const limit = parseLimitText(text, d.receivedAt);
    this.walls.record({
      source: 'hook:StopFailure',
      dedupKey: `hook:${d.eventId}`,
      sessionId: p.session_id,
      timestampMs: d.receivedAt,
      window: limit.window,
      resetsAtMs: limit.resetsAtMs,
      message: text || 'rate_limit',
    });
    this.opts.log.warn(`wall: session ${p.session_id} hit ${limit.window ?? 'a usage limit'} (StopFailure)`);
  }

  /**
   * Renders the statusline. The line is built from reads alone and returned with the bookkeeping (session,
   * bar samples, reading the transcript's new lines) to run once it has been sent: the harness waits for the line.
   */
  statusline(raw: string, color: boolean): { line: string; record: () => void } {
    const now = this.opts.clock.now();
    let json: Record<string, unknown> = {};
    try {
      const parsed = StatuslinePayload.safeParse(JSON.parse(raw));
      if (parsed.success) json = parsed.data;
      else this.opts.log.error(`statusline: ${parsed.error.issues[0]?.message ?? 'invalid payload'} — rendered what was there`);
    } catch {
      this.opts.log.error(`statusline: malformed JSON (${raw.length} bytes) — rendered without it`);
    }
    const sessionId = typeof json.session_id === 'string' ? json.session_id : null;
    const model = json.model as { id?: string; display_name?: string } | undefined;
    // A new reading (the bars moved since musher last saw them) is recorded and forecast before the render, so the
    // line shows the wall it implies; an unchanged one is recorded after the answer, off the render's path.
    const moved = this.statuslineBarsMoved(json);
    if (moved) {
      this.recordStatuslineBars(json, sessionId, now);
      this.forecaster.refresh();
    }
    const fromStdin = barsFromStatuslineJson(json);
    const stored = liveBars(this.bars.all().filter((b) => b.provider === PROVIDER).map((b) => barStatus(b, now)), now);
    const asView = (b: BarStatus): BarView => ({ label: b.label, usedPct: b.usedPct, resetsAtMs: b.resetsAt, ageMs: b.ageMs });
    // Claude Code hands the statusline the 5-hour and weekly bars only: the per-model weekly ones come from the usage
    // endpoint. A fresh Claude Code process has no rate_limits until its first reply: show what musher last saw, aged.
    const bars: BarView[] | null = fromStdin
      ? [...fromStdin, ...stored.filter((b) => b.window.startsWith('seven_day_')).map(asView)]
      : stored.length > 0
        ? stored.map(asView)
        : null;
    const today = this.usage.spendByModel(startOfLocalDay(now), now + 86_400_000);
    const view: StatuslineView = {
      modelName: model?.display_name ?? model?.id ?? null,
      bars,
      noBarsReason: looksLikeApiKeySession(json) ? 'api-key' : 'not-yet',
      session: sessionId ? this.usage.sessionSpend(sessionId) : null,
      today: {
        costMicros: today.reduce((a, m) => a + m.costMicros, 0),
        unpricedRecords: today.reduce((a, m) => a + m.unpricedRecords, 0),
      },
      musherAway: false,
      wall: this.wallHint(now),
      nowMs: now,
      color,
    };
    const record = (): void => {
      if (sessionId) {
        this.sessions.touch({
          sessionId,
          harness: 'claude-code',
          at: now,
          cwd: typeof json.cwd === 'string' ? json.cwd : null,
          transcriptPath: typeof json.transcript_path === 'string' ? json.transcript_path : null,
          model: model?.id ?? null,
        });
        if (typeof json.transcript_path === 'string') this.kickTranscript(json.transcript_path, 'claude-code');
      }
      if (!moved) this.recordStatuslineBars(json, sessionId, now);
      // Keep the forecast fresh for the next render, off the render's own path.
      if (now - this.forecaster.snapshot().at >= FORECAST_REFRESH_MS) this.forecaster.refresh();
    };
    return { line: renderStatusline(view), record };
  }

  private statuslineBarsMoved(json: Record<string, unknown>): boolean {
    const limits = json.rate_limits as Record<string, { used_percentage: number; resets_at?: number | null }> | undefined;
    if (!limits) return false;
    const known = new Map(this.bars.all().filter((b) => b.provider === PROVIDER).map((b) => [b.window, b]));
    return Object.entries(limits).some(([window, w]) => {
      const bar = known.get(window);
      return !bar || bar.usedPct !== w.used_percentage || bar.resetsAt !== (typeof w.resets_at === 'number' ? w.resets_at * 1000 : null);
    });
  }

  private recordStatuslineBars(json: Record<string, unknown>, sessionId: string | null, now: number): void {
    const limits = json.rate_limits as Record<string, { used_percentage: number; resets_at?: number | null }> | undefined;
    if (!limits) return;
    for (const [window, w] of Object.entries(limits)) {
      this.bars.record({
        provider: PROVIDER,
        window,
        usedPct: w.used_percentage,
        resetsAt: typeof w.resets_at === 'number' ? w.resets_at * 1000 : null,
        observedAt: now,
        source: 'statusline',
        sessionId,
      });
    }
  }

  private lastCodexCredits = '';

  /** Codex's credit balance, from a rollout's rate-limit snapshot, when it changes. */
  private recordCodexCredits(seat: CodexSeatReading): void {
    const c = seat.credits;
    if (!c) return;
    const key = JSON.stringify(c);
    if (key === this.lastCodexCredits) return;
    this.lastCodexCredits = key;
    // "12.34" is kept exactly: integer minor units and the digits after the point.
    const m = c.balance !== null ? /^(-?\d+)(?:\.(\d+))?$/.exec(c.balance.trim()) : null;
    const exponent = m?.[2]?.length ?? 0;
    this.credits.record({
      provider: 'openai',
      observedAt: seat.observedAt,
      enabled: c.hasCredits,
      unlimited: c.unlimited,
      currency: null,
      exponent,
      usedMinor: null,
      limitMinor: null,
      balanceMinor: m ? Number(`${m[1]}${m[2] ?? ''}`) : null,
      utilizationPct: null,
      disabledReason: null,
      source: seat.source,
    });
  }

  /** A good answer of Claude's usage endpoint: its bars (per-model weekly ones too) and the seat's credits. */
  recordUsageEndpoint(r: UsageReadings): void {
    this.db.transaction(() => {
      for (const b of r.bars) {
        this.bars.record({ provider: PROVIDER, window: b.window, usedPct: b.usedPct, resetsAt: b.resetsAtMs, observedAt: r.observedAt, source: 'usage-endpoint' });
      }
      if (r.credits) {
        this.credits.record({
          provider: PROVIDER,
          observedAt: r.observedAt,
          enabled: r.credits.enabled,
          unlimited: null,
          currency: r.credits.currency,
          exponent: r.credits.exponent,
          usedMinor: r.credits.usedMinor,
          limitMinor: r.credits.monthlyLimitMinor,
          balanceMinor: r.credits.remainingMinor,
          utilizationPct: r.credits.utilizationPct,
          disabledReason: r.credits.disabledReason,
          source: 'usage-endpoint',
        });
      }
    })();
  }

  /** The binding wall for the statusline, from the cached forecast: only a wall forecast before its reset. */
  private wallHint(now: number): { atMs: number; soon: boolean } | null {
    const hint = this.forecaster.snapshot().hint;
    if (!hint || hint.wallAtMs < now - 60_000) return null;
    return { atMs: hint.wallAtMs, soon: hint.amber };
  }

  /** Every bar's forecast, fresh: `sleds walls`. */
  wallForecasts(): ForecastSnapshot {
    return this.forecaster.refresh();
  }

  /** One line on the usage endpoint for doctor and status: polling, backing off, or why not. */
  usagePollerLine(): string {
    return this.usagePoller ? describeUsagePoller(this.usagePoller.state(), this.opts.clock.now()) : 'usage endpoint: not polled by this musher';
  }

  /** Every bar still in its window, with source and age. */
  barsNow(): { now: number; bars: BarStatus[] } {
    const now = this.opts.clock.now();
    return { now, bars: liveBars(this.bars.all().map((b) => barStatus(b, now)), now) };
  }

  status(): StatusSnapshot {
    const now = this.opts.clock.now();
    const since = startOfLocalDay(now);
    const byModel = this.usage.spendByModel(since, now + 86_400_000);
    const offsets = this.offsets.summary();
    const claude = this.transcripts.progress();
    const codex = this.codex.progress();
    const progress = { pendingBytes: claude.pendingBytes + codex.pendingBytes, backfilling: claude.backfilling || codex.backfilling };
    return {
      now,
      musher: { pid: process.pid, version: this.opts.version, startedAt: this.startedAt },
      bars: liveBars(this.bars.all().map((b) => barStatus(b, now)), now),
      today: {
        since,
        costMicros: byModel.reduce((a, m) => a + m.costMicros, 0),
        unpricedRecords: byModel.reduce((a, m) => a + m.unpricedRecords, 0),
        byModel,
      },
      sessions: this.sessions.recent(50).map((s) => {
        const spend = this.usage.sessionSpend(s.sessionId);
        return {
          sessionId: s.sessionId,
          harness: s.harness,
          cwd: s.cwd,
          model: s.model,
          firstSeenAt: s.firstSeenAt,
          lastSeenAt: s.lastSeenAt,
          endedAt: s.endedAt,
          costMicros: spend.costMicros,
          unpricedRecords: spend.unpricedRecords,
          usageRecords: spend.records,
          models: spend.models,
        };
      }),
      walls: this.walls.recent(20).map((w) => ({
        source: w.source,
        sessionId: w.sessionId,
        at: w.timestampMs,
        window: w.window,
        resetsAt: w.resetsAtMs,
        message: w.message,
      })),
      ingest: { files: offsets.files, bytesRead: offsets.bytes, pendingBytes: progress.pendingBytes, backfilling: progress.backfilling },
      totals: (({ records, ...rest }) => ({ usageRecords: records, ...rest }))(this.usage.totals()),
      hookEvents: this.hookEvents.countsByEvent(),
      usageEndpoint: this.usagePollerLine(),
      credits: this.credits.latest(),
      platformKey: (() => {
        const bySeatModel = this.platformKey.spend(since, now + 86_400_000);
        return {
          todayMicros: bySeatModel.reduce((a, r) => a + r.costMicros, 0),
          unpricedRecords: bySeatModel.reduce((a, r) => a + r.unpricedRecords, 0),
          bySeatModel,
        };
      })(),
      nextWall: (() => {
        const snap = this.forecaster.refresh();
        const b = snap.binding;
        if (!b || b.kind !== 'wall') return null;
        const w = snap.walls.find((x) => x.provider === b.provider && x.window === b.window);
        return { name: w?.name ?? b.window, provider: b.provider, window: b.window, atMs: b.atMs, dollarsToWallMicros: w?.dollarsToWallMicros ?? null };
      })(),
    };
  }
}
