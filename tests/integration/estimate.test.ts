import Database from 'better-sqlite3';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, sleds, startMusher, waitFor, type RunResult, type SledsWorld } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';
import { canonicalReceipt } from '../../core/receipt/canonical.js';
import type { ReceiptBody } from '../../core/receipt/receipt.js';
import type { EstimateAnswer } from '../../musher/estimate/service.js';
import { requestMusher } from '../../hooks/musher-client.js';
import { limitAhead } from '../support/limit-ahead.js';

const world = useWorlds();
const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function repoDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sleds-est-repo-'));
  dirs.push(d);
  mkdirSync(join(d, '.git'));
  return d;
}

/** `sleds …` run from a folder (the estimate reads the folder's repository). */
function sledsIn(w: SledsWorld, cwd: string, args: string[]): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...CLI, ...args], { env: w.env, cwd, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0, stdout, stderr });
    });
  });
}

/** Past receipts, as a finished task's would be stored (the estimator's history). */
function seedReceipts(w: SledsWorld, repo: string, dollars: number[], over: Partial<ReceiptBody> = {}): void {
  const db = new Database(join(w.sledsHome, 'data', 'sleds.db'));
  const insert = db.prepare(`INSERT INTO receipts (id, task_id, body, signature, signer, created_at) VALUES (?, ?, ?, NULL, NULL, ?)`);
  dollars.forEach((usd, i) => {
    const id = `seed${Math.random().toString(36).slice(2, 10)}`;
    const body: ReceiptBody = {
      v: 1, id, taskId: `task-${id}`, title: `past fix ${i}`, type: 'bugfix', repo, seat: 'dana', harness: 'claude-code',
      models: ['claude-opus-5-5'], costMicros: usd * 1_000_000, keyMicros: 0, activeMinutes: 10 + i * 5, promptChars: 300,
      filesTouched: 2, turns: 3, band: null, inBand: null, startedAt: Date.now() - 86_400_000, endedAt: Date.now() - 80_000_000, ...over,
    };
    insert.run(id, body.taskId, canonicalReceipt(body), Date.now());
  });
  db.close();
}

async function prompt(w: SledsWorld, sessionId: string, text: string, cwd: string): Promise<string> {
  const r = await sleds(w, ['hook', 'UserPromptSubmit'], JSON.stringify({ session_id: sessionId, prompt: text, cwd, hook_event_name: 'UserPromptSubmit' }));
  return r.stdout.trim() === '' ? '' : ((JSON.parse(r.stdout) as { reason?: string }).reason ?? '');
}

