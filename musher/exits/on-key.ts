import { formatUsd } from '../../core/format.js';
import { allowanceLeftMicros } from '../../core/exits/continue.js';
import { CODEX_GATEWAY_TOKEN_ENV, CONTINUE_PROMPT, codexGatewayArgs, planResume, type ResumePlan } from '../../core/resume-plan.js';
import { isSessionId } from '../../core/session-id.js';
import { codexThreadProvider } from './codex-provider.js';
import type { WallRow } from '../store/wall-book.js';
import type { TakeResult } from '../walls/ports.js';
import type { ExitDeps } from './deps.js';

/** How long a gateway token minted at a wall lasts: the rest of a working day. */
const TOKEN_TTL_MS = 12 * 3_600_000;

/**
 * The env that points a resumed Claude Code at the gateway. ANTHROPIC_AUTH_TOKEN (sent as a bearer token) wins over
 * a subscriber's CLAUDE_CODE_OAUTH_TOKEN and, unlike ANTHROPIC_API_KEY, asks no "use this API key?" question in an
 * interactive session (measured on 2.1.328). The token only works against this machine's gateway: the platform key
 * itself never leaves musher.
 */
async function gatewayEnv(d: ExitDeps, wall: WallRow): Promise<Record<string, string>> {
  const { token, baseUrl } = await d.gateway!.mint({ seat: d.seat, project: null, sessionId: wall.sessionId, wallId: wall.wallId, ttlMs: TOKEN_TTL_MS });
  return { ANTHROPIC_BASE_URL: baseUrl, ANTHROPIC_AUTH_TOKEN: token, SLEDS_WALL: wall.wallId };
}

/** A stored id that is not a harness's session id never reaches an argv (nor is a token minted for it). */
function notASession(wall: WallRow): string {
  return `wall ${wall.wallId}'s session id is not one ${wall.harness === 'codex' ? 'Codex' : 'Claude Code'} makes (a UUID), so sleds will not pass it to the harness — resume the session by hand`;
}

function cwdOf(d: ExitDeps, wall: WallRow): string {
  return d.sessionCwd(wall.sessionId) ?? process.cwd();
}

/**
 * Exits 1 and 4: the same session, resumed now on the platform key through musher's gateway (4 with the cheaper
 * model). In its tmux pane when Claude Code runs in one; otherwise the answer gives `sleds go <wall>`.
 */
export async function continueOnKey(d: ExitDeps, wall: WallRow, model: string | null): Promise<TakeResult> {
  if (!d.gateway) return { ok: false, line: `the gateway is not running: set a platform key with \`sleds key set ${wall.harness === 'codex' ? 'openai' : 'anthropic'}\`, then /sled 1 again` };
  const left = wall.context.key ? allowanceLeftMicros(wall.context.key.allowanceLeft) : null;
  const allowance = left === null ? '' : ` Allowance left ${formatUsd(left)}.`;
  const via = model ? ` on ${model}` : '';
  if (wall.harness === 'codex') {
    const why = codexUnsupported(d, wall);
    if (why) return { ok: false, line: why };
    // Codex keeps no record of its terminal: the user resumes it where they like.
    return { ok: true, line: `Run \`sleds go ${wall.wallId}\` in a terminal: it resumes this Codex session${via} on the platform key.${allowance}` };
  }
  const live = d.resume.livePane(wall.sessionId);
  const bins = d.resume.binaries();
  if (live && bins.tmux && bins.claude) {
    if (!isSessionId(wall.sessionId)) return { ok: false, line: notASession(wall) };
    const plan = planResume({
      harness: 'claude-code',
      sessionId: wall.sessionId,
      cwd: cwdOf(d, wall),
      model,
      prompt: CONTINUE_PROMPT,
      env: { ...(live.claudeConfigDirEnv ? { CLAUDE_CONFIG_DIR: live.claudeConfigDirEnv } : {}), ...(await gatewayEnv(d, wall)) },
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
      line: `Continuing this session${via} on the platform key, here in this pane.${allowance}`,
      after: async () => {
        const r = await d.resume.runner.run(plan, { name: `wall-${wall.wallId}` });
        if (!r.ok) d.log.error(`wall ${wall.wallId}: restarting the pane failed (tmux exit ${r.exitCode ?? "unknown"})`);
      },
    };
  }
  return { ok: true, line: `Run \`sleds go ${wall.wallId}\` in a terminal: it resumes this session${via} on the platform key.${allowance}` };
}

/** Why a Codex thread cannot go on the gateway, or null when it can. */
function codexUnsupported(d: ExitDeps, wall: WallRow): string | null {
  const provider = codexThreadProvider(d.sessionTranscript(wall.sessionId));
  if (!provider) return "the session's rollout does not say which provider it runs on; hold (2) or defer (6) instead";
  if (provider === 'openai') {
    return 'Codex will not resume a thread signed in with ChatGPT under another provider (0.169 refuses to change a thread\'s provider); hold (2) or defer (6) instead';
  }
  return codexGatewayArgs(provider, 'http://127.0.0.1') ? null : `the thread's provider '${provider}' cannot be pointed at the gateway; hold (2) or defer (6) instead`;
}

/** `sleds go <wall>`: the interactive harness the user runs in their own terminal, resumed on the key. */
export async function foregroundOnKey(d: ExitDeps, wall: WallRow): Promise<ResumePlan> {
  if (!isSessionId(wall.sessionId)) throw new Error(notASession(wall));
  const bins = d.resume.binaries();
  const model = wall.choice === 'switch' ? (wall.context.cheaper?.model ?? null) : null;
  if (wall.harness === 'codex') {
    const why = codexUnsupported(d, wall);
    if (why) throw new Error(why);
    if (!bins.codex) throw new Error('no codex binary found — install Codex CLI or set binaries.codex in config.yml');
    const { token, openaiBaseUrl } = await d.gateway!.mint({ seat: d.seat, project: null, sessionId: wall.sessionId, wallId: wall.wallId, ttlMs: TOKEN_TTL_MS });
    const provider = codexThreadProvider(d.sessionTranscript(wall.sessionId))!;
    return planResume({
      harness: 'codex',
      sessionId: wall.sessionId,
      cwd: cwdOf(d, wall),
      model,
      prompt: CONTINUE_PROMPT,
      env: { [CODEX_GATEWAY_TOKEN_ENV]: token, SLEDS_WALL: wall.wallId },
      harnessArgs: codexGatewayArgs(provider, openaiBaseUrl)!,
      mode: 'foreground',
      claudeBin: bins.claude ?? '',
      codexBin: bins.codex,
      tmuxBin: bins.tmux ?? '',
    });
  }
  if (!bins.claude) throw new Error('no claude binary found — install Claude Code or set binaries.claude in config.yml');
  return planResume({
    harness: 'claude-code',
    sessionId: wall.sessionId,
    cwd: cwdOf(d, wall),
    model,
    prompt: CONTINUE_PROMPT,
    env: await gatewayEnv(d, wall),
    mode: 'foreground',
    claudeBin: bins.claude,
    codexBin: bins.codex ?? '',
    tmuxBin: bins.tmux ?? '',
  });
}
