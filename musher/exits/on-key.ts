import { allowanceLeftMicros } from '../../core/exits/continue.js';
import { CONTINUE_PROMPT, planResume, type ResumePlan } from '../../harnesses/resume-plan.js';
import { builtInHarness } from '../../harnesses/registry.js';
import type { GatewayLaunch } from '../../harnesses/port.js';
import { harnessBinary } from '../resume/resume-job.js';
import { isSessionId } from '../../core/session-id.js';
import { codexThreadProvider } from './codex-provider.js';
import { decided } from './later.js';
import type { WallRow } from '../store/wall-book.js';
import type { TakeResult } from '../walls/ports.js';
import type { ExitDeps } from './deps.js';

/** How long a gateway token minted at a wall lasts: the rest of a working day. */
const TOKEN_TTL_MS = 12 * 3_600_000;

/** The session's own model provider, when its harness keeps one per session (Codex's thread provider). */
function sessionProvider(d: ExitDeps, wall: WallRow): string | null {
  return builtInHarness(wall.harness).gatewayNeedsSessionProvider ? codexThreadProvider(d.sessionTranscript(wall.sessionId)) : null;
}

/**
 * The env (and harness options) that point a resumed session at the gateway, with a token minted for its wall: the
 * harness adapter knows which variables (harnesses/<id>/index.ts gatewayLaunch). The token only works against this
 * machine's gateway: the platform key itself never leaves musher.
 */
async function gatewayLaunch(d: ExitDeps, wall: WallRow): Promise<{ env: Record<string, string>; args: string[] }> {
  const { token, baseUrl, openaiBaseUrl } = await d.gateway!.mint({ seat: d.seat, project: null, sessionId: wall.sessionId, wallId: wall.wallId, ttlMs: TOKEN_TTL_MS });
  const launch = builtInHarness(wall.harness).gatewayLaunch({ token, anthropicBaseUrl: baseUrl, openaiBaseUrl, sessionProvider: sessionProvider(d, wall) });
  if (!launch.ok) throw new Error(`${launch.why}; hold (2) or defer (6) instead`);
  return { env: { ...launch.env, SLEDS_WALL: wall.wallId }, args: launch.args };
}

/** A stored id that is not a harness's session id never reaches an argv (nor is a token minted for it). */
function notASession(wall: WallRow): string {
  return `wall ${wall.wallId}'s session id is not one ${builtInHarness(wall.harness).displayName} makes (a UUID), so sleds will not pass it to the harness — resume the session by hand`;
}

function cwdOf(d: ExitDeps, wall: WallRow): string {
  return d.sessionCwd(wall.sessionId) ?? process.cwd();
}

/**
 * Exits 1 and 4: the same session, resumed now on the platform key through musher's gateway (4 with the cheaper
 * model). In its tmux pane when Claude Code runs in one; otherwise the answer gives `sleds go <wall>`.
 */
export async function continueOnKey(d: ExitDeps, wall: WallRow, model: string | null): Promise<TakeResult> {
  const adapter = builtInHarness(wall.harness);
  if (!d.gateway) return { ok: false, line: `the gateway is not running: set a platform key with \`sleds key set ${adapter.provider}\`, then /sled 1 again` };
  const left = wall.context.key ? allowanceLeftMicros(wall.context.key.allowanceLeft) : null;
  const exit = model ? ('switch' as const) : ('continue' as const);
  const onKey = (where: 'pane' | 'terminal', harnessName: string | null) =>
    ({ ...decided(d, wall), exit, result: 'continuing', where, harnessName, model, allowanceLeftMicros: left }) as const;
  if (!adapter.resumesInPane) {
    const why = launchProblem(d, wall);
    if (why) return { ok: false, line: why };
    // Codex keeps no record of its terminal: the user resumes it where they like.
    return { ok: true, outcome: onKey('terminal', adapter.displayName) };
  }
  const live = d.resume.livePane(wall.sessionId);
  const bins = d.resume.binaries();
  if (live && bins.tmux && bins.claude) {
    if (!isSessionId(wall.sessionId)) return { ok: false, line: notASession(wall) };
    const gateway = await gatewayLaunch(d, wall);
    const plan = planResume({
      harness: wall.harness,
      sessionId: wall.sessionId,
      cwd: cwdOf(d, wall),
      model,
      prompt: CONTINUE_PROMPT,
      env: { ...(live.claudeConfigDirEnv ? { CLAUDE_CONFIG_DIR: live.claudeConfigDirEnv } : {}), ...gateway.env },
      harnessArgs: gateway.args,
      mode: 'tmux',
      tmuxPane: live.pane,
      tmuxSocket: live.socket,
      // The token reaches the pane through a 0600 file its wrapper reads and removes: never an argv (`ps`).
      paneLauncher: d.resume.runner.paneLauncher(),
      claudeBin: bins.claude,
      codexBin: bins.codex ?? '',
      tmuxBin: bins.tmux,
    });
    return {
      ok: true,
      outcome: onKey('pane', null),
      after: async () => {
        const r = await d.resume.runner.run(plan, { name: `wall-${wall.wallId}` });
        if (!r.ok) d.log.error(`wall ${wall.wallId}: restarting the pane failed (tmux exit ${r.exitCode ?? "unknown"})`);
      },
    };
  }
  return { ok: true, outcome: onKey('terminal', null) };
}

/** Why a session cannot go on the gateway (Codex: its thread's provider), or null when it can: asked before a token is minted. */
function launchProblem(d: ExitDeps, wall: WallRow): string | null {
  const probe: GatewayLaunch = builtInHarness(wall.harness).gatewayLaunch({ token: '', anthropicBaseUrl: 'http://127.0.0.1', openaiBaseUrl: 'http://127.0.0.1/v1', sessionProvider: sessionProvider(d, wall) });
  return probe.ok ? null : `${probe.why}; hold (2) or defer (6) instead`;
}

/** `sleds go <wall>`: the interactive harness the user runs in their own terminal, resumed on the key. */
export async function foregroundOnKey(d: ExitDeps, wall: WallRow): Promise<ResumePlan> {
  if (!isSessionId(wall.sessionId)) throw new Error(notASession(wall));
  const bins = d.resume.binaries();
  const model = wall.choice === 'switch' ? (wall.context.cheaper?.model ?? null) : null;
  const adapter = builtInHarness(wall.harness);
  const why = launchProblem(d, wall);
  if (why) throw new Error(why);
  const bin = harnessBinary(bins, wall.harness);
  if (!bin) throw new Error(`no ${adapter.binary.name} binary found — install ${adapter.binary.installs} or set binaries.${adapter.binary.name} in config.yml`);
  const gateway = await gatewayLaunch(d, wall);
  return planResume({
    harness: wall.harness,
    sessionId: wall.sessionId,
    cwd: cwdOf(d, wall),
    model,
    prompt: CONTINUE_PROMPT,
    env: gateway.env,
    ...(gateway.args.length > 0 ? { harnessArgs: gateway.args } : {}),
    mode: 'foreground',
    claudeBin: bins.claude ?? '',
    codexBin: bins.codex ?? '',
    tmuxBin: bins.tmux ?? '',
  });
}