describe('estimate', () => {
  it('sleds estimate: no band yet with a labelled prior, then a band once five similar receipts exist', async () => {
    const w = world();
    await startMusher(w);
    const repo = repoDir();
    seedReceipts(w, repo, [4, 6]);
    seedReceipts(w, '/somewhere/else', [5, 5, 5, 5, 5, 5]);
    const early = await sledsIn(w, repo, ['estimate', 'fix the flaky login test', '--type', 'bugfix', '--model', 'claude-opus-5-5', '--json']);
    expect(early.code, early.stderr).toBe(0);
    const a = JSON.parse(early.stdout) as EstimateAnswer;
    expect(a.band).toBeNull();
    expect(a.similar).toBe(2);
    expect(a.prior).toMatchObject({ basis: 'prior', n: 0, fit: null });
    expect(a.prior!.highMicros).toBeGreaterThan(a.prior!.lowMicros);
    expect(a.text).toMatch(/^no band yet: 2 similar bugfix receipts in this repository on claude-opus \(5 needed\); a prior from the prompt's size and claude-opus-5-5's prices says \$[\d.]+–[\d.]+ · \d+–\d+ min \(labelled prior, not measured\)\.$/);

    seedReceipts(w, repo, [7, 8, 9, 12]);
    const later = await sledsIn(w, repo, ['estimate', 'fix the flaky login test', '--type', 'bugfix', '--model', 'claude-opus-5-5']);
    expect(later.code, later.stderr).toBe(0);
    expect(later.stdout.trim()).toBe(
      '$6–9 · 10–20 min · no fit yet — from 6 similar bugfix receipts in this repository on claude-opus (20th–80th percentile of API-equivalent dollars and active minutes). None of them had a band of its own yet, so how well bands hold here is not known.',
    );
    const other = await sledsIn(w, repo, ['estimate', 'add dark mode', '--type', 'feature', '--model', 'claude-opus-5-5', '--json']);
    expect((JSON.parse(other.stdout) as EstimateAnswer).band).toBeNull();
    const bad = await sledsIn(w, repo, ['estimate']);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toBe('sleds: estimate what? e.g. sleds estimate "fix the flaky login test" --type bugfix');
  });

  it('/sled estimate answers the band of the session\'s task; a task keeps the band it was given when created', async () => {
    const w = world();
    await startMusher(w);
    const repo = repoDir();
    seedReceipts(w, repo, [3, 4]);
    await prompt(w, 's1', 'Fix the checkout total rounding', repo);
    const few = await prompt(w, 's1', '/sled estimate', repo);
    expect(few).toMatch(/^sled: task [a-z2-9]{12} \(Fix the checkout total rounding\): no band yet: 2 similar receipts in this repository \(5 needed\); no prior either: no model known to price one — name one \(--model\)\.$/);

    seedReceipts(w, repo, [5, 6, 7, 8]);
    await prompt(w, 's2', 'Fix the cart badge count', repo);
    const many = await prompt(w, 's2', '/sled estimate', repo);
    expect(many).toMatch(/^sled: task [a-z2-9]{12} \(Fix the cart badge count\): \$4–7 · 10–20 min · no fit yet — from 6 similar receipts in this repository/);
    const tasks = JSON.parse((await sleds(w, ['tasks', '--json'])).stdout) as { tasks: Array<{ id: string; title: string }> };
    const cart = tasks.tasks.find((t) => t.title.startsWith('Fix the cart'))!;
    const shown = await sleds(w, ['task', cart.id, '--json']);
    expect(JSON.parse(shown.stdout)).toMatchObject({ band: { lowMicros: 4_000_000, highMicros: 7_000_000, basis: 'receipts', n: 6 } });
    const anyType = JSON.parse((await sledsIn(w, repo, ['estimate', '--json', 'x'])).stdout) as EstimateAnswer;
    expect(anyType.similar).toBe(6);

    // The route the MCP tool and the tracker call: by task id, and a body with nothing to estimate refused in one line.
    const byId = await requestMusher(w.socket, 'POST', '/v1/estimate', JSON.stringify({ taskId: cart.id.slice(0, 6) }), {}, 5000);
    expect(byId.status).toBe(200);
    expect(JSON.parse(byId.body)).toMatchObject({ band: { lowMicros: 4_000_000, n: 6 }, prior: null, similar: 6 });
    const empty = await requestMusher(w.socket, 'POST', '/v1/estimate', '{}', {}, 5000);
    expect(empty.status).toBe(400);
    expect(JSON.parse(empty.body)).toEqual({ error: 'nothing to estimate — send {text} (the request) or {taskId}' });
    const unknown = await requestMusher(w.socket, 'POST', '/v1/estimate', JSON.stringify({ taskId: 'zzzzzzzzzzzz' }), {}, 5000);
    expect(unknown.status).toBe(404);
  });

  it('a first prompt\'s task gets its band once the answer has gone, with nobody asking for it', async () => {
    const w = world();
    await startMusher(w);
    const repo = repoDir();
    seedReceipts(w, repo, [3, 4, 5, 6, 7, 8]);
    expect(await prompt(w, 's1', 'Fix the checkout total rounding', repo)).toBe('');
    // Read straight from the store: every route that shows a band would price a task still waiting for one.
    const db = new Database(join(w.sledsHome, 'data', 'sleds.db'), { readonly: true });
    try {
      const band = await waitFor('the task to be priced', () => (db.prepare(`SELECT band FROM tasks`).get() as { band: string | null } | undefined)?.band);
      expect(JSON.parse(band)).toMatchObject({ lowMicros: 4_000_000, highMicros: 7_000_000, basis: 'receipts', n: 6 });
    } finally {
      db.close();
    }
  });

  it("the wall card's remaining work comes from the band of the session's task, less what it has spent", async () => {
    const w = world({ SLEDS_NO_AUTOSTART: '1', SLEDS_SEAT: 'dana' });
    await startMusher(w);
    const had = { lowMicros: 1, highMicros: 2, lowMinutes: 1, highMinutes: 2, fit: null, basis: 'receipts' as const, n: 5 };
    // Five past tasks in /tmp (no repository there: the folder stands for it); four of five landed in their band.
    seedReceipts(w, '/tmp', [4], { type: null, activeMinutes: 20, band: had, inBand: false });
    [6, 8, 10, 12].forEach((usd, i) => seedReceipts(w, '/tmp', [usd], { type: null, activeMinutes: 30 + i * 10, band: had, inBand: true }));
    const send = (event: string, body: Record<string, unknown>) =>
      sleds(w, ['hook', event], JSON.stringify({ session_id: 'ws1', cwd: '/tmp', hook_event_name: event, ...body }));
    await send('SessionStart', { source: 'startup', model: 'claude-opus-5-5' });
    await send('UserPromptSubmit', { prompt: 'Refactor the parser into passes' });
    const d = new Database(join(w.sledsHome, 'data', 'sleds.db'));
    d.prepare(
      `INSERT INTO usage_records (dedup_key, source, session_id, model, ts, input_tokens, output_tokens, cache_write_5m, cache_write_1h, cache_read, web_searches, cost_micros)
       VALUES ('ws1:1', 'claude-transcript', 'ws1', 'claude-opus-5-5', ?, 10, 10, 0, 0, 0, 0, 1000000)`,
    ).run(Date.now() - 60_000);
    d.close();
    await send('StopFailure', { error: 'rate_limit', last_assistant_message: limitAhead().message });
    const card = await waitFor('the card at the wall', async () => {
      const r = await send('UserPromptSubmit', { prompt: 'keep going' });
      const out = r.stdout ? (JSON.parse(r.stdout) as { decision?: string; reason?: string }) : null;
      return out?.decision === 'block' ? out.reason! : null;
    });
    // Band $5.60–10.40 · 28–52 min, 4 of 5 in band; $1.00 spent so far.
    expect(card).toContain('Remaining work: $4.60–9.40 · 28–52 min · 80%');
  });
});
