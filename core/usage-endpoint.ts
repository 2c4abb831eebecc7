import { z } from 'zod';
import { oneLine } from './format.js';

/**
 * Claude's usage endpoint (`GET /api/oauth/usage`, beta `oauth-2025-04-20`): the only source of the per-model weekly
 * windows and of the seat's usage credits ("extra usage"). Pure: the body (text or parsed JSON) and the time it was
 * observed come in, bar readings and credits come out, and bad input is a one-line error, never a throw.
 *
 * Shapes seen in the wild (see tests/fixtures/usage-endpoint/README.md for where):
 * - flat windows `five_hour`, `seven_day`, `seven_day_opus`, `seven_day_sonnet`, `seven_day_oauth_apps`, … each
 *   `{utilization, resets_at}` or null. `utilization` is already a percentage, 0–100 (33.0 means 33 %, 0.5 means
 *   half a percent); only the `anthropic-ratelimit-unified-*` headers and Claude Code's `rate_limit_event` carry 0–1
 *   fractions. The scale is therefore a declared option, never guessed from the magnitude.
 * - `limits[]`: `{kind: session|weekly_all|weekly_scoped|…, group, percent (0–100), severity, resets_at, is_active,
 *   scope: null | {model: {id, display_name}} | {surface: {display_name}}}`. Newer, and as of mid-2026 the only place
 *   model-scoped weekly windows (Fable, …) appear; the flat `seven_day_<model>` keys may be null.
 * - `extra_usage`: `{is_enabled, monthly_limit, used_credits, utilization, currency?, decimal_places?,
 *   disabled_reason?}`; the amounts are in minor units of the currency (cents), `utilization` is 0–100.
 * - `spend`: `{used: {amount_minor, currency, exponent}, limit: {…}, percent, enabled, disabled_reason}`, the same
 *   money with explicit minor units; preferred over `extra_usage` when both are there.
 */

export const USAGE_ENDPOINT_PATH = '/api/oauth/usage';
export const USAGE_ENDPOINT_BETA = 'oauth-2025-04-20';

export type UtilizationScale = 'percent' | 'fraction';

export interface UsageBar {
  /** Named like Claude Code's statusline: five_hour, seven_day, seven_day_opus, seven_day_sonnet, seven_day_<family>. */
  window: string;
  /** 0–100, one decimal at most, capped at 100 like Claude Code's `used_percentage`. */
  usedPct: number;
  /** Epoch ms, or null when the endpoint gives no reset (an idle 5-hour window, an unused model). */
  resetsAtMs: number | null;
  /** Which part of the response it came from. */
  from: 'limits' | 'flat';
  /** `limits[].is_active`: the server marks this window as the one currently binding. Null when not said. */
  active: boolean | null;
}

/** The seat's usage credits (Claude's "extra usage" / "usage credits"): money exact to the minor unit. */
export interface SeatCredits {
  enabled: boolean | null;
  /** ISO 4217, upper case; null when the endpoint does not say (older responses: US dollars in practice). */
  currency: string | null;
  /** Digits after the decimal point of the currency: 2 for USD/EUR/GBP, 0 for JPY/KRW/VND. */
  exponent: number;
  /** Integer minor units (cents). */
  usedMinor: number | null;
  monthlyLimitMinor: number | null;
  /** max(0, limit − used), in minor units; null without both. */
  remainingMinor: number | null;
  /** The same amounts in integer micro-units of the currency (micro-dollars for USD), the house unit for money. */
  usedMicros: number | null;
  monthlyLimitMicros: number | null;
  /** 0–100, as the endpoint reports it, else derived from used / limit. */
  utilizationPct: number | null;
  disabledReason: string | null;
  from: 'spend' | 'extra_usage';
}

export interface UsageReadings {
  ok: true;
  observedAt: number;
  bars: UsageBar[];
  credits: SeatCredits | null;
  /** Things worth a log line that did not stop the parse (an unknown window, a reset already past, a mismatch). */
  notes: string[];
}

