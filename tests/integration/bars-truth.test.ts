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

function line(session: string, fiveHourPct: number): string {
  return JSON.stringify({
    session_id: session,
    cwd: '/tmp',
    model: { id: 'claude-opus-5-5', display_name: 'Opus' },
    rate_limits: { five_hour: { used_percentage: fiveHourPct, resets_at: resetsAt }, seven_day: { used_percentage: 30, resets_at: resetsAt + 4 * 86400 } },
  });
}

async function render(w: SledsWorld, session: string, pct: number): Promise<string> {
  const r = await sleds(w, ['statusline'], line(session, pct), { FORCE_COLOR: '1' });
  expect(r.code).toBe(0);
  return r.stdout;
}

async function atWall(w: SledsWorld, session: string): Promise<string> {
  await render(w, session, 100);
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
});
