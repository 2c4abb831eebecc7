import { allowanceLeft, zoneUtcOffset } from '../gateway/allowance.js';
import { PLATFORM_KEY_SECRETS } from '../secrets/platform-keys.js';
import type { SecretStore } from '../secrets/store.js';
import type { PolicyPort } from './ports.js';
import type { WallWiring } from './wiring.js';
import { HandoffService } from '../handoff/service.js';
import { HandoffTrust } from '../handoff/trust-gate.js';
import { TrustStore, trustFilePath } from '../handoff/trust-store.js';
import type { SledsPaths } from '../../core/paths.js';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import type { NotifySettings } from '../notify/index.js';
import type { GatewayService } from '../gateway/service.js';
import type { HandoffStore } from '../store/handoffs.js';
import type { HistoryStore } from '../store/histories.js';
import type { PlatformKeyStore } from '../store/platform-key.js';
import type { RosterReader } from '../roster/reader.js';

/** What the daemon's hand-offs stand on: the stores musher opened first, and where this seat's harnesses keep their files. */
export interface DaemonHandoffDeps {
  paths: SledsPaths;
  clock: Clock;
  log: Log;
  secrets: SecretStore;
  policy: PolicyPort;
  handoffs: HandoffStore;
  histories: HistoryStore;
  roster: RosterReader;
  timeZone: string;
  claudeConfigDir: string;
  codexHome: string;
  notify?: NotifySettings;
}

/** Sealed hand-offs as the daemon runs them: sent over the repository's remote, to the teammates its roster names. */
export function daemonHandoff(d: DaemonHandoffDeps): HandoffService {
  return new HandoffService({
    paths: d.paths,
    clock: d.clock,
    log: d.log,
    secrets: d.secrets,
    handoffs: d.handoffs,
    histories: d.histories,
    timeZone: d.timeZone,
    claudeConfigDir: d.claudeConfigDir,
    codexHome: d.codexHome,
    rosterFor: (cwd) => d.roster.rosterAt(cwd),
    folderFor: (cwd) => d.policy.forDirectory(cwd).handoffFolder,
    trust: new HandoffTrust(new TrustStore(trustFilePath(d.paths), d.clock)),
    notify: d.notify,
  });
}

/** The wall as the daemon runs it: the workspace policy, the platform keys in the secret store, musher's gateway. */
export function daemonWallWiring(d: { policy: PolicyPort; secrets: SecretStore; platformKey: PlatformKeyStore; timeZone: string; gateway: GatewayService; handoff: HandoffService | null }): WallWiring {
  const { gateway, secrets } = d;
  return {
    policy: d.policy,
    handoff: d.handoff,
    key: {
      configured: async (provider) => (await secrets.get(PLATFORM_KEY_SECRETS[provider])) !== null,
      allowanceLeft: (seat, allowance, now) => allowanceLeft(d.platformKey, seat, allowance, now, zoneUtcOffset(d.timeZone)),
    },
    gateway: {
      // A token is minted when an exit needs one.
      mint: async (req) => {
        const minted = await gateway.mint({ seat: req.seat, project: req.project ?? undefined, sessionId: req.sessionId, wallId: req.wallId, ttlMs: req.ttlMs });
        if (minted.status !== 200) throw new Error(String(minted.body.error ?? `the gateway answered ${minted.status}`));
        return { token: String(minted.body.token), baseUrl: String(minted.body.baseUrl), openaiBaseUrl: String(minted.body.openaiBaseUrl) };
      },
    },
  };
}
