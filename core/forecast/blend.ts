/**
 * Falling back towards linear pace where the model is unsure. Pure, constant time.
 *
 * Linear pace (used × window ÷ elapsed) is the forecast every statusline script shows: crude, but it averages
 * the whole window, so it is hard to fool with one burst or one quiet spell. The model (forecast.ts) reads the
 * recent rate and the seat's hours, and says how unsure it is (σ of log time-to-crossing). The two are combined
 * in log time-to-crossing, each weighted by the inverse of its variance: the model's σ from its own spread, pace's
 * a constant (`paceSigma`). A confident model wins; an unsure one (few readings, slopes that disagree, a far
 * horizon) leans on pace.
 */

/** The time to the crossing at linear pace, ms: null when the bar has not moved or the window start is unknown. */
export function linearPaceToCrossingMs(usedPct: number, elapsedMs: number): number | null {
  if (!(usedPct > 0) || usedPct >= 100 || !(elapsedMs > 0)) return null;
  return (elapsedMs * (100 - usedPct)) / usedPct;
}

/** The model's weight, σ_pace² ÷ (σ_pace² + σ_model²), in [0, 1]; 1 when pace is unknown (σ_pace = ∞). */
export function modelWeight(sigmaModel: number, sigmaPace: number): number {
  if (!Number.isFinite(sigmaPace)) return 1;
  const m = sigmaModel * sigmaModel;
  const p = sigmaPace * sigmaPace;
  return m + p > 0 ? p / (m + p) : 1;
}

/** The blended time to the crossing: exp(w·ln model + (1 − w)·ln pace); the model's alone without pace. */
export function blendToCrossing(modelMs: number, paceMs: number | null, weight: number): number {
  if (paceMs === null || !(paceMs > 0) || !(modelMs > 0)) return modelMs;
  const w = Math.min(1, Math.max(0, weight));
  return Math.exp(w * Math.log(modelMs) + (1 - w) * Math.log(paceMs));
}
