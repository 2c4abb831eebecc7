import type { Musher } from '../app.js';
import type { GatewayService } from '../gateway/service.js';
import type { GithubParts } from '../github/wiring.js';
import type { Log } from '../log.js';

/**
 * What the route handlers (musher/api/handlers.ts) see of musher: the few services and views the routes call,
 * composed by musher/compose.ts. Not the whole of musher: a route that needs more says so here.
 */
export type RouteCore = Pick<
  Musher,
  | 'clock'
  | 'timeZone'
  | 'startedAt'
  | 'answers'
  | 'handleHook'
  | 'statusline'
  | 'status'
  | 'usagePollerLine'
  | 'usagePoller'
  | 'wallForecasts'
  | 'barsNow'
  | 'wallBook'
  | 'wallKeeper'
  | 'snapshotList'
  | 'snapshotShow'
  | 'estimates'
  | 'receipts'
  | 'receiptStore'
  | 'tasks'
  | 'questions'
  | 'picker'
  | 'scheduler'
  | 'sessions'
  | 'handoff'
  | 'handoffs'
  | 'handOffSession'
  | 'pickupHandoff'
  | 'routes'
  | 'routeDefaultMode'
  | 'digestSettingsOf'
  | 'nightDigest'
  | 'nightResume'
  | 'planDigests'
  | 'nightOf'
  | 'lifecycle'
  | 'routeQuestions'
  | 'usage'
  | 'platformKey'
>;

export interface ApiServices {
  core: RouteCore;
  /** The platform-key gateway; null in a musher that runs none. */
  gateway: GatewayService | null;
  /** The GitHub parts (PR watcher, tracker intake); null in a musher that watches none. */
  github: GithubParts | null;
  log: Log;
}
