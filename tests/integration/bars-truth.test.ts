import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RED } from '../../core/statusline-render.js';
import { sleds, startMusher, status, waitFor, type SledsWorld } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';

/**
 * The bars tell the truth (issue 12, point 9): a newer reading of the same session wins even when it is lower, a
 * wall whose bar is back under 100% is over, and the line never shows one figure in its text and another in its colour.
 */
const newWorld = useWorlds();

const resetsAt = Math.floor(Date.now() / 1000) + 2 * 3600;

function line(session: string, fiveHourPct: number, transcriptPath?: string): string {
  return JSON.stringify({
    session_id: session,
    ...(transcriptPath ? { transcript_path: transcriptPath } : {}),
    cwd: '/tmp',
    model: { id: 'claude-opus-5-5', display_name: 'Opus' },
    rate_limits: { five_hour: { used_percentage: fiveHourPct, resets_at: resetsAt }, seven_day: { used_percentage: 30, resets_at: resetsAt + 4 * 86400 } },
  });
}

async function render(w: SledsWorld, session: string, pct: number, transcriptPath?: string): Promise<string> {
  const r = await sleds(w, ['statusline'], line(session, pct, transcriptPath), { FORCE_COLOR: '1' });
  expect(r.code).toBe(0);
  return r.stdout;
}

async function atWall(w: SledsWorld, session: string, transcriptPath?: string): Promise<string> {
  await render(w, session, 100, transcriptPath);
  const s = await waitFor('the wall to open', async () => {
    const st = await status(w);
    return st.wallBook.some((b) => b.sessionId === session && b.state === 'open') ? st : null;
  });
  return s.wallBook[0]!.wallId;
}

async function fiveHourInWalls(w: SledsWorld): Promise<number> {
  const out = JSON.parse((await sleds(w, ['walls', '--json'])).stdout) as { walls: Array<{ window: string; usedPct: number }> };
  return out.walls.find((x) => x.window === 'five_hour')!.usedPct;
}

