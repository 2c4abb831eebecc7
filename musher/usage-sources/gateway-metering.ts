import type { Log } from '../log.js';
import { NO_PROGRESS, type SourceProgress, type UsageSource } from './port.js';

/** What the metering needs of the gateway service (musher/gateway/service.ts). */
export interface MeteredGateway {
  startIfConfigured(): Promise<unknown>;
  close(): Promise<void>;
  state(): { running: boolean; url: string | null };
}

/**
 * The gateway's metering as a usage source: every reply the platform key buys through musher's gateway is priced
 * and kept as it streams (musher/gateway/server.ts). Starting it is listening, which happens only once a platform
 * key is configured; a kick listens if a key was set since.
 */
export class GatewayMeteringSource implements UsageSource {
  readonly id = 'gateway';
  private closed: Promise<void> | null = null;

  constructor(
    private readonly gateway: MeteredGateway,
    private readonly log: Log,
  ) {}

  /** Always: the gateway is musher's own; whether it listens is the platform key's (describe says). */
  detect(): boolean {
    return true;
  }

  /** Listens in the background when a key is configured: musher's start does not wait on the secret store. */
  start(): Promise<void> {
    this.kick();
    return Promise.resolve();
  }

  kick(): void {
    if (this.closed) return;
    this.gateway.startIfConfigured().catch((e: Error) => this.log.error(`gateway did not start: ${e.message}`));
  }

  progress(): SourceProgress {
    return NO_PROGRESS;
  }

  stop(): Promise<void> {
    this.closed ??= this.gateway.close();
    return this.closed;
  }

  describe(): string {
    const s = this.gateway.state();
    return s.running ? `gateway: listening on ${s.url}, metering the platform key` : "gateway: not listening (no platform key — 'sleds key set anthropic' or openai starts it)";
  }
}
