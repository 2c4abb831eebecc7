import type { Account } from '../../core/account.js';
import { formatAge } from '../../core/format.js';
import { barStatus, liveBars, type BarStatus } from '../../core/status.js';
import { barsFromStatuslineJson, looksLikeApiKeySession } from '../../core/statusline-local.js';
import { renderStatusline, type BarView, type StatuslineView } from '../../core/statusline-render.js';
import { trustedBars } from '../../core/statusline-trust.js';
import { StatuslinePayload } from '../../core/wire.js';
import { startOfZonedDay } from '../../core/zoned-time.js';
import type { Clock } from '../clock.js';
import type { Forecaster } from '../forecast/forecaster.js';
import type { Log } from '../log.js';
import type { Accounts } from '../quota/accounts.js';
import type { BarStore } from '../store/bars.js';
import type { SessionStore } from '../store/sessions.js';
import type { UsageStore } from '../store/usage.js';
import type { WallStore } from '../store/walls.js';
import type { WallKeeper } from '../walls/wall-keeper.js';
import { sourceHarnessId } from '../source-harness.js';
import { NO_PROGRESS, type SourceProgress, type UsageSource } from './port.js';

/** The harness whose statusline command pushes to the feed (the adapter that claims the 'statusline' source). */
const STATUSLINE_HARNESS = sourceHarnessId('statusline');

/** How stale the cached forecast may be when the statusline reads it. */
const FORECAST_REFRESH_MS = 10_000;
const PROVIDER = 'anthropic';

type RateLimits = Record<string, { used_percentage: number; resets_at?: number | null }>;

export interface StatuslineFeedDeps {
  clock: Clock;
  log: Log;
  timeZone: string;
  accounts: Accounts;
  bars: BarStore;
  walls: WallStore;
  sessions: SessionStore;
  usage: UsageStore;
  forecaster: Forecaster;
  /** What the line says about the session's wall and the exits it would offer. */
  wall: Pick<WallKeeper, 'preview' | 'statusLine' | 'refreshPreview'>;
  /** Reads the transcript the statusline names (the followers' routing). */
  kickTranscript(path: string, harness: string): void;
}

/**
 * Claude Code's statusline as a usage source: each render hands musher the session's 5-hour and weekly bars. It is
 * pushed to, so start and kick have nothing to do. The render is on the harness's hot path (it waits for the line):
 * `render` builds the line from reads alone and returns the bookkeeping (the session, the bar samples, reading the
 * transcript's new lines) as `record`, run once the line has been sent.
 */
export class StatuslineFeed implements UsageSource {
  readonly id = 'statusline';
  private lastReadingAt: number | null = null;

  constructor(private readonly deps: StatuslineFeedDeps) {}

  /** Nothing to look for: the harness's statusline command calls musher. */
  detect(): boolean {
    return true;
  }

  start(): Promise<void> {
    return Promise.resolve();
  }

  kick(): void {
    // Pushed to by the harness: nothing to read on a kick.
  }

  progress(): SourceProgress {
    return NO_PROGRESS;
  }

  stop(): Promise<void> {
    return Promise.resolve();
  }

  describe(): string {
    if (this.lastReadingAt === null) return 'statusline: no bars from a statusline since musher started';
    return `statusline: last bars ${formatAge(this.deps.clock.now() - this.lastReadingAt)} ago`;
  }

