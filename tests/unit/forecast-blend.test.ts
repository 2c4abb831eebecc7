import { describe, expect, it } from 'vitest';
import { blendToCrossing, linearPaceToCrossingMs, modelWeight } from '../../core/forecast/blend.js';

const MIN = 60_000;

describe('blend: falling back towards linear pace where the model is unsure', () => {
  it.each<[string, number, number, number | null]>([
    ['40% after 2 h: 60 points left take 3 h', 40, 120 * MIN, 180 * MIN],
    ['the bar has not moved', 0, 60 * MIN, null],
    ['the bar is full', 100, 60 * MIN, null],
    ['no time elapsed', 10, 0, null],
  ])('linear pace: %s', (_n, used, elapsed, want) => {
    expect(linearPaceToCrossingMs(used, elapsed)).toBe(want);
  });

  it.each<[string, number, number, number]>([
    ['as unsure as pace: half each', 0.5, 0.5, 0.5],
    ['twice as unsure as pace: pace weighs 4×', 1, 0.5, 0.2],
    ['pace unknown: the model alone', 0.5, Infinity, 1],
  ])('model weight: %s', (_n, sm, sp, want) => {
    expect(modelWeight(sm, sp)).toBeCloseTo(want, 10);
  });

  it.each<[string, number, number | null, number, number]>([
    ['weight 1: the model', 60, 240, 1, 60],
    ['weight 0: pace', 60, 240, 0, 240],
    ['half and half: the geometric mean', 60, 240, 0.5, 120],
    ['no pace: the model', 60, null, 0.3, 60],
  ])('blended crossing: %s', (_n, model, pace, w, want) => {
    expect(blendToCrossing(model * MIN, pace === null ? null : pace * MIN, w) / MIN).toBeCloseTo(want, 6);
  });
});
