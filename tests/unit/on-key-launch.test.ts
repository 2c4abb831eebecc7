import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ResumePlan } from '../../harnesses/resume-plan.js';
import type { ExitDeps } from '../../musher/exits/deps.js';
import { continueOnKey, foregroundOnKey } from '../../musher/exits/on-key.js';
import type { WallRow } from '../../musher/store/wall-book.js';

/** Exits 1/4 as they launch a session on the key: what reaches the argv, and what never does. */

const SID = '0b9c2f4a-6a5e-4a8e-9a57-1f3c9d7e2b10';
const TOKEN = 'sleds_gw_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG';
const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'sl-onkey-')));

function world() {
  const minted: string[] = [];
  const ran: ResumePlan[] = [];
  const d: ExitDeps = {
    clock: { now: () => 1_700_000_000_000 },
    log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    timeZone: 'UTC',
    seat: 'dana',
    gateway: {
      mint: async (req) => {
        minted.push(req.sessionId);
        return { token: TOKEN, baseUrl: 'http://127.0.0.1:4100', openaiBaseUrl: 'http://127.0.0.1:4100/v1' };
      },
    },
    scheduler: { schedule: () => { throw new Error('not here'); }, cancelForWall: () => [] } as unknown as ExitDeps['scheduler'],
    handoff: null,
    nightJobs: null,
    resume: {
      livePane: () => ({ pane: '%3', socket: '/tmp/tmux-1000/default', claudeConfigDirEnv: null }),
      binaries: () => ({ claude: '/opt/claude', codex: null, tmux: '/usr/bin/tmux' }),
      runner: {
        paneLauncher: () => ({ command: ['/usr/bin/node', '/opt/sleds/dist/cli/main.js', 'exec-env'], envFile: '/run/sleds/env/env-0123456789abcdef01234567.json' }),
        run: async (plan) => {
          ran.push(plan);
          return { ok: true } as Awaited<ReturnType<ExitDeps['resume']['runner']['run']>>;
        },
      },
    },
    sessionCwd: () => cwd,
    sessionTranscript: () => null,
  };
  return { d, minted, ran };
}

function wall(sessionId: string): WallRow {
  return { wallId: 'jd7k2m9qa45p', sessionId, harness: 'claude-code', window: 'five_hour', resetsAtMs: null, hitAtMs: 0, signal: 'hook:StopFailure', state: 'open', snapshotId: null, snapshotNote: null, context: {} as WallRow['context'], offers: [], decision: null, choice: 'continue', choiceArg: null, chosenBy: 'user', chosenAtMs: 0, outcome: null, closedAtMs: null } as WallRow;
}

describe('continuing on the key in the pane', () => {
  it('restarts the pane with claude --resume=<id> under the exec-env wrapper; the token only in the env file', async () => {
    const { d, ran } = world();
    const taken = await continueOnKey(d, wall(SID), null);
    expect(taken.ok).toBe(true);
    await taken.after!();
    const plan = ran[0]!;
    expect(plan.args).toContain(`--resume=${SID}`);
    expect(plan.args).toContain('exec-env');
    expect(plan.args).not.toContain('-e');
    expect(plan.args.join(' ')).not.toContain(TOKEN);
    expect(plan.envFile).toEqual({ path: '/run/sleds/env/env-0123456789abcdef01234567.json', env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:4100', ANTHROPIC_AUTH_TOKEN: TOKEN, SLEDS_WALL: 'jd7k2m9qa45p' } });
  });

  it.each([['--settings={"hooks":{}}'], ['wall-sess-1']])('a stored id %j that is not a session id: refused in one line, no token minted, nothing run', async (id) => {
    const { d, minted, ran } = world();
    const taken = await continueOnKey(d, wall(id), null);
    expect(taken).toEqual({ ok: false, line: "wall jd7k2m9qa45p's session id is not one Claude Code makes (a UUID), so sleds will not pass it to the harness — resume the session by hand" });
    await expect(foregroundOnKey(d, wall(id))).rejects.toThrow(/session id is not one Claude Code makes/);
    expect(minted).toEqual([]);
    expect(ran).toEqual([]);
  });
});
