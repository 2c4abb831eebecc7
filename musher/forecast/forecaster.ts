import { bindingWall, barName, forecastBar, profileCutoff, wallHint, type BindingWall, type Forecast, type WallHint } from '../../core/forecast/forecast.js';
import { activityProfile, type ActivityProfile } from '../../core/forecast/activity.js';
import { dollarsToWall, dollarsToWallBand, fitCalibration, pairsFromSeries, type Calibration } from '../../core/forecast/calibration.js';
import { splitTrails, windowLengthMs, type BarSample } from '../../core/forecast/trail.js';
import type { BarStore } from '../store/bars.js';
import type { UsageStore } from '../store/usage.js';
import { zoneOffsetMinutes } from '../../core/zoned-time.js';
import type { Clock } from '../clock.js';

/**
 * musher's side of the forecast: feeds each live bar's samples and the priced spend to the pure forecaster in
 * core/forecast, and keeps the latest answer so the hot paths (statusline, /sled status) read it for free.
 */
export interface WallForecast {
  provider: string;
  /** Whose bar (core/account.ts). */
  account: string;
  accountLabel: string | null;
  window: string;
  /** "5-hour", "weekly", "weekly Opus", … */
  name: string;
  usedPct: number;
  resetsAt: number | null;
  forecast: Forecast;
  calibration: Calibration;
  /** API-equivalent dollars until the wall, when the calibration has a fit: "$6 more". */
  dollarsToWallMicros: number | null;
  dollarsToWallBand: [number, number] | null;
}

export interface ForecastSnapshot {
  at: number;
  /** Every account's bars. */
  walls: WallForecast[];
  /** The binding wall and its hint for musher's own accounts (a session elsewhere asks `forAccount`). */
  binding: BindingWall | null;
  hint: WallHint | null;
}

/** Which priced source pays into which provider's bars. */
const SOURCE_OF: Record<string, string> = { anthropic: 'claude-transcript', openai: 'codex-rollout' };
const HOUR = 3_600_000;

/** How much of a bar's history teaches the forecaster when its owner works (hours of the day, weekdays). */
const PROFILE_HISTORY_MS = 7 * 24 * HOUR;

export class Forecaster {
  private latest: ForecastSnapshot | null = null;
  /** Each bar's activity profile, relearned once an hour (it costs time in proportion to the history). */
  private readonly profiles = new Map<string, { hour: number; profile: ActivityProfile | null }>();

  constructor(
    private readonly bars: BarStore,
    private readonly usage: UsageStore,
    private readonly clock: Clock,
    /** musher's zone (`musher.timeZone`): the hours of the day the activity profile is learnt in. */
    private readonly timeZone: string,
    /** musher's own accounts (its Claude config dir's, its Codex home's): what `sleds status` and `walls` bind on; default every account. */
    private readonly ownAccounts?: () => readonly string[],
  ) {}

  /** The binding wall and hint of one account's bars, from the last forecast (cheap: the statusline's). */
  forAccount(account: string): { binding: BindingWall | null; hint: WallHint | null } {
    const snap = this.snapshot();
    const binding = bindingWall(snap.walls.filter((w) => w.account === account).map((w) => w.forecast));
    return { binding, hint: wallHint(binding, snap.at) };
  }

  /** The last computed forecast (cheap), or a fresh one when there is none yet. */
  snapshot(): ForecastSnapshot {
    return this.latest ?? this.refresh();
  }

  /** Recomputes every bar's forecast from the store. */
  refresh(): ForecastSnapshot {
    const now = this.clock.now();
    const walls: WallForecast[] = [];
    for (const bar of this.bars.all()) {
      if (bar.resetsAt !== null && bar.resetsAt <= now) continue; // that window is over
      const length = windowLengthMs(bar.window) ?? 7 * 24 * HOUR;
      const since = now - length - HOUR;
      const samples: BarSample[] = this.bars.samples(bar.provider, bar.account, bar.window, since).map((s) => ({
        provider: bar.provider,
        window: bar.window,
        usedPct: s.usedPct,
        resetsAtMs: s.resetsAt,
        observedAtMs: s.observedAt,
        source: s.source,
      }));
      const tzOffsetMinutes = zoneOffsetMinutes(now, this.timeZone);
      const activity = this.profileFor(bar.provider, bar.account, bar.window, now, tzOffsetMinutes);
      const forecast = forecastBar(samples, now, { activity, tzOffsetMinutes });
      const calibration = this.calibrate(bar.provider, samples, since, now);
      const fit = calibration.kind === 'fit' ? calibration : null;
      walls.push({
        provider: bar.provider,
        account: bar.account,
        accountLabel: bar.accountLabel,
        window: bar.window,
        name: barName(bar.window),
        usedPct: bar.usedPct,
        resetsAt: bar.resetsAt,
        forecast,
        calibration,
        dollarsToWallMicros: fit ? dollarsToWall(bar.usedPct, fit) : null,
        dollarsToWallBand: fit ? dollarsToWallBand(bar.usedPct, fit) : null,
      });
    }
    const own = this.ownAccounts ? new Set(this.ownAccounts()) : null;
    const binding = bindingWall(walls.filter((w) => own === null || own.has(w.account)).map((w) => w.forecast));
    this.latest = { at: now, walls, binding, hint: wallHint(binding, now) };
    return this.latest;
  }

  private profileFor(provider: string, account: string, window: string, now: number, tzOffsetMinutes: number): ActivityProfile | null {
    const key = `${provider}/${account}/${window}`;
    const hour = profileCutoff(now);
    const cached = this.profiles.get(key);
    if (cached && cached.hour === hour) return cached.profile;
    const history: BarSample[] = this.bars.samples(provider, account, window, now - PROFILE_HISTORY_MS).map((s) => ({
      provider,
      window,
      usedPct: s.usedPct,
      resetsAtMs: s.resetsAt,
      observedAtMs: s.observedAt,
      source: s.source,
    }));
    const profile = activityProfile(splitTrails(history), hour, { tzOffsetMinutes });
    this.profiles.set(key, { hour, profile });
    return profile;
  }

  private calibrate(provider: string, samples: BarSample[], since: number, now: number): Calibration {
    const source = SOURCE_OF[provider];
    const series = source ? this.usage.costSeries(source, since) : [];
    let cumulative = 0;
    const usd = [{ atMs: since, usdMicros: 0 }, ...series.map((r) => ({ atMs: r.ts, usdMicros: (cumulative += r.costMicros) }))];
    return fitCalibration(pairsFromSeries(samples, usd), now);
  }
}
