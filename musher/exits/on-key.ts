import { formatUsd } from '../../core/format.js';
import { allowanceLeftMicros } from '../../core/exits/continue.js';
import type { WallRow } from '../store/wall-book.js';
import type { TakeResult } from '../walls/ports.js';
import { CONTINUE_PROMPT, type ExitDeps, type ResumeCommand } from './deps.js';

/** How long a gateway token minted at a wall lasts: the rest of a working day. */
const TOKEN_TTL_MS = 12 * 3_600_000;

/**
 * Exits 1 and 4: the same session, resumed now on the platform key through musher's gateway (4 with the cheaper
 * model). In its tmux pane when Claude Code runs in one; otherwise the answer gives `sleds go <wall>`.
 */
export async function continueOnKey(d: ExitDeps, wall: WallRow, model: string | null): Promise<TakeResult> {
  if (wall.harness !== 'claude-code') return { ok: false, line: 'continuing a Codex session on the platform key is not supported yet; hold (2) or defer (6) instead' };
  if (!d.gateway) return { ok: false, line: 'the gateway is not running: set a platform key with `sleds key set anthropic`, then /sled 1 again' };
  const plan = await planOnKey(d, wall, model, 'tmux');
  const left = wall.context.key ? allowanceLeftMicros(wall.context.key.allowanceLeft) : null;
  const allowance = left === null ? '' : ` Allowance left ${formatUsd(left)}.`;
  const via = model ? ` on ${model}` : '';
  if (plan.pane) {
    const cmd = plan.cmd;
    return {
      ok: true,
      line: `Continuing this session${via} on the platform key, here in this pane.${allowance}`,
      after: async () => {
        const r = await d.resume.run(cmd, 'tmux', `wall ${wall.wallId}`);
        if (!r.ok) d.log.error(`wall ${wall.wallId}: ${r.line}`);
      },
    };
  }
  return { ok: true, line: `Run \`sleds go ${wall.wallId}\` in a terminal: it resumes this session${via} on the platform key.${allowance}` };
}

/** The env that points a resumed Claude Code at the gateway. The token is local to this machine's gateway: the
 *  platform key itself never leaves musher. */
async function gatewayEnv(d: ExitDeps, wall: WallRow): Promise<Record<string, string>> {
  const { token, baseUrl } = await d.gateway!.mint({ seat: d.seat, project: null, sessionId: wall.sessionId, wallId: wall.wallId, ttlMs: TOKEN_TTL_MS });
  return { ANTHROPIC_BASE_URL: baseUrl, ANTHROPIC_AUTH_TOKEN: token, SLEDS_WALL: wall.wallId };
}

/** The command that resumes the wall's session on the key in its tmux pane (or headless when it has none). */
export async function planOnKey(d: ExitDeps, wall: WallRow, model: string | null, mode: "tmux" | "headless"): Promise<{ cmd: ResumeCommand; pane: { socket: string; pane: string } | null }> {
  const env = await gatewayEnv(d, wall);
  const pane = mode === 'tmux' ? d.resume.livePane(wall.sessionId) : null;
  const cmd = d.resume.plan({
    harness: wall.harness,
    sessionId: wall.sessionId,
    cwd: d.sessionCwd(wall.sessionId) ?? process.cwd(),
    model,
    prompt: CONTINUE_PROMPT,
    env,
    mode: pane ? 'tmux' : 'headless',
    tmux: pane,
  });
  return { cmd, pane };
}

/** `sleds go <wall>`: the interactive Claude Code the user runs in their own terminal, resumed on the key. */
export async function foregroundOnKey(d: ExitDeps, wall: WallRow, claudeBin: string): Promise<ResumeCommand> {
  const model = wall.choice === 'switch' ? (wall.context.cheaper?.model ?? null) : null;
  const env = await gatewayEnv(d, wall);
  const args = ['--resume', wall.sessionId, ...(model ? ['--model', model] : []), CONTINUE_PROMPT];
  return { file: claudeBin, args, env, cwd: d.sessionCwd(wall.sessionId) ?? process.cwd() };
}
