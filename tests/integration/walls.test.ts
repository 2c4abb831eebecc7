import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sleds, startMusher, type SledsWorld } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';
import { claudeAccountKey } from '../support/bar-account.js';

const newWorld = useWorlds();

const MIN = 60_000;

/** Earlier readings of the session, as the statusline would have recorded them over the last 40 minutes. */
function seedSamples(w: SledsWorld, resetsAt: number, readings: Array<[minutesAgo: number, pct: number]>): void {
  const db = new Database(join(w.sledsHome, 'data', 'sleds.db'));
  const insert = db.prepare(
    `INSERT INTO bar_samples (provider, account, window, used_pct, resets_at, observed_at, source, session_id) VALUES ('anthropic', ?, 'five_hour', ?, ?, ?, 'statusline', 's')`,
  );
  const account = claudeAccountKey(w.claudeDir, w.home);
  for (const [ago, pct] of readings) insert.run(account, pct, resetsAt, Date.now() - ago * MIN);
  db.close();
}

function statuslineJson(pct: number, resetsAt: number) {
  return JSON.stringify({
    session_id: 's',
    model: { display_name: 'Opus 5.5' },
    rate_limits: { five_hour: { used_percentage: pct, resets_at: Math.floor(resetsAt / 1000) }, seven_day: { used_percentage: 20, resets_at: Math.floor((Date.now() + 4 * 86_400_000) / 1000) } },
  });
}

describe('walls', () => {
  it('a bar climbing steadily gets a wall before its reset, in sleds walls and the statusline', async () => {
    const w = newWorld();
    await startMusher(w);
    const resetsAt = Date.now() + 2 * 3_600_000;
    seedSamples(w, resetsAt, [
      [40, 60],
      [30, 65],
      [20, 70],
      [10, 75],
    ]);
    await sleds(w, ['statusline'], statuslineJson(80, resetsAt));
    const r = await sleds(w, ['walls', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { binding: { window: string } | null; walls: Array<{ window: string; wallAt: number | null; why: string | null; resetsAt: number }> };
    const five = out.walls.find((x) => x.window === 'five_hour')!;
    expect(five.wallAt).not.toBeNull();
    expect(five.wallAt!).toBeGreaterThan(Date.now());
    expect(five.wallAt!).toBeLessThan(resetsAt);
    expect(out.binding?.window).toBe('five_hour');
    const weekly = out.walls.find((x) => x.window === 'seven_day')!;
    expect(weekly.wallAt).toBeNull();
    expect(weekly.why).toBeTruthy();

    const line = await sleds(w, ['statusline'], statuslineJson(80, resetsAt));
    expect(line.stdout).toMatch(/→ wall \d{1,2}:\d{2}[ap]m/);
    const card = JSON.parse((await sleds(w, ['hook', 'UserPromptSubmit'], JSON.stringify({ session_id: 's', prompt: '/sled status' }))).stdout).reason as string;
    expect(card).toMatch(/→ 5-hour wall at \d{1,2}:\d{2}[ap]m/);
    const human = await sleds(w, ['walls']);
    expect(human.stdout).toMatch(/claude 5-hour\s+80%\s+wall \d{1,2}:\d{2}[ap]m/);
  });

  it('a flat bar has no wall, and says why', async () => {
    const w = newWorld();
    await startMusher(w);
    const resetsAt = Date.now() + 2 * 3_600_000;
    seedSamples(w, resetsAt, [
      [40, 50],
      [30, 50],
      [20, 50],
    ]);
    await sleds(w, ['statusline'], statuslineJson(50, resetsAt));
    const out = JSON.parse((await sleds(w, ['walls', '--json'])).stdout) as { binding: unknown; walls: Array<{ window: string; wallAt: number | null; why: string | null }> };
    expect(out.binding).toBeNull();
    const five = out.walls.find((x) => x.window === 'five_hour')!;
    expect(five.wallAt).toBeNull();
    expect(five.why).toMatch(/has not risen/);
    expect((await sleds(w, ['statusline'], statuslineJson(50, resetsAt))).stdout).not.toContain('→ wall');
  });
});
