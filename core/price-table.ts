/**
 * The effective-dated price table: rows in LiteLLM's `model_prices_and_context_window.json` format, one set of rows
 * per "in force from" date (the repo keeps them as `prices/effective/<YYYY-MM-DD>.json`). Pure: the caller reads the
 * files and hands their parsed JSON to `buildPriceTable`.
 *
 * Prices are kept as integer pico-dollars per token (USD per token × 1e12), so pricing sums integers and rounds once.
 */
import { z } from 'zod';

/** USD per token (or per query); must be a finite number ≥ 0. */
const usdPrice = z.number().finite().nonnegative();

const searchContextCost = z.union([
  usdPrice,
  z.looseObject({
    search_context_size_low: usdPrice.optional(),
    search_context_size_medium: usdPrice.optional(),
    search_context_size_high: usdPrice.optional(),
  }),
]);

/**
 * One LiteLLM row. Only the fields sleds reads are checked; unknown keys (max_tokens, supports_*, …) are kept as-is.
 * Prompt-size tiers (`input_cost_per_token_above_<N>k_tokens` and friends) are dynamic keys, checked in `buildPriceTable`.
 */
export const LiteLLMEntrySchema = z.looseObject({
  litellm_provider: z.string().min(1),
  mode: z.string().optional(),
  input_cost_per_token: usdPrice,
  output_cost_per_token: usdPrice,
  /** 5-minute cache write. */
  cache_creation_input_token_cost: usdPrice.optional(),
  /** 1-hour cache write. */
  cache_creation_input_token_cost_above_1hr: usdPrice.optional(),
  cache_read_input_token_cost: usdPrice.optional(),
  /** Per server-side web search. LiteLLM writes it as an object keyed by search context size. */
  search_context_cost_per_query: searchContextCost.optional(),
  /** sleds' own: the multiplier for `inference_geo: "us"` on the models that have data-residency pricing. */
  sleds_us_geo_multiplier: z.number().finite().min(1).optional(),
  /** sleds' own: where a price came from when it is not a plain list price. */
  sleds_note: z.string().optional(),
});
export type LiteLLMEntry = z.infer<typeof LiteLLMEntrySchema>;

/** Integer pico-dollars (USD × 1e12) per token. `null` = the row gives no price for that token class. */
export interface TokenRates {
  input: number;
  output: number;
  cacheWrite5m: number | null;
  cacheWrite1h: number | null;
  cacheRead: number | null;
}

/** Once total input (input + cache writes + cache reads) is above `aboveTokens`, the whole request uses `rates`. */
export interface PromptTier {
  aboveTokens: number;
  rates: TokenRates;
}

export interface PriceRow {
  /** The id as written in the price file (the canonical id the usage's model resolved to). */
  model: string;
  /** YYYY-MM-DD: the file the row came from. */
  effectiveFrom: string;
  provider: string;
  base: TokenRates;
  /** Ascending by `aboveTokens`. */
  tiers: PromptTier[];
  /** 1 on models without data-residency pricing. */
  usGeoMultiplier: number;
  /** Integer pico-dollars per web search request, or null when the row has no price for it. */
  webSearchPerRequest: number | null;
  entry: LiteLLMEntry;
}

export interface PriceTable {
  /** The row in force for `model` at `timestampMs` (the latest file dated ≤ that UTC day naming it), or null. */
  lookup(model: string, timestampMs: number): PriceRow | null;
  /** Every model id named by any file, sorted. */
  models(): string[];
}

export interface PriceFile {
  /** YYYY-MM-DD (UTC): the rows hold from this day on. */
  effectiveFrom: string;
  /** The parsed JSON of the file: model id → LiteLLM row. */
  rows: unknown;
  /** Shown in errors; defaults to `effective/<effectiveFrom>.json`. */
  name?: string;
}

export class PriceTableError extends Error {
  constructor(readonly issues: string[]) {
    super(`invalid price table: ${issues.join('; ')}`);
    this.name = 'PriceTableError';
  }
}

/** LiteLLM's own documentation row at the top of its file; never a model. */
const LITELLM_SAMPLE_KEY = 'sample_spec';

