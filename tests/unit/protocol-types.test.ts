/**
 * What musher's code returns on each route satisfies the reply the protocol promises, checked by the compiler
 * (`npm run typecheck`): a field renamed or retyped in musher/ and not in protocol/ fails here before any musher
 * runs. (The contract test then holds the real replies to the schemas at run time.)
 */
import { describe, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type { Job } from '../../musher/scheduler/job.js';
import type { JobsList } from '../../musher/scheduler/api.js';
import type { HandoffRow } from '../../musher/store/handoffs.js';
import type { TrackerItemRow } from '../../musher/store/tracker-items.js';
import type { TrackerRound } from '../../musher/tracker/intake.js';
import type { PrWatchRound } from '../../musher/github/pr-watcher.js';
import type { EstimateAnswer } from '../../musher/estimate/service.js';
import type { ForecastSnapshot } from '../../musher/forecast/forecaster.js';
import type { SnapshotListAnswer, SnapshotShowAnswer } from '../../musher/snapshot/api.js';
import type { ReceiptList } from '../../musher/receipts/api.js';
import type { TaskList } from '../../musher/tasks/api.js';
import type { UsagePollerState } from '../../musher/quota/usage-poller.js';
import type { StatusSnapshot, BarStatus } from '../../core/status.js';
import type * as R from '../../protocol/schemas.js';
import type { RouteReply } from '../../protocol/routes.js';

/** A reply type without the open index signature of a loose schema (`[k: string]: unknown`), which an interface
 *  never satisfies: what remains are the fields the protocol checks. */
type Known<T> = T extends readonly unknown[]
  ? { [K in keyof T]: Known<T[K]> }
  : T extends object
    ? { [K in keyof T as string extends K ? never : K]: Known<T[K]> }
    : T;

describe("musher's replies and the protocol's", () => {
  it('each type musher answers with is assignable to the reply the route promises', () => {
    expectTypeOf<Job>().toExtend<Known<z.infer<typeof R.JobRow>>>();
    expectTypeOf<JobsList>().toExtend<Known<RouteReply<'jobs'>>>();
    expectTypeOf<{ job: Job }>().toExtend<Known<RouteReply<'jobCreate'>>>();
    expectTypeOf<HandoffRow>().toExtend<Known<z.infer<typeof R.HandoffRow>>>();
    expectTypeOf<{ now: number; handoffs: HandoffRow[] }>().toExtend<Known<RouteReply<'handoffs'>>>();
    expectTypeOf<{ now: number; items: TrackerItemRow[] }>().toExtend<Known<RouteReply<'tracker'>>>();
    expectTypeOf<TrackerRound>().toExtend<Known<RouteReply<'trackerPoll'>>>();
    expectTypeOf<PrWatchRound>().toExtend<Known<RouteReply<'githubWatch'>>>();
    expectTypeOf<EstimateAnswer>().toExtend<Known<RouteReply<'estimate'>>>();
    expectTypeOf<ForecastSnapshot>().toExtend<Known<RouteReply<'walls'>>>();
    expectTypeOf<SnapshotListAnswer>().toExtend<Known<RouteReply<'snapshots'>>>();
    expectTypeOf<SnapshotShowAnswer>().toExtend<Known<RouteReply<'snapshot'>>>();
    expectTypeOf<ReceiptList>().toExtend<Known<RouteReply<'receipts'>>>();
    expectTypeOf<TaskList>().toExtend<Known<RouteReply<'tasks'>>>();
    expectTypeOf<StatusSnapshot>().toExtend<Known<RouteReply<'status'>>>();
    expectTypeOf<{ now: number; bars: BarStatus[] }>().toExtend<Known<RouteReply<'bars'>>>();
    expectTypeOf<{ line: string; state: UsagePollerState | null }>().toExtend<Known<RouteReply<'usagePoller'>>>();
  });
});