describe('the bars tell the truth', () => {
  it('100% then 40% in the same session and window: the line is 40% and not red, the wall is over, sleds walls says 40%', async () => {
    const w = newWorld({ SLEDS_NO_AUTOSTART: '1' });
    await startMusher(w);
    const wallId = await atWall(w, 's1');
    expect((await sleds(w, ['status'])).stdout).toMatch(/→ 5-hour wall now: the bar is full until it resets/);
    const out = await render(w, 's1', 40);
    expect(out).toContain('5h 40%');
    expect(out.startsWith(RED)).toBe(false);
    expect(out).not.toContain('⛔');
    expect(await fiveHourInWalls(w)).toBe(40);
    const wall = (await status(w)).wallBook.find((b) => b.wallId === wallId)!;
    expect(wall.state).toBe('closed');
    // The next prompt goes through: no card.
    const r = await sleds(w, ['hook', 'UserPromptSubmit'], JSON.stringify({ session_id: 's1', cwd: '/tmp', hook_event_name: 'UserPromptSubmit', prompt: 'go on' }));
    expect(r.stdout).not.toMatch(/Wall: usage limit reached/);
  });

  it('a plain hold ends too when the bar is back under 100%: the next prompt goes through', async () => {
    const w = newWorld({ SLEDS_NO_AUTOSTART: '1' });
    await startMusher(w);
    await atWall(w, 's1');
    const ask = (prompt: string) => sleds(w, ['hook', 'UserPromptSubmit'], JSON.stringify({ session_id: 's1', cwd: '/tmp', hook_event_name: 'UserPromptSubmit', prompt }));
    expect(JSON.parse((await ask('/sled 2')).stdout).reason).toMatch(/hold/i);
    expect(JSON.parse((await ask('go on')).stdout).reason).toMatch(/^sled: holding until/);
    await render(w, 's1', 40);
    expect((await ask('go on')).stdout).not.toMatch(/holding|Wall:/);
    expect((await status(w)).wallBook[0]!.state).toBe('closed');
  });

  it("another session's lower reading does not lower the bar, and its line shows the figure musher trusts, with its source and age", async () => {
    const w = newWorld({ SLEDS_NO_AUTOSTART: '1' });
    await startMusher(w);
    await atWall(w, 's1');
    const out = await render(w, 's2', 40);
    // One figure: the one the colour is from.
    expect(out.startsWith(RED)).toBe(true);
    expect(out).not.toContain('5h 40%');
    expect(out).toMatch(/5h 100% \(statusline, \S+ ago\)/);
    expect(await fiveHourInWalls(w)).toBe(100);
  });

  it('before any bar is read, sleds status says where the bars will come from (not that API-key sessions have none)', async () => {
    const w = newWorld({ SLEDS_NO_AUTOSTART: '1' });
    await startMusher(w);
    const out = (await sleds(w, ['status'])).stdout;
    expect(out).not.toContain('API-key sessions have no plan bars');
    expect(out).toContain("Bars: not read yet — they come with the statusline of Claude Code's next reply, or the usage endpoint's poll (");
  });

  it("two accounts' readings never mix: each session's line, the walls and sleds bars show its own account's figure", async () => {
    const w = newWorld({ SLEDS_NO_AUTOSTART: '1' });
    await startMusher(w);
    // jake's own config dir (musher's) is at 100%; a second config dir, signed in to another account, is at 40%.
    const work = join(w.home, '.claude-work');
    mkdirSync(join(work, 'projects', '-tmp'), { recursive: true });
    writeFileSync(join(work, '.claude.json'), JSON.stringify({ oauthAccount: { accountUuid: 'acc-work', organizationUuid: 'org-w', emailAddress: 'jake@work.example' } }));
    const own = join(w.claudeDir, 'projects', '-tmp', 's1.jsonl');
    const other = join(work, 'projects', '-tmp', 's2.jsonl');
    const wallId = await atWall(w, 's1', own);
    const second = await render(w, 's2', 40, other);
    expect(second).toContain('5h 40%');
    expect(second.startsWith(RED)).toBe(false);
    expect(second).not.toContain('⛔');
    // The full account's line stays red with its own figure, and its wall stays open.
    const first = await render(w, 's1', 100, own);
    expect(first.startsWith(RED)).toBe(true);
    expect(first).toContain('5h 100%');
    expect((await status(w)).wallBook.find((b) => b.wallId === wallId)!.state).toBe('open');
    // Each account's bar, named.
    const listed = JSON.parse((await sleds(w, ['bars', '--json'])).stdout) as { bars: Array<{ window: string; usedPct: number; accountLabel: string }> };
    expect(listed.bars.filter((b) => b.window === 'five_hour').map((b) => [b.accountLabel, b.usedPct])).toEqual([
      ['~/.claude', 100],
      ['jake@work.example', 40],
    ]);
    const table = (await sleds(w, ['bars'])).stdout;
    expect(table).toMatch(/claude 5h \(jake@work\.example\)\s+40%/);
    const walls = JSON.parse((await sleds(w, ['walls', '--json'])).stdout) as { walls: Array<{ window: string; usedPct: number; accountLabel: string }> };
    expect(walls.walls.filter((x) => x.window === 'five_hour').map((x) => [x.accountLabel, x.usedPct]).sort()).toEqual([
      ['jake@work.example', 40],
      ['~/.claude', 100],
    ]);
    // The seat's card names both, each with its own figure; the wall is the full one's.
    const card = (await sleds(w, ['status'])).stdout;
    expect(card).toMatch(/~\/\.claude:\n {2}5h\s+100% .*\n {2}wk .*\n {2}→ 5-hour wall now: the bar is full .*\njake@work\.example:\n {2}5h\s+40% .*\n {2}wk .*\nToday/);
  });
});
