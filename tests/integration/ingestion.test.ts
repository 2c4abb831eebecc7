import { describe, expect, it } from 'vitest';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeHistory } from '../../bench/gen-history.js';
import { sleds, spawnMusher, startMusher, status, waitFor, type SledsWorld } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';

const world = useWorlds();

const START = Date.UTC(2026, 10, 1);

async function idle(w: SledsWorld, expectedBytes: number) {
  return waitFor(
    'ingestion to finish',
    async () => {
      const s = await status(w);
      return !s.ingest.backfilling && s.ingest.bytesRead === expectedBytes ? s : null;
    },
    60_000,
  );
}

function assistant(session: string, id: string, model: string, extra: object = {}) {
  return JSON.stringify({
    parentUuid: null,
    isSidechain: false,
    message: { id, type: 'message', role: 'assistant', model, content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage: { input_tokens: 1000, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 500, service_tier: 'standard' } },
    requestId: `req_${id}`,
    type: 'assistant',
    uuid: `u-${id}`,
    timestamp: new Date(START + 60_000).toISOString(),
    cwd: '/p',
    sessionId: session,
    version: '2.1.328',
    ...extra,
  });
}

describe('transcript ingestion', () => {
  it('prices each message once, although Claude Code writes one record per content block', async () => {
    const w = world();
    const dir = join(w.claudeDir, 'projects', '-p');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'sess-a.jsonl');
    // Two blocks of one message (same id and requestId, usage repeated), then a second message.
    writeFileSync(file, `${assistant('sess-a', 'm1', 'claude-sonnet-4-6')}\n${assistant('sess-a', 'm1', 'claude-sonnet-4-6')}\n`);
    await startMusher(w);
    let s = await idle(w, readFileSync(file).length);
    expect(s.totals.usageRecords).toBe(1);
    // Sonnet 4.6: 1000 input × $3/M + 500 output × $15/M = $0.0105
    expect(s.totals.costMicros).toBe(10_500);
    // New bytes only: append one more message while musher runs.
    appendFileSync(file, `${assistant('sess-a', 'm2', 'claude-sonnet-4-6')}\n`);
    s = await idle(w, readFileSync(file).length);
    expect(s.totals.usageRecords).toBe(2);
    expect(s.sessions.find((x) => x.sessionId === 'sess-a')).toMatchObject({ costMicros: 21_000, usageRecords: 2 });
  });

  it('keeps the largest output count of a reply whose blocks disagree, read in one chunk as across two', async () => {
    const w = world();
    const dir = join(w.claudeDir, 'projects', '-p');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'sess-b.jsonl');
    const block = (output: number, input: number) => {
      const r = JSON.parse(assistant('sess-b', 'm1', 'claude-sonnet-4-6')) as { message: { usage: Record<string, number> } };
      r.message.usage.output_tokens = output;
      r.message.usage.input_tokens = input;
      return JSON.stringify(r);
    };
    // Blocks of one reply: 500 output, then 900 (the final count), then 700. The first block's input stands, as the
    // store's upsert keeps it; the 900-output block's own cost is what is kept with its count.
    writeFileSync(file, `${block(500, 1000)}\n${block(900, 2000)}\n${block(700, 1000)}\n`);
    await startMusher(w);
    let s = await idle(w, readFileSync(file).length);
    expect(s.totals.usageRecords).toBe(1);
    // 2000 input × $3/M + 900 output × $15/M = $0.0195 (the cost of the block whose count is kept)
    expect(s.totals.costMicros).toBe(19_500);
    // A later chunk with a smaller count changes nothing; a larger one wins again.
    appendFileSync(file, `${block(100, 1000)}\n`);
    s = await idle(w, readFileSync(file).length);
    expect(s.totals.costMicros).toBe(19_500);
    appendFileSync(file, `${block(1000, 1000)}\n`);
    s = await idle(w, readFileSync(file).length);
    // 1000 × $3/M + 1000 × $15/M = $0.018
    expect(s.totals.costMicros).toBe(18_000);
    expect(s.totals.usageRecords).toBe(1);
  });

  it('a truncated line, a 20 MB line and an unknown model each cost one log line and nothing else', async () => {
    const w = world();
    const dir = join(w.claudeDir, 'projects', '-p');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'sess-b.jsonl');
    const huge = JSON.stringify({ type: 'user', sessionId: 'sess-b', message: { role: 'user', content: 'x'.repeat(20 * 1024 * 1024) } });
    writeFileSync(
      file,
      [
        assistant('sess-b', 'm1', 'claude-opus-5-5'),
        assistant('sess-b', 'm2', 'claude-opus-5-5').slice(0, 120), // cut mid-record
        huge,
        assistant('sess-b', 'm3', 'claude-nonexistent-9'),
        assistant('sess-b', 'm4', 'claude-opus-5-5'),
      ].join('\n') + '\n',
    );
    await startMusher(w);
    const s = await idle(w, readFileSync(file).length);
    expect(s.totals.usageRecords).toBe(3); // m1, m3 (unpriced), m4
    expect(s.totals.unpricedRecords).toBe(1);
    const session = s.sessions.find((x) => x.sessionId === 'sess-b')!;
    expect(session.unpricedRecords).toBe(1);
    expect(session.costMicros).toBeGreaterThan(0);
    const errors = readFileSync(w.logFile, 'utf8').split('\n').filter((l) => l.includes(' ERROR '));
    expect(errors).toHaveLength(3);
    // Read past the file's path: a temp folder's random name can hold any letters ("…/sl-aMBx3k/…" once did).
    const said = errors.map((e) => e.slice(e.indexOf('sess-b.jsonl')));
    expect(said.some((e) => /^sess-b\.jsonl:\d+: /.test(e) && !/MB/.test(e) && !/no price/.test(e))).toBe(true);
    expect(said.some((e) => /20\.\d MB|over the 8\.\d+ MB limit/.test(e))).toBe(true);
    expect(errors.some((e) => /claude-nonexistent-9/.test(e) && /unpriced/.test(e))).toBe(true);
    for (const e of errors) expect(e.length).toBeLessThan(2100);
  });

  it('records the usage-limit record of a transcript as a wall', async () => {
    const w = world();
    const dir = join(w.claudeDir, 'projects', '-p');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'sess-w.jsonl');
    const limit = JSON.stringify({
      type: 'assistant',
      message: { id: 'msg_lim', model: '<synthetic>', role: 'assistant', stop_reason: 'stop_sequence', content: [{ type: 'text', text: "You've hit your 5-hour limit · resets 8:55pm (UTC)" }], usage: { input_tokens: 0, output_tokens: 0 } },
      requestId: 'req_lim',
      uuid: 'u-lim',
      timestamp: new Date(START).toISOString(),
      sessionId: 'sess-w',
      apiError: 'usage_limit_reached',
      apiErrorParams: { rate_limit_info: { status: 'rejected', resetsAt: 1795985705, rateLimitType: 'five_hour', overageStatus: 'rejected', isUsingOverage: false } },
      error: 'rate_limit',
      isApiErrorMessage: true,
      apiErrorStatus: 429,
    });
    writeFileSync(file, `${limit}\n`);
    await startMusher(w);
    const s = await idle(w, readFileSync(file).length);
    expect(s.walls).toHaveLength(1);
    expect(s.walls[0]).toMatchObject({ sessionId: 'sess-w', window: 'five_hour', resetsAt: 1795985705_000 });
    expect(s.totals.usageRecords).toBe(0);
  });

  it('SIGKILL mid-ingestion and a restart give the same totals as a clean run', async () => {
    const clean = world();
    // The test starts (and kills) this musher itself: a status poll must not start one of its own meanwhile.
    const killed = world({ SLEDS_NO_AUTOSTART: '1' });
    const spec = { targetBytes: 60 * 1024 * 1024, startMs: START, seed: 7 };
    const a = writeHistory({ ...spec, projectsDir: join(clean.claudeDir, 'projects') });
    const b = writeHistory({ ...spec, projectsDir: join(killed.claudeDir, 'projects') });
    expect(b.bytes).toBe(a.bytes);

    await startMusher(clean);
    const reference = await idle(clean, a.bytes);
    expect(reference.totals.usageRecords).toBe(a.messages);

    const first = spawnMusher(killed);
    const partial = await waitFor('some, not all, history read', async () => {
      const s = await status(killed);
      return s.ingest.bytesRead > 0 ? s : null;
    });
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    // Really killed mid-way: reading, or merging what a large backfill staged (its bytes may all be read by then).
    expect(partial.ingest.backfilling).toBe(true);

    await startMusher(killed);
    const after = await idle(killed, b.bytes);
    expect(after.totals).toEqual(reference.totals);
  }, 180_000);
});

describe('a big first backfill', () => {
  it('does not stop musher from answering hooks meanwhile', async () => {
    const w = world();
    const written = writeHistory({ projectsDir: join(w.claudeDir, 'projects'), targetBytes: 80 * 1024 * 1024, startMs: START, seed: 3 });
    await startMusher(w);
    const card = JSON.parse((await sleds(w, ['hook', 'UserPromptSubmit'], JSON.stringify({ session_id: 'busy', prompt: '/sled status' }))).stdout);
    expect(card.decision).toBe('block');
    const s = await status(w);
    // Answered while the history was still being read.
    expect(s.ingest.bytesRead).toBeLessThan(written.bytes);
    expect(card.reason).toMatch(/still reading history: \d+ MB to go/);
    await idle(w, written.bytes);
  }, 120_000);
});

describe('sleds status', () => {
  it('says how to start musher when it is down (and the user starts it: SLEDS_NO_AUTOSTART=1)', async () => {
    const w = world({ SLEDS_NO_AUTOSTART: '1' });
    const r = await sleds(w, ['status']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe("sleds: musher is not running — start it with 'sleds musher start' or let the next hook start it");
  });
});