export interface UsageParseError {
  ok: false;
  /** One line, safe to log: what came back and what it means. */
  error: string;
}

export type UsageParse = UsageReadings | UsageParseError;

export interface ReadingsOptions {
  /** How `utilization` fields are scaled. The endpoint reports percentages; `fraction` is for 0–1 sources. */
  utilizationScale?: UtilizationScale;
}

// ---- schemas: loose (unknown fields pass), each part checked on its own so one odd field sinks only itself ----

const Instant = z.union([z.string(), z.number()]).nullish();

export const UsageBucket = z.looseObject({
  utilization: z.number().nullish(),
  resets_at: Instant,
});

export const UsageLimit = z.looseObject({
  kind: z.string(),
  group: z.string().nullish(),
  percent: z.number().nullish(),
  severity: z.string().nullish(),
  resets_at: Instant,
  is_active: z.boolean().nullish(),
  scope: z
    .looseObject({
      model: z.looseObject({ id: z.string().nullish(), display_name: z.string().nullish() }).nullish(),
      surface: z.looseObject({ id: z.string().nullish(), display_name: z.string().nullish() }).nullish(),
    })
    .nullish(),
});

export const ExtraUsage = z.looseObject({
  is_enabled: z.boolean().nullish(),
  monthly_limit: z.number().nullish(),
  used_credits: z.number().nullish(),
  utilization: z.number().nullish(),
  currency: z.string().nullish(),
  decimal_places: z.number().int().min(0).max(6).nullish(),
  disabled_reason: z.string().nullish(),
});

const Money = z.looseObject({
  amount_minor: z.number(),
  currency: z.string().nullish(),
  exponent: z.number().int().min(0).max(6).nullish(),
});

export const Spend = z.looseObject({
  used: Money.nullish(),
  limit: Money.nullish(),
  percent: z.number().nullish(),
  enabled: z.boolean().nullish(),
  disabled_reason: z.string().nullish(),
});

/** The whole response, loosely: what sleds reads of it. Parts are re-checked one by one in readingsFromUsage. */
export const UsageResponse = z.looseObject({
  five_hour: z.unknown().optional(),
  seven_day: z.unknown().optional(),
  seven_day_opus: z.unknown().optional(),
  seven_day_sonnet: z.unknown().optional(),
  limits: z.unknown().optional(),
  extra_usage: z.unknown().optional(),
  spend: z.unknown().optional(),
});
export type UsageResponse = z.infer<typeof UsageResponse>;

/** Flat windows sleds records, in statusline order. Others (codenames such as `iguana_necktie`) become notes. */
export const FLAT_WINDOWS = ['five_hour', 'seven_day', 'seven_day_opus', 'seven_day_sonnet', 'seven_day_oauth_apps', 'seven_day_cowork'] as const;

/** Currencies without minor units (ISO 4217 exponent 0) that a seat may be billed in. */
const ZERO_DECIMAL = new Set(['JPY', 'KRW', 'VND', 'CLP', 'ISK', 'PYG', 'UGX', 'XAF', 'XOF']);

// ---- helpers ----

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}

function pct(raw: number, scale: UtilizationScale): number {
  const p = scale === 'fraction' ? raw * 100 : raw;
  return round1(Math.min(100, Math.max(0, p)));
}

/** ISO 8601 (with or without microseconds and offset), epoch seconds or epoch ms → epoch ms; garbage → null. */
export function instantMs(value: string | number | null | undefined): number | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value <= 0) return null;
    return value < 1e12 ? Math.round(value * 1000) : Math.round(value);
  }
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

