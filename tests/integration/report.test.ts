import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sleds, startMusher, status, waitFor } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';

/**
 * `sleds report` through the real CLI and a real musher that read a Claude Code history from disk (issue 16 § 3):
 * the reports a ccusage user expects, by day, week, month and session, broken down by model, project or seat, with
 * an unpriced model named and never $0.
 */
const world = useWorlds({ SLEDS_SEAT: 'dana' });

function reply(session: string, id: string, model: string, iso: string, cwd: string, u: { input: number; output: number; write: number; read: number }) {
  return JSON.stringify({
    message: { id, type: 'message', role: 'assistant', model, content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage: { input_tokens: u.input, cache_creation_input_tokens: u.write, cache_read_input_tokens: u.read, output_tokens: u.output } },
    requestId: `req_${id}`,
    type: 'assistant',
    uuid: `u-${id}`,
    timestamp: iso,
    cwd,
    sessionId: session,
    version: '2.1.328',
  });
}

describe('sleds report', { timeout: 60_000 }, () => {
  it('daily, monthly and session reports with the totals of the history, by model and project; bad input refused in one line', async () => {
    const w = world();
    const shop = join(w.claudeDir, 'projects', '-home-dev-shop');
    const api = join(w.claudeDir, 'projects', '-home-dev-api');
    mkdirSync(shop, { recursive: true });
    mkdirSync(api, { recursive: true });
    const files = [join(shop, 's-shop.jsonl'), join(api, 's-api.jsonl')];
    writeFileSync(
      files[0]!,
      [
        reply('s-shop', 'm1', 'claude-sonnet-4-6', '2026-11-29T10:00:00.000Z', '/home/dev/shop', { input: 1000, output: 500, write: 0, read: 0 }),
        // The same message written again for its second content block: counted once.
        reply('s-shop', 'm1', 'claude-sonnet-4-6', '2026-11-29T10:00:00.000Z', '/home/dev/shop', { input: 1000, output: 500, write: 0, read: 0 }),
        reply('s-shop', 'm2', 'claude-sonnet-4-6', '2026-11-30T09:00:00.000Z', '/home/dev/shop', { input: 2000, output: 100, write: 300, read: 4000 }),
      ].join('\n') + '\n',
    );
    writeFileSync(files[1]!, `${reply('s-api', 'm3', 'model-nobody-prices', '2026-11-30T11:00:00.000Z', '/home/dev/api', { input: 10, output: 20, write: 0, read: 0 })}\n`);
    await startMusher(w);
    const bytes = files.reduce((s, f) => s + readFileSync(f).length, 0);
    await waitFor('the history read', async () => {
      const s = await status(w);
      return !s.ingest.backfilling && s.ingest.bytesRead === bytes ? s : null;
    });

    const daily = await sleds(w, ['report', 'daily', '--tz', 'UTC', '--json']);
    expect(daily.code, daily.stderr + daily.stdout).toBe(0);
    const d = JSON.parse(daily.stdout) as { rows: Array<{ period: string; totalTokens: number; costMicros: number; unpricedReplies: number; unpricedModels: string[]; modelsUsed: string[] }>; totals: { totalTokens: number; costMicros: number; replies: number } };
    // Sonnet 4.6 ($3 in, $15 out, $3.75 cache write, $0.30 cache read per M): m1 = $0.0105; m2 = $0.006 + $0.0015 + $0.001125 + $0.0012.
    expect(d.rows.map((r) => [r.period, r.totalTokens, r.costMicros, r.unpricedReplies, r.unpricedModels])).toEqual([
      ['2026-11-29', 1500, 10_500, 0, []],
      ['2026-11-30', 6430, 9_825, 1, ['model-nobody-prices']],
    ]);
    expect(d.totals).toMatchObject({ totalTokens: 7930, costMicros: 20_325, replies: 3 });

    const byProject = JSON.parse((await sleds(w, ['report', 'monthly', '--by', 'project', '--tz', 'UTC', '--json'])).stdout) as { rows: Array<{ period: string; breakdown: Array<{ name: string; totalTokens: number; replies: number }> }> };
    expect(byProject.rows.map((r) => [r.period, r.breakdown.map((b) => [b.name, b.totalTokens, b.replies])])).toEqual([
      ['2026-11', [['/home/dev/shop', 7900, 2], ['/home/dev/api', 30, 1]]],
    ]);

    const sessions = JSON.parse((await sleds(w, ['report', 'session', '--since', '20261130', '--tz', 'UTC', '--json'])).stdout) as { rows: Array<{ period: string; project: string; totalTokens: number }> };
    expect(sessions.rows.map((r) => [r.period, r.project, r.totalTokens])).toEqual([
      ['s-shop', '/home/dev/shop', 6400],
      ['s-api', '/home/dev/api', 30],
    ]);

    // The human table: a row a day, the unpriced model named beside the dollars, never $0 for it.
    const text = (await sleds(w, ['report', 'daily', '--tz', 'UTC'])).stdout;
    expect(text).toMatch(/^Date\s+Input\s+Output\s+Cache create\s+Cache read\s+Total tokens\s+API-equivalent\s+On the key$/m);
    expect(text).toMatch(/^2026-11-30\s+2,010\s+120\s+300\s+4,000\s+6,430\s+<\$0\.01 \+ 1 unpriced \(model-nobody-prices\)\s+\$0\.00$/m);

    const bad = await sleds(w, ['report', 'daily', '--by', 'colour', '--json']);
    expect([bad.code, (JSON.parse(bad.stdout) as { error: string }).error]).toEqual([1, 'by: --by takes model, project or seat']);
    const badDate = await sleds(w, ['report', 'daily', '--since', 'last-week']);
    expect(badDate.stderr.trim()).toBe("sleds: --since 'last-week' is not a date: YYYYMMDD or YYYY-MM-DD");
    expect((await sleds(w, ['report', 'yearly'])).code).toBe(2);
  });
});