/** Provider prefixes tolerated in front of a model id, and the `litellm_provider` the row must then have. */
const PROVIDER_PREFIXES: ReadonlyArray<readonly [string, string]> = [
  ['anthropic/', 'anthropic'],
  ['openai/', 'openai'],
];

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAY_MS = 86_400_000;
/** Model-and-day answers lookup keeps (a year of one model is 365). */
const MAX_REMEMBERED_LOOKUPS = 4096;
/** `-20250929` (Anthropic) or `-2025-08-07` (OpenAI) at the end of a model id. */
const DATE_SUFFIX_RE = /-(?:\d{8}|\d{4}-\d{2}-\d{2})$/;
/** `[1m]`-style suffix Claude Code puts on a model id. */
const BRACKET_SUFFIX_RE = /\[[^\]]*\]$/;
/** Keys that carry a prompt-size tier, e.g. `cache_read_input_token_cost_above_200k_tokens`. */
const TIER_KEY_RE =
  /^(input_cost_per_token|output_cost_per_token|cache_creation_input_token_cost|cache_creation_input_token_cost_above_1hr|cache_read_input_token_cost)_above_(\d+)(k?)_tokens$/;

function isRealDate(s: string): boolean {
  const m = DATE_RE.exec(s);
  if (!m) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

/** USD per unit → integer pico-dollars per unit. */
function pico(usd: number): number {
  return Math.round(usd * 1e12);
}

function picoOrNull(usd: number | undefined): number | null {
  return usd === undefined ? null : pico(usd);
}

function webSearchPrice(v: LiteLLMEntry['search_context_cost_per_query']): number | null {
  if (v === undefined) return null;
  if (typeof v === 'number') return pico(v);
  // Anthropic charges per search whatever the context size; take medium, then any.
  const usd = v.search_context_size_medium ?? v.search_context_size_low ?? v.search_context_size_high;
  return usd === undefined ? null : pico(usd);
}

function formatZodIssues(error: z.ZodError): string {
  return error.issues
    .map((i) => (i.path.length > 0 ? `${i.path.map(String).join('.')}: ${i.message}` : i.message))
    .join(', ');
}

interface TierFields {
  input?: number;
  output?: number;
  cacheWrite5m?: number;
  cacheWrite1h?: number;
  cacheRead?: number;
}

const TIER_FIELD: Record<string, keyof TierFields> = {
  input_cost_per_token: 'input',
  output_cost_per_token: 'output',
  cache_creation_input_token_cost: 'cacheWrite5m',
  cache_creation_input_token_cost_above_1hr: 'cacheWrite1h',
  cache_read_input_token_cost: 'cacheRead',
};

/** Validates one row; pushes `<file>: <model>: <problem>` issues and returns null when it is unusable. */
function buildRow(fileName: string, effectiveFrom: string, model: string, raw: unknown, issues: string[]): PriceRow | null {
  const where = `${fileName}: ${model}`;
  const parsed = LiteLLMEntrySchema.safeParse(raw);
  if (!parsed.success) {
    issues.push(`${where}: ${formatZodIssues(parsed.error)}`);
    return null;
  }
  const entry = parsed.data;
  const tierFields = new Map<number, TierFields>();
  let ok = true;
  for (const [key, value] of Object.entries(entry)) {
    const m = TIER_KEY_RE.exec(key);
    if (!m) continue;
    const [, field, digits, k] = m;
    if (field === undefined || digits === undefined) continue;
    const usd = usdPrice.safeParse(value);
    if (!usd.success) {
      issues.push(`${where}: ${key}: expected a price ≥ 0 in USD per token`);
      ok = false;
      continue;
    }
    const above = Number(digits) * (k === 'k' ? 1000 : 1);
    const fields = tierFields.get(above) ?? {};
    const name = TIER_FIELD[field];
    if (name !== undefined) fields[name] = usd.data;
    tierFields.set(above, fields);
  }
  const tiers: PromptTier[] = [];
  for (const [above, f] of [...tierFields.entries()].sort((a, b) => a[0] - b[0])) {
    if (f.input === undefined || f.output === undefined) {
      issues.push(
        `${where}: the ${above}-token prompt tier needs both input_cost_per_token_above_… and output_cost_per_token_above_…`,
      );
      ok = false;
      continue;
    }
    tiers.push({
      aboveTokens: above,
      rates: {
        input: pico(f.input),
        output: pico(f.output),
        cacheWrite5m: picoOrNull(f.cacheWrite5m),
        cacheWrite1h: picoOrNull(f.cacheWrite1h),
        cacheRead: picoOrNull(f.cacheRead),
      },
    });
  }
  if (!ok) return null;
  return {
    model,
    effectiveFrom,
    provider: entry.litellm_provider,
    base: {
      input: pico(entry.input_cost_per_token),
      output: pico(entry.output_cost_per_token),
      cacheWrite5m: picoOrNull(entry.cache_creation_input_token_cost),
      cacheWrite1h: picoOrNull(entry.cache_creation_input_token_cost_above_1hr),
      cacheRead: picoOrNull(entry.cache_read_input_token_cost),
    },
    tiers,
    usGeoMultiplier: entry.sleds_us_geo_multiplier ?? 1,
    webSearchPerRequest: webSearchPrice(entry.search_context_cost_per_query),
    entry,
  };
}

/**
 * Builds the table from every dated file. Throws a `PriceTableError` listing each problem as
 * `<file>: <model>: <what is wrong>` (all of them, not just the first).
 */
export function buildPriceTable(files: ReadonlyArray<PriceFile>): PriceTable {
  const issues: string[] = [];
  const seenDates = new Map<string, string>();
  /** model → its rows, ascending by effectiveFrom. */
  const byModel = new Map<string, PriceRow[]>();

  const sorted = [...files].sort((a, b) => (a.effectiveFrom < b.effectiveFrom ? -1 : a.effectiveFrom > b.effectiveFrom ? 1 : 0));
  for (const file of sorted) {
    const fileName = file.name ?? `effective/${file.effectiveFrom}.json`;
    if (!isRealDate(file.effectiveFrom)) {
      issues.push(`${fileName}: effectiveFrom "${file.effectiveFrom}" is not a YYYY-MM-DD date`);
      continue;
    }
    const earlier = seenDates.get(file.effectiveFrom);
    if (earlier !== undefined) {
      issues.push(`${fileName}: same effective date as ${earlier}; put the rows of one date in one file`);
      continue;
    }
    seenDates.set(file.effectiveFrom, fileName);
    const rows = file.rows;
    if (typeof rows !== 'object' || rows === null || Array.isArray(rows)) {
      issues.push(`${fileName}: expected an object of model id → LiteLLM row`);
      continue;
    }
    for (const [model, raw] of Object.entries(rows as Record<string, unknown>)) {
      if (model === LITELLM_SAMPLE_KEY) continue;
      const row = buildRow(fileName, file.effectiveFrom, model, raw, issues);
      if (row === null) continue;
      const list = byModel.get(model) ?? [];
      list.push(row);
      byModel.set(model, list);
    }
  }
  if (issues.length > 0) throw new PriceTableError(issues);

  function inForce(model: string, day: string, provider: string | null): PriceRow | null {
    const rows = byModel.get(model);
    if (rows === undefined) return null;
    let found: PriceRow | null = null;
    for (const row of rows) {
      if (row.effectiveFrom > day) break;
      found = row;
    }
    if (found !== null && provider !== null && found.provider !== provider) return null;
    return found;
  }

  /**
   * What lookup found, per model and UTC day: a backfill prices every reply of a year's history, and the answer changes
   * only with the day. The table never changes once built. Bounded, so a history of made-up model names cannot grow it.
   */
  const remembered = new Map<string, Map<number, PriceRow | null>>();
  let rememberedEntries = 0;

  function lookupByName(model: string, timestampMs: number): PriceRow | null {
    const day = new Date(timestampMs).toISOString().slice(0, 10);

    // Exact id first, then peel off, in order: a provider prefix, a `[1m]`-style suffix, a date suffix.
    let name = model;
    let provider: string | null = null;
    const exact = inForce(name, day, null);
    if (exact !== null) return exact;
    for (const [prefix, prov] of PROVIDER_PREFIXES) {
      if (name.startsWith(prefix)) {
        name = name.slice(prefix.length);
        provider = prov;
        const hit = inForce(name, day, provider);
        if (hit !== null) return hit;
        break;
      }
    }
    if (BRACKET_SUFFIX_RE.test(name)) {
      name = name.replace(BRACKET_SUFFIX_RE, '');
      const hit = inForce(name, day, provider);
      if (hit !== null) return hit;
    }
    if (DATE_SUFFIX_RE.test(name)) {
      name = name.replace(DATE_SUFFIX_RE, '');
      const hit = inForce(name, day, provider);
      if (hit !== null) return hit;
    }
    return null;
  }

  return {
    lookup(model: string, timestampMs: number): PriceRow | null {
      // Outside these a Date is invalid (ECMA-262 time values are within ±8.64e15 ms).
      if (!Number.isFinite(timestampMs) || Math.abs(timestampMs) > 8.64e15) return null;
      const dayIndex = Math.floor(timestampMs / DAY_MS);
      let days = remembered.get(model);
      const hit = days?.get(dayIndex);
      if (hit !== undefined) return hit;
      const row = lookupByName(model, timestampMs);
      if (rememberedEntries >= MAX_REMEMBERED_LOOKUPS) {
        remembered.clear();
        rememberedEntries = 0;
        days = undefined;
      }
      if (days === undefined) remembered.set(model, (days = new Map()));
      days.set(dayIndex, row);
      rememberedEntries++;
      return row;
    },
    models(): string[] {
      return [...byModel.keys()].sort();
    },
  };
}