function snake(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

/**
 * The model family of a scoped limit, for its window name: "Opus" → opus, "Claude Sonnet 5" → sonnet,
 * "claude-opus-4-8" → opus, "Fable" → fable. A surface scope keeps its whole name: "OAuth apps" → oauth_apps.
 */
export function scopeFamily(scope: z.infer<typeof UsageLimit>['scope']): string | null {
  const model = scope?.model;
  const byName = model?.display_name?.trim();
  if (byName) {
    const words = byName.toLowerCase().split(/[^a-z0-9]+/).filter((w) => w && w !== 'claude');
    const word = words.find((w) => /^[a-z]/.test(w));
    if (word) return word;
  }
  const byId = model?.id?.trim();
  if (byId) {
    const parts = byId.toLowerCase().split(/[^a-z0-9]+/).filter((w) => w && w !== 'claude');
    const part = parts.find((w) => /^[a-z]/.test(w));
    if (part) return part;
  }
  const surface = scope?.surface?.display_name?.trim() || scope?.surface?.id?.trim();
  if (surface) {
    const name = snake(surface);
    if (name) return name;
  }
  return null;
}

/** The statusline window name of a `limits[]` entry, or null for kinds sleds does not track. */
export function limitWindow(limit: z.infer<typeof UsageLimit>): string | null {
  switch (limit.kind) {
    case 'session':
      return 'five_hour';
    case 'weekly_all':
      return 'seven_day';
    case 'weekly_scoped': {
      const family = scopeFamily(limit.scope);
      return family ? `seven_day_${family}` : null;
    }
    default:
      return null;
  }
}

function looksLikeHtml(text: string): boolean {
  return /^\s*</.test(text); // JSON never starts with '<'
}

function htmlError(text: string): string {
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1];
  const what = title ? `"${oneLine(title, 60)}"` : 'a web page';
  return `the usage endpoint answered HTML (${what}), not JSON — a proxy, captive portal or outage page is in the way`;
}

/** An `{type: "error", error: {type, message}}` body (the API's error envelope), as one line; null if it is not one. */
function apiErrorLine(body: Record<string, unknown>): string | null {
  const err = body.error;
  const envelope = body.type === 'error' || typeof err === 'string' || (err !== null && typeof err === 'object' && !Array.isArray(err));
  if (!envelope) return null;
  const e = err !== null && typeof err === 'object' ? (err as Record<string, unknown>) : {};
  const type = typeof e.type === 'string' ? e.type : 'error';
  const text = typeof e.message === 'string' ? e.message : typeof err === 'string' ? err : null;
  return `the usage endpoint answered an error (${oneLine(type, 40)}${text ? `: ${oneLine(text, 120)}` : ''})`;
}

function currencyExponent(currency: string | null): number {
  return currency && ZERO_DECIMAL.has(currency) ? 0 : 2;
}

function toMicros(minor: number | null, exponent: number): number | null {
  return minor === null ? null : minor * 10 ** (6 - exponent);
}

function intMinor(n: number | null | undefined): number | null {
  return typeof n === 'number' && Number.isFinite(n) ? Math.round(n) : null;
}

