import type { Account } from '../../core/account.js';
import type { UsageReadings } from '../../core/usage-endpoint.js';
import type { Clock } from '../clock.js';
import { describeUsagePoller, UsagePoller, type UsagePollerOptions, type UsagePollerState } from '../quota/usage-poller.js';
import type { BarStore } from '../store/bars.js';
import type { CreditStore } from '../store/credits.js';
import type { Db } from '../store/db.js';
import { NO_PROGRESS, type SourceProgress, type UsageSource } from './port.js';

const PROVIDER = 'anthropic';

export interface UsageEndpointRecorderDeps {
  db: Db;
  bars: BarStore;
  credits: CreditStore;
  /** The endpoint is asked with the credentials of musher's own config dir: its bars are that account's. */
  account(): Account;
}

/** A good answer of Claude's usage endpoint, kept: its bars (per-model weekly ones too) and the seat's credits, in one transaction. */
export function recordUsageEndpoint(deps: UsageEndpointRecorderDeps, r: UsageReadings): void {
  const account = deps.account();
  deps.db.transaction(() => {
    for (const b of r.bars) {
      deps.bars.record({ provider: PROVIDER, account: account.key, accountLabel: account.label, window: b.window, usedPct: b.usedPct, resetsAt: b.resetsAtMs, observedAt: r.observedAt, source: 'usage-endpoint' });
    }
    if (r.credits) {
      deps.credits.record({
        provider: PROVIDER,
        observedAt: r.observedAt,
        enabled: r.credits.enabled,
        unlimited: null,
        currency: r.credits.currency,
        exponent: r.credits.exponent,
        usedMinor: r.credits.usedMinor,
        limitMinor: r.credits.monthlyLimitMinor,
        balanceMinor: r.credits.remainingMinor,
        utilizationPct: r.credits.utilizationPct,
        disabledReason: r.credits.disabledReason,
        source: 'usage-endpoint',
      });
    }
  })();
}

/**
 * Claude's usage endpoint as a usage source: the poller (musher/quota/usage-poller.ts) asks it at most every 180 s
 * and each good answer is recorded here. A kick asks the poller to look now; it still sends nothing before its floor
 * or its backoff allows.
 */
export class UsageEndpointSource implements UsageSource {
  readonly id = 'usage-endpoint';
  readonly poller: UsagePoller;

  constructor(
    poller: Omit<UsagePollerOptions, 'onReadings' | 'clock'>,
    recorder: UsageEndpointRecorderDeps,
    private readonly clock: Clock,
  ) {
    this.poller = new UsagePoller({ ...poller, clock, onReadings: (r) => recordUsageEndpoint(recorder, r) });
  }

  /** There is a login to poll with, as far as the poller has looked (before its first look: yes, it sends nothing without one). */
  detect(): boolean {
    const c = this.poller.state().credentials;
    return c !== 'missing' && c !== 'no-token';
  }

  start(): Promise<void> {
    this.poller.start();
    return Promise.resolve();
  }

  kick(): void {
    this.poller.kick();
  }

  progress(): SourceProgress {
    return NO_PROGRESS;
  }

  stop(): Promise<void> {
    return this.poller.stop();
  }

  state(): UsagePollerState {
    return this.poller.state();
  }

  describe(): string {
    return describeUsagePoller(this.poller.state(), this.clock.now());
  }
}
