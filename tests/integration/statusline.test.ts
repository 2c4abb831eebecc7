import { describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AMBER, RED } from '../../core/statusline-render.js';
import { sleds, startMusher, status, waitFor } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';

const world = useWorlds();

const inAnHour = Math.floor(Date.now() / 1000) + 3600;
const inFiveDays = Math.floor(Date.now() / 1000) + 5 * 86400;

function payload(fiveHourPct: number | null, extra: object = {}) {
  return JSON.stringify({
    session_id: 'sl-1',
    transcript_path: '/nowhere/sl-1.jsonl',
    cwd: '/tmp/proj',
    model: { id: 'claude-opus-5-5', display_name: 'Opus 5.5' },
    version: '2.1.328',
    cost: { total_cost_usd: 0.5, total_duration_ms: 1000 },
    context_window: { current_usage: { input_tokens: 10, output_tokens: 5 } },
    ...(fiveHourPct === null
      ? {}
      : { rate_limits: { five_hour: { used_percentage: fiveHourPct, resets_at: inAnHour }, seven_day: { used_percentage: 41, resets_at: inFiveDays } } }),
    ...extra,
  });
}

describe.each([
  ['musher running', true],
  ['musher away', false],
])('sleds statusline (%s)', (_name, running) => {
  async function line(pct: number | null, env: NodeJS.ProcessEnv = {}) {
    const w = world({ SLEDS_NO_AUTOSTART: '1' });
    if (running) await startMusher(w);
    const r = await sleds(w, ['statusline'], payload(pct), env);
    expect(r.code).toBe(0);
    expect(r.stdout.includes('(musher away)')).toBe(!running);
    return r.stdout;
  }

  it('is amber at 91.5%', async () => {
    const out = await line(91.5);
    expect(out.startsWith(AMBER)).toBe(true);
    expect(out).toContain('5h 91.5%');
    expect(out).toContain('wk 41%');
    expect(out).toContain('Opus 5.5');
  });

  it('is red at 100%', async () => {
    const out = await line(100);
    expect(out.startsWith(RED)).toBe(true);
  });

  it('is neither at 40%', async () => {
    const out = await line(40);
    expect(out).not.toContain('\x1b[');
    expect(out).toContain('5h 40%');
  });

  it('says there are no plan bars without rate_limits', async () => {
    const out = await line(null);
    expect(out).toContain('no plan bars (API key)');
    expect(out).not.toMatch(/5h|wk/);
  });

  it('honours NO_COLOR', async () => {
    const out = await line(100, { NO_COLOR: '1' });
    expect(out).not.toContain('\x1b[');
    expect(out).toContain('5h 100%');
  });
});

describe('sleds statusline --then', () => {
  it("shows the user's own statusline after ours, fed the same JSON", async () => {
    const w = world();
    await startMusher(w);
    const theirs = `node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log('THEIRS '+JSON.parse(s).session_id))"`;
    const r = await sleds(w, ['statusline', '--then', theirs], payload(40));
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain('5h 40%');
    expect(lines[1]).toBe('THEIRS sl-1');
  });
});

describe('the statusline through musher', () => {
  it('records the bars, prices the session from its transcript, and shows the bars to /sled status', async () => {
    const w = world();
    const dir = join(w.claudeDir, 'projects', '-tmp-proj');
    mkdirSync(dir, { recursive: true });
    const transcript = join(dir, 'sl-1.jsonl');
    writeFileSync(
      transcript,
      `${JSON.stringify({
        type: 'assistant',
        message: { id: 'msg_1', model: 'claude-opus-5-5', role: 'assistant', content: [{ type: 'text', text: 'hi' }], usage: { input_tokens: 100_000, output_tokens: 10_000, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } },
        requestId: 'req_1',
        uuid: 'u1',
        timestamp: new Date().toISOString(),
        sessionId: 'sl-1',
        cwd: '/tmp/proj',
      })}\n`,
    );
    await startMusher(w);
    await waitFor('the transcript to be priced', async () => ((await status(w)).totals.usageRecords === 1 ? true : null));
    const r = await sleds(w, ['statusline'], payload(62, { transcript_path: transcript }));
    // Opus 5.5: 100k × $4/M + 10k × $20/M = $0.60, this session and today.
    expect(r.stdout.trim()).toMatch(/^Opus 5\.5 · 5h 62% ↻\S+ · wk 41% ↻\S+ \S+ · \$0\.60 session · \$0\.60 today$/);

    const s = await status(w);
    expect(s.bars.map((b) => [b.window, b.usedPct, b.source])).toEqual([
      ['five_hour', 62, 'statusline'],
      ['seven_day', 41, 'statusline'],
    ]);
    const card = JSON.parse(
      (await sleds(w, ['hook', 'UserPromptSubmit'], JSON.stringify({ session_id: 'sl-1', prompt: '/sled status' }))).stdout,
    ).reason as string;
    expect(card).toMatch(/5h\s+62%\s+resets/);
    expect(card).toMatch(/wk\s+41%\s+resets/);
    expect(card).toContain('This session: $0.60');
    expect(card).toMatch(/claude-opus-5-5\s+\$0\.60/);

    // A fresh Claude Code process has no rate_limits until its first reply: musher fills in what it last saw.
    const fresh = await sleds(w, ['statusline'], JSON.stringify({ session_id: 'sl-2', model: { display_name: 'Opus 5.5' } }));
    expect(fresh.stdout).toContain('5h 62%');
  });
});