function readCredits(
  extraRaw: unknown,
  spendRaw: unknown,
  scale: UtilizationScale,
  notes: string[],
): SeatCredits | null {
  const extraParsed = extraRaw === undefined || extraRaw === null ? null : ExtraUsage.safeParse(extraRaw);
  const spendParsed = spendRaw === undefined || spendRaw === null ? null : Spend.safeParse(spendRaw);
  if (extraParsed && !extraParsed.success) notes.push('extra_usage has an unexpected shape: ignored');
  if (spendParsed && !spendParsed.success) notes.push('spend has an unexpected shape: ignored');
  const extra = extraParsed?.success ? extraParsed.data : null;
  const spend = spendParsed?.success ? spendParsed.data : null;
  const spendHasMoney = Boolean(spend && (spend.used || spend.limit));
  if (!extra && !spendHasMoney) return null;
  // spend's amounts carry their own currency and exponent: trusted when it has both; a partial spend (a used amount
  // and no limit, as some seats send) only fills what extra_usage lacks.
  const spendComplete = Boolean(spend?.used && spend?.limit);
  const useSpend = spendComplete || !extra;

  const currencyRaw = (useSpend ? (spend?.used?.currency ?? spend?.limit?.currency) : null) ?? extra?.currency ?? spend?.used?.currency ?? null;
  const currency = currencyRaw ? currencyRaw.trim().toUpperCase() || null : null;
  const spendExponent = spend?.used?.exponent ?? spend?.limit?.exponent ?? null;
  const exponent = (useSpend ? spendExponent : null) ?? extra?.decimal_places ?? currencyExponent(currency);

  const extraUsed = intMinor(extra?.used_credits);
  const extraLimit = intMinor(extra?.monthly_limit);
  const spendUsed = intMinor(spend?.used?.amount_minor);
  const spendLimit = intMinor(spend?.limit?.amount_minor);
  const usedMinor = useSpend ? (spendUsed ?? extraUsed) : (extraUsed ?? spendUsed);
  const monthlyLimitMinor = useSpend ? (spendLimit ?? extraLimit) : (extraLimit ?? spendLimit);
  const kept = useSpend ? 'spend kept' : 'extra_usage kept';
  if (spendUsed !== null && extraUsed !== null && spendUsed !== extraUsed) {
    notes.push(`credits: spend.used (${spendUsed}) and extra_usage.used_credits (${extraUsed}) differ; ${kept}`);
  }
  if (spendLimit !== null && extraLimit !== null && spendLimit !== extraLimit) {
    notes.push(`credits: spend.limit (${spendLimit}) and extra_usage.monthly_limit (${extraLimit}) differ; ${kept}`);
  }

  let utilizationPct: number | null = null;
  if (typeof extra?.utilization === 'number') utilizationPct = pct(extra.utilization, scale);
  else if (typeof spend?.percent === 'number') utilizationPct = pct(spend.percent, 'percent');
  else if (usedMinor !== null && monthlyLimitMinor !== null && monthlyLimitMinor > 0) {
    utilizationPct = pct((usedMinor / monthlyLimitMinor) * 100, 'percent');
  }
  if (utilizationPct !== null && usedMinor !== null && monthlyLimitMinor !== null && monthlyLimitMinor > 0) {
    const derived = (usedMinor / monthlyLimitMinor) * 100;
    if (Math.abs(derived - utilizationPct) > 1 && utilizationPct < 100) {
      notes.push(`credits: utilization ${utilizationPct}% does not match used/limit (${round1(derived)}%)`);
    }
  }

  return {
    enabled: (useSpend ? spend?.enabled : null) ?? extra?.is_enabled ?? spend?.enabled ?? null,
    currency,
    exponent,
    usedMinor,
    monthlyLimitMinor,
    remainingMinor: usedMinor !== null && monthlyLimitMinor !== null ? Math.max(0, monthlyLimitMinor - usedMinor) : null,
    usedMicros: toMicros(usedMinor, exponent),
    monthlyLimitMicros: toMicros(monthlyLimitMinor, exponent),
    utilizationPct,
    disabledReason: spend?.disabled_reason ?? extra?.disabled_reason ?? null,
    from: useSpend ? 'spend' : 'extra_usage',
  };
}

/**
 * Bar readings and seat credits from one usage-endpoint answer. `input` is the raw body text or parsed JSON.
 * HTML, garbage, a non-object or an API error envelope → `{ok: false, error}` (one line). An empty object is a
 * valid answer with no bars (an API-key or Enterprise seat without windows).
 */
