/** Time is injected: musher reads it only through a Clock, so tests can drive it. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
