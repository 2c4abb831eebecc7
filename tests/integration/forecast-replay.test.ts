import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeWorld, sleds, type SledsWorld } from '../support/sleds-env.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function world(): SledsWorld {
  const w = makeWorld();
  dirs.push(w.root);
  return w;
}

describe('sleds forecast replay', () => {
  it('prints one forecast per sample, none before there is enough to go on, and skips a bad line with one error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sl-trace-'));
    dirs.push(dir);
    const t0 = Date.UTC(2026, 10, 29, 9);
    // A window that opened at 08:35 at 0%, climbing 2 points every 5 minutes (10% by 09:00): it would cross 100% at
    // 12:45, before the 13:35 reset. (A bar at 10% when its window opens is no trace a harness writes: linear pace
    // would read it as a faster climb than the line's, and the forecast leans on pace where it is unsure.)
    const resets = (t0 + 275 * 60_000) / 1000;
    const lines = Array.from({ length: 12 }, (_, i) => JSON.stringify({ t: t0 + i * 5 * 60_000, window: 'five_hour', used_percentage: 10 + 2 * i, resets_at: resets }));
    lines.splice(5, 0, '{"t": "soon", "window": 3}');
    const file = join(dir, 'trace.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);

    const r = await sleds(world(), ['forecast', 'replay', file, '--json']);
    expect(r.code).toBe(0);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/trace\.jsonl:6: .* — skipped/);
    const out = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { t: number; window: string; eta: number | null; band: [number, number] | null });
    expect(out).toHaveLength(12);
    expect(out[0]).toEqual({ t: t0, window: 'five_hour', eta: null, band: null });
    const last = out[11]!;
    expect(last.eta).not.toBeNull();
    // A steady climb: the forecast crossing is near the straight line's (12:45), and the band holds it.
    expect(Math.abs(last.eta! - Date.UTC(2026, 10, 29, 12, 45))).toBeLessThan(45 * 60_000);
    expect(last.band![0]).toBeLessThanOrEqual(last.eta!);
    expect(last.band![1]).toBeGreaterThanOrEqual(last.eta!);
  });

  it('says what it needs when the trace is missing', async () => {
    const r = await sleds(world(), ['forecast', 'replay']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/which trace\?/);
  });
});