  render(raw: string, color: boolean): { line: string; record: () => void } {
    const { clock, log, accounts, bars: barStore, forecaster, wall } = this.deps;
    const now = clock.now();
    let json: Record<string, unknown> = {};
    try {
      const parsed = StatuslinePayload.safeParse(JSON.parse(raw));
      if (parsed.success) json = parsed.data;
      else log.error(`statusline: ${parsed.error.issues[0]?.message ?? 'invalid payload'} — rendered what was there`);
    } catch {
      log.error(`statusline: malformed JSON (${raw.length} bytes) — rendered without it`);
    }
    const sessionId = typeof json.session_id === 'string' ? json.session_id : null;
    const model = json.model as { id?: string; display_name?: string } | undefined;
    // The session's own account's bars: another config dir's (or another login's) are not this line's.
    const account = accounts.forTranscript(typeof json.transcript_path === 'string' ? json.transcript_path : null);
    // A new reading (the bars moved since musher last saw them) is recorded and forecast before the render, so the
    // line shows the wall it implies; an unchanged one is recorded after the answer, off the render's path.
    const moved = this.barsMoved(json, account.key);
    if (moved) {
      this.recordBars(json, sessionId, account, now);
      forecaster.refresh();
    }
    const fromStdin = barsFromStatuslineJson(json);
    const stored = liveBars(barStore.forAccount(PROVIDER, account.key).map((b) => barStatus(b, now)), now);
    const asView = (b: BarStatus): BarView => ({ label: b.label, usedPct: b.usedPct, resetsAtMs: b.resetsAt, ageMs: b.ageMs });
    // Claude Code hands the statusline the 5-hour and weekly bars only: the per-model weekly ones come from the usage
    // endpoint. A fresh Claude Code process has no rate_limits until its first reply: show what musher last saw, aged.
    const bars: BarView[] | null = fromStdin
      ? [...trustedBars(fromStdin, stored.map((b) => ({ ...asView(b), ageMs: b.ageMs, source: b.source }))), ...stored.filter((b) => b.window.startsWith('seven_day_')).map(asView)]
      : stored.length > 0
        ? stored.map(asView)
        : null;
    const today = this.deps.usage.spendByModel(startOfZonedDay(now, this.deps.timeZone), now + 86_400_000);
    const preview = wall.preview(sessionId);
    const view: StatuslineView = {
      modelName: model?.display_name ?? model?.id ?? null,
      bars,
      noBarsReason: looksLikeApiKeySession(json) ? 'api-key' : 'not-yet',
      session: sessionId ? this.deps.usage.sessionSpend(sessionId) : null,
      today: {
        costMicros: today.reduce((a, m) => a + m.costMicros, 0),
        unpricedRecords: today.reduce((a, m) => a + m.unpricedRecords, 0),
      },
      musherAway: false,
      wall: this.wallHint(now, account.key),
      nowMs: now,
      timeZone: this.deps.timeZone,
      color,
      wallLine: wall.statusLine(sessionId),
      amberAtPct: preview?.amberAt,
      exitsHint: preview?.hint || null,
    };
    const record = (): void => {
      if (sessionId) {
        this.deps.sessions.touch({
          sessionId,
          harness: STATUSLINE_HARNESS,
          at: now,
          cwd: typeof json.cwd === 'string' ? json.cwd : null,
          transcriptPath: typeof json.transcript_path === 'string' ? json.transcript_path : null,
          model: model?.id ?? null,
        });
        if (typeof json.transcript_path === 'string') this.deps.kickTranscript(json.transcript_path, STATUSLINE_HARNESS);
      }
      if (!moved) this.recordBars(json, sessionId, account, now);
      // The exits a wall would offer, priced ahead for the amber line (the fullest bar is the one that binds).
      const top = bars?.reduce<BarView | null>((a, b) => (a === null || b.usedPct > a.usedPct ? b : a), null);
      const topBar = top ? stored.find((b) => b.label === top.label) : undefined;
      if (sessionId && topBar) {
        wall.refreshPreview(sessionId, { window: topBar.window, resetsAtMs: topBar.resetsAt }).catch((e: Error) => log.error(`exits preview: ${e.message}`));
      }
      // Keep the forecast fresh for the next render, off the render's own path.
      if (now - forecaster.snapshot().at >= FORECAST_REFRESH_MS) forecaster.refresh();
    };
    return { line: renderStatusline(view), record };
  }

  private barsMoved(json: Record<string, unknown>, account: string): boolean {
    const limits = json.rate_limits as RateLimits | undefined;
    if (!limits) return false;
    const known = new Map(this.deps.bars.forAccount(PROVIDER, account).map((b) => [b.window, b]));
    return Object.entries(limits).some(([window, w]) => {
      const bar = known.get(window);
      return !bar || bar.usedPct !== w.used_percentage || bar.resetsAt !== (typeof w.resets_at === 'number' ? w.resets_at * 1000 : null);
    });
  }

  private recordBars(json: Record<string, unknown>, sessionId: string | null, account: Account, now: number): void {
    const limits = json.rate_limits as RateLimits | undefined;
    if (!limits) return;
    this.lastReadingAt = now;
    for (const [window, w] of Object.entries(limits)) {
      const resetsAt = typeof w.resets_at === 'number' ? w.resets_at * 1000 : null;
      this.deps.bars.record({ provider: PROVIDER, account: account.key, accountLabel: account.label, window, usedPct: w.used_percentage, resetsAt, observedAt: now, source: 'statusline', sessionId });
      // A bar at 100% in a session is a wall there, whichever signal arrives first.
      if (w.used_percentage >= 100 && sessionId) {
        this.deps.walls.record({
          source: 'statusline',
          dedupKey: `statusline:${sessionId}:${window}:${resetsAt ?? 'unknown'}`,
          sessionId,
          timestampMs: now,
          window,
          resetsAtMs: resetsAt,
          message: `${window} at ${w.used_percentage}%`,
        });
      }
    }
  }

  /** The binding wall for the statusline, from the cached forecast: only a wall forecast before its reset. */
  private wallHint(now: number, account: string): { atMs: number; soon: boolean } | null {
    const hint = this.deps.forecaster.forAccount(account).hint;
    if (!hint || hint.wallAtMs < now - 60_000) return null;
    return { atMs: hint.wallAtMs, soon: hint.amber };
  }
}