export function readingsFromUsage(input: unknown, observedAtMs: number, opts: ReadingsOptions = {}): UsageParse {
  const scale = opts.utilizationScale ?? 'percent';
  let json: unknown = input;
  if (typeof input === 'string') {
    if (input.trim() === '') return { ok: false, error: 'the usage endpoint answered an empty body' };
    if (looksLikeHtml(input)) return { ok: false, error: htmlError(input) };
    try {
      json = JSON.parse(input);
    } catch {
      // Never echo the body's text here: an error page can carry tokens or cookies.
      return { ok: false, error: `the usage endpoint answered something that is not JSON (${input.length} bytes)` };
    }
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    const what = json === null ? 'null' : Array.isArray(json) ? 'an array' : typeof json;
    return { ok: false, error: `the usage endpoint answered JSON that is not an object (${what})` };
  }
  const body = json as Record<string, unknown>;
  const apiError = apiErrorLine(body);
  if (apiError) return { ok: false, error: apiError };

  const notes: string[] = [];
  const byWindow = new Map<string, UsageBar>();
  const add = (bar: UsageBar): void => {
    if (bar.resetsAtMs !== null && bar.resetsAtMs <= observedAtMs) {
      notes.push(`${bar.window}: resets_at is already past; reading dropped`);
      return;
    }
    if (!byWindow.has(bar.window)) byWindow.set(bar.window, bar);
  };

  // limits[] first: it is the newer, authoritative list; the flat keys fill what it lacks.
  if (Array.isArray(body.limits)) {
    for (const entry of body.limits) {
      const parsed = UsageLimit.safeParse(entry);
      if (!parsed.success) {
        notes.push('limits[]: an entry with an unexpected shape was ignored');
        continue;
      }
      const limit = parsed.data;
      const window = limitWindow(limit);
      if (!window) {
        if (limit.kind === 'weekly_scoped') notes.push('limits[]: a weekly_scoped entry names no model; ignored');
        else if (!['session', 'weekly_all'].includes(limit.kind)) notes.push(`limits[]: kind "${oneLine(limit.kind, 40)}" not tracked`);
        continue;
      }
      if (typeof limit.percent !== 'number') continue; // a scope with no reading yet
      if (byWindow.has(window)) {
        notes.push(`limits[]: ${window} listed twice; first kept`);
        continue;
      }
      add({ window, usedPct: pct(limit.percent, 'percent'), resetsAtMs: instantMs(limit.resets_at), from: 'limits', active: limit.is_active ?? null });
    }
  } else if (body.limits !== undefined && body.limits !== null) {
    notes.push('limits is not a list: ignored');
  }

  for (const window of FLAT_WINDOWS) {
    const raw = body[window];
    if (raw === undefined || raw === null) continue; // null: no such window on this seat (Enterprise, unused model)
    const parsed = UsageBucket.safeParse(raw);
    if (!parsed.success) {
      notes.push(`${window} has an unexpected shape: ignored`);
      continue;
    }
    if (typeof parsed.data.utilization !== 'number') continue;
    if (byWindow.has(window)) continue;
    add({ window, usedPct: pct(parsed.data.utilization, scale), resetsAtMs: instantMs(parsed.data.resets_at), from: 'flat', active: null });
  }

  const known = new Set<string>([...FLAT_WINDOWS, 'limits', 'extra_usage', 'spend']);
  for (const [key, value] of Object.entries(body)) {
    if (known.has(key) || value === null || typeof value !== 'object' || Array.isArray(value)) continue;
    if (typeof (value as Record<string, unknown>).utilization === 'number') notes.push(`window "${oneLine(key, 40)}" not tracked`);
  }

  const order = (w: string): number => (w === 'five_hour' ? 0 : w === 'seven_day' ? 1 : 2);
  const bars = [...byWindow.values()].sort((a, b) => order(a.window) - order(b.window) || a.window.localeCompare(b.window));
  return { ok: true, observedAt: observedAtMs, bars, credits: readCredits(body.extra_usage, body.spend, scale, notes), notes };
}

/**
 * `Retry-After` as a delay in ms from `nowMs`: delta-seconds or an HTTP date. Missing, unparsable, zero or past → null
 * (the caller's own backoff applies).
 */
export function retryAfterMs(value: string | null | undefined, nowMs: number): number | null {
  const v = value?.trim();
  if (!v) return null;
  if (/^\d+(\.\d+)?$/.test(v)) {
    const s = Number(v);
    return s > 0 ? Math.ceil(s * 1000) : null;
  }
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  const delay = at - nowMs;
  return delay > 0 ? delay : null;
}
