import { randomBytes } from 'node:crypto';
import type { ExitKind } from '../../core/exits/types.js';
import type { Musher } from '../app.js';
import { makeExits } from '../exits/index.js';
import type { ExitDeps } from '../exits/deps.js';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import type { PriceTable } from '../../core/price-table.js';
import { WallKeeper } from './wall-keeper.js';
import type { KeyPort, PolicyPort, SnapshotPort } from './ports.js';

export interface WallWiring {
  policy: PolicyPort;
  key: KeyPort;
  snapshot: SnapshotPort;
  exitDeps: Omit<ExitDeps, 'clock' | 'log' | 'timeZone' | 'seat'>;
}

/** The user's zone for every time on the card. */
export function localTimeZone(): string {
  return process.env.TZ && process.env.TZ !== '' ? process.env.TZ : Intl.DateTimeFormat().resolvedOptions().timeZone;
}

export function seatName(): string {
  return process.env.SLEDS_SEAT || process.env.USER || 'me';
}

/** Until a policy file says otherwise: no cheaper step, no overnight window, no caps, and every wall asks. */
export const NO_POLICY: PolicyPort = {
  forDirectory: () => ({
    cheaperModel: () => null,
    overnightWindow: () => null,
    allowance: () => ({ perDayMicros: null, perWeekMicros: null }),
    decide: () => ({ choice: 'ask' as ExitKind | 'ask', rule: null, record: null }),
    worthLevels: ['high', 'normal', 'low'],
    sources: [],
    errors: [],
  }),
  explain: () => 'no policy evaluated: every wall asks',
};

export function buildWallKeeper(m: Musher, w: WallWiring, o: { clock: Clock; log: Log; prices: PriceTable }): WallKeeper {
  const timeZone = localTimeZone();
  const seat = seatName();
  const exits = makeExits({ ...w.exitDeps, clock: o.clock, log: o.log, timeZone, seat });
  return new WallKeeper({
    clock: o.clock,
    log: o.log,
    timeZone,
    seat,
    prices: o.prices,
    sessions: m.sessions,
    usage: m.usage,
    book: m.wallBook,
    policy: w.policy,
    key: w.key,
    snapshot: w.snapshot,
    exits,
    randomBytes: (n) => randomBytes(n),
  });
}

/** Parts not wired yet answer with a clear line instead of pretending. Replaced piece by piece as they land. */
export function interimWallWiring(m: Musher): WallWiring {
  const missing = (what: string) => (): never => {
    throw new Error(`${what} is not available in this build`);
  };
  return {
    policy: NO_POLICY,
    key: { configured: async () => false, allowanceLeft: () => ({ dayMicros: null, weekMicros: null }) },
    snapshot: snapshotPort(m),
    exitDeps: {
      gateway: null,
      resume: { livePane: () => null, plan: missing('resuming a session'), run: missing('resuming a session') },
      scheduler: { schedule: missing('the scheduler'), cancelForWall: () => 0 },
      parseWhen: () => ({ ok: false, error: 'times are not understood in this build' }),
      sessionCwd: (id) => m.sessions.get(id)?.cwd ?? null,
    },
  };
}

/** The wall's snapshot: the session's transcript, git state and brief, with the bars as they stood. */
export function snapshotPort(m: Musher): SnapshotPort {
  return {
    take: async (wall, s) => {
      if (!s.cwd) return { id: null, note: "the session's folder is not known" };
      const bars = m.barsNow().bars.map((b) => ({ provider: b.provider, window: b.window, usedPct: b.usedPct, resetsAtMs: b.resetsAt, observedAtMs: b.observedAt, source: b.source }));
      const taken = await m.takeSnapshot({
        sessionId: wall.sessionId,
        harness: wall.harness,
        harnessVersion: s.version,
        model: s.model,
        cwd: s.cwd,
        transcriptPath: s.transcriptPath,
        wallId: wall.wallId,
        bars,
        bindingWindow: wall.window,
      });
      return taken ? { id: taken.id, note: taken.row.note ?? null } : { id: null, note: 'the snapshot could not be stored (the musher log says why)' };
    },
  };
}
