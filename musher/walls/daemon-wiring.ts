import type { Musher } from '../app.js';
import { allowanceLeft, zoneUtcOffset } from '../gateway/allowance.js';
import { PLATFORM_KEY_SECRETS } from '../secrets/platform-keys.js';
import type { SecretStore } from '../secrets/store.js';
import type { PolicyPort } from './ports.js';
import type { WallWiring } from './wiring.js';
import { HandoffService } from '../handoff/service.js';
import { HandoffTrust } from '../handoff/trust-gate.js';
import { TrustStore, trustFilePath } from '../handoff/trust-store.js';
import type { SledsPaths } from '../../core/paths.js';
import type { Log } from '../log.js';
import type { NotifySettings } from '../notify/index.js';

/** The wall as the daemon runs it: the workspace policy, the platform keys in the secret store, musher's gateway. */
export function daemonWallWiring(m: Musher, policy: PolicyPort, secrets: SecretStore, o: { paths: SledsPaths; claudeConfigDir: string; codexHome: string; log: Log; notify?: NotifySettings }): WallWiring {
  const handoff = new HandoffService({
    paths: o.paths,
    clock: m.clock,
    log: o.log,
    secrets,
    handoffs: m.handoffs,
    histories: m.histories,
    timeZone: m.timeZone,
    claudeConfigDir: o.claudeConfigDir,
    codexHome: o.codexHome,
    rosterFor: (cwd) => m.roster.rosterAt(cwd),
    folderFor: (cwd) => policy.forDirectory(cwd).handoffFolder,
    trust: new HandoffTrust(new TrustStore(trustFilePath(o.paths), m.clock)),
    notify: o.notify,
  });
  m.handoff = handoff;
  return {
    policy,
    handoff,
    key: {
      configured: async (provider) => (await secrets.get(PLATFORM_KEY_SECRETS[provider])) !== null,
      allowanceLeft: (seat, allowance, now) => allowanceLeft(m.platformKey, seat, allowance, now, zoneUtcOffset(m.timeZone)),
    },
    gateway: {
      // The gateway is set on musher once it exists (main.ts); a token is minted when an exit needs one.
      mint: async (req) => {
        if (!m.gateway) throw new Error('this musher runs no gateway');
        const minted = await m.gateway.mint({ seat: req.seat, project: req.project ?? undefined, sessionId: req.sessionId, wallId: req.wallId, ttlMs: req.ttlMs });
        if (minted.status !== 200) throw new Error(String(minted.body.error ?? `the gateway answered ${minted.status}`));
        return { token: String(minted.body.token), baseUrl: String(minted.body.baseUrl), openaiBaseUrl: String(minted.body.openaiBaseUrl) };
      },
    },
  };
}
