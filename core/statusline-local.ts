import { renderStatusline, windowLabel, windowOrder, type BarView, type StatuslineView } from './statusline-render.js';

/**
 * The degraded statusline: built from Claude Code's statusline JSON alone, when musher cannot answer in time.
 * No zod here (it would cost the statusline process its start-up budget): every field is read defensively.
 */

type Json = Record<string, unknown>;

function obj(v: unknown): Json | null {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null;
}

/** The plan bars Claude Code hands the statusline (`rate_limits`), in display order. Null when there are none. */
export function barsFromStatuslineJson(json: Json): BarView[] | null {
  const limits = obj(json.rate_limits);
  if (!limits) return null;
  const bars: Array<BarView & { window: string }> = [];
  for (const [window, value] of Object.entries(limits)) {
    const w = obj(value);
    if (!w || typeof w.used_percentage !== 'number') continue;
    const resets = typeof w.resets_at === 'number' ? w.resets_at * 1000 : null;
    bars.push({ window, label: windowLabel(window), usedPct: w.used_percentage, resetsAtMs: resets, ageMs: null });
  }
  if (bars.length === 0) return null;
  bars.sort((a, b) => windowOrder(a.window) - windowOrder(b.window));
  return bars.map(({ window: _w, ...bar }) => bar);
}

/** A response has arrived (usage known) yet no bars came: the session is not on a plan (API key). */
export function looksLikeApiKeySession(json: Json): boolean {
  const ctx = obj(json.context_window);
  const cost = obj(json.cost);
  return Boolean((ctx && obj(ctx.current_usage)) || (cost && typeof cost.total_cost_usd === 'number' && cost.total_cost_usd > 0));
}

export function modelNameFromStatuslineJson(json: Json): string | null {
  const model = obj(json.model);
  if (!model) return null;
  if (typeof model.display_name === 'string') return model.display_name;
  return typeof model.id === 'string' ? model.id : null;
}

export function renderLocalStatusline(raw: string, nowMs: number, color: boolean): string {
  let json: Json = {};
  try {
    json = obj(JSON.parse(raw)) ?? {};
  } catch {
    // Render what we can: the harness must always get a line.
  }
  const cost = obj(json.cost);
  const sessionUsd = cost && typeof cost.total_cost_usd === 'number' ? cost.total_cost_usd : null;
  const view: StatuslineView = {
    modelName: modelNameFromStatuslineJson(json),
    bars: barsFromStatuslineJson(json),
    noBarsReason: looksLikeApiKeySession(json) ? 'api-key' : 'not-yet',
    session: sessionUsd === null ? null : { costMicros: Math.round(sessionUsd * 1_000_000), unpricedRecords: 0 },
    today: null,
    musherAway: true,
    nowMs,
    color,
  };
  return renderStatusline(view);
}
