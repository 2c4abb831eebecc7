/**
 * Every node lands with its signed receipt (issue 14 § 12), on the engine world (tests/support/engine-world.ts): real
 * SQLite, real git, detached "plain" agents whose streams report their tokens, and the fake GitHub in which the test
 * plays the reviewer and the person who merges. The receipt is on the node's row and in its PR; a node sent back by
 * a review and verified again updates its PR's body with the new receipt; the route's line shows the real figures.
 */
import { generateKeyPairSync } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { priceUsage } from '../../core/pricing.js';
import { receiptLineIn } from '../../core/receipt/pr-block.js';
import { NodeReceipt } from '../../core/routes/route-line.js';
import { ZERO_TOKEN_COUNTS } from '../../core/usage.js';
import { routeVerbs } from '../../musher/engine/routes-api.js';
import { rawPublicKey } from '../../musher/handoff/keys.js';
import { packageRoot } from '../../musher/package-root.js';
import { loadPriceTable } from '../../musher/prices.js';
import { verifyReceipt } from '../../musher/receipts/sign.js';
import { RouteShowReply } from '../../protocol/schemas.js';
import { drawRoute } from '../../cli/route.js';
import { pullOf, SLUG, useEngineWorlds, type World } from '../support/engine-world.js';

const { world } = useEngineWorlds();

const MODEL = 'claude-opus-4-1';
const ROUTE = `title: Large exports by email
nodes:
  - id: schema
    title: Export jobs table
    model: ${MODEL}
    band: { low_usd: 0.01, high_usd: 1, low_min: 0, high_min: 60, confidence: 0.8 }
    brief: |
      Add the table.
      @write schema.sql create table export_jobs (id int);
`;

/** What the node's streams say it used, priced as a reader of the streams would (the `tokens` records of every run). */
function pricedStreams(w: World, node: string): { micros: number; runs: number } {
  const table = loadPriceTable(packageRoot());
  const dir = join(w.root, 'runs', 'eng-503', node);
  let micros = 0;
  const runs = readdirSync(dir);
  for (const run of runs) {
    for (const line of readFileSync(join(dir, run, 'stdout.jsonl'), 'utf8').split('\n')) {
      if (!line.includes('"tokens"')) continue;
      const t = JSON.parse(line) as { in: number; out: number };
      const cost = priceUsage(table, { ...ZERO_TOKEN_COUNTS, inputTokens: t.in, outputTokens: t.out, serviceTier: null, inferenceGeo: null, source: 't', dedupKey: 't', sessionId: 't', model: MODEL, timestampMs: w.clock.now(), cwd: null });
      if (!cost.priced) throw new Error(cost.reason);
      micros += cost.costMicros;
    }
  }
  return { micros, runs: runs.length };
}

const receiptOf = (w: World, node: string) => NodeReceipt.parse(w.store.node('eng-503', node)!.receipt);

describe('a route node lands with its signed receipt', { timeout: 120_000 }, () => {
  it('on its row (verified with the seat’s key) and in its PR; a review’s send-back updates the PR with the new receipt; the route line has the figures', async () => {
    const privateKey = generateKeyPairSync('ed25519').privateKey;
    const key = { privateKey, publicKey: rawPublicKey(privateKey) };
    const w = await world({ route: ROUTE, checks: { check: 'node check.mjs schema.sql:export_jobs' }, signingKey: key, seat: 'dana', host: 'host-a' });

    await w.until(() => w.state('schema') === 'AWAITING_MERGE', 'schema awaiting merge');
    const row = w.store.node('eng-503', 'schema')!;
    // Signed by the seat: the stored JSON verifies with its public key.
    expect(verifyReceipt(row.receipt)).toEqual({ ok: true, signer: key.publicKey });
    const first = receiptOf(w, 'schema');
    const once = pricedStreams(w, 'schema');
    expect(once.runs).toBe(1);
    expect(first.body).toMatchObject({ taskId: 'eng-503/schema', seat: 'dana', harness: 'plain', models: [MODEL], costMicros: once.micros, turns: 1, inBand: true });
    expect(first.body.activeMinutes).toBe(Math.round(row.run.runtimeMs / 600) / 100);
    expect(first).toMatchObject({ host: 'host-a', unpriced: [] });
    expect(once.micros).toBeGreaterThan(0);

    // The PR carries it in its block.
    const n = pullOf(w, 'schema')!;
    const firstLine = receiptLineIn(w.gh.pull(SLUG, n)!.body);
    expect(firstLine).toMatch(new RegExp(`^\\d+ min · \\$0\\.02 · in band · seat dana · plain · ${MODEL} · signed$`));

    // `sleds route show`: the node's receipt line beside its PR, and the reply still parses as the protocol says.
    const verbs = routeVerbs({ store: w.store, harnesses: ['plain'], defaultMode: () => 'auto' });
    const shown = RouteShowReply.parse(verbs.show('eng-503').body);
    expect(shown.waves[0]![0]).toMatchObject({ nodeId: 'schema', prNumber: n, receipt: firstLine });
    expect(drawRoute(shown)).toMatch(new RegExp(`schema .* · PR #${n} · armed\n +receipt: ${firstLine!.replace(/[$.+]/g, '\\$&')}\n`));

    // A reviewer asks for changes: the node goes back to its session, is verified again, and its PR body is PATCHed.
    w.gh.requestChanges(SLUG, n, { author: 'li', body: 'Name the index too.' });
    await w.until(() => receiptOf(w, 'schema').body.id !== first.body.id && w.state('schema') === 'AWAITING_MERGE', 'schema verified again');
    const twice = pricedStreams(w, 'schema');
    expect(twice.runs).toBe(2);
    const second = receiptOf(w, 'schema');
    expect(verifyReceipt(w.store.node('eng-503', 'schema')!.receipt)).toEqual({ ok: true, signer: key.publicKey });
    // Both runs' usage, each counted once.
    expect(second.body).toMatchObject({ costMicros: twice.micros, turns: 2 });
    expect(twice.micros).toBe(2 * once.micros);
    const patches = w.gh.requests.filter((r) => r.method === 'PATCH' && r.path === `/repos/${SLUG}/pulls/${n}`);
    expect(patches).toHaveLength(1);
    const secondLine = receiptLineIn(w.gh.pull(SLUG, n)!.body);
    expect(secondLine).toMatch(new RegExp(`^\\d+ min · \\$0\\.05 · in band · seat dana · plain · ${MODEL} · signed$`));
    expect(w.gh.pull(SLUG, n)!.body!.match(/<!-- sleds:receipt -->/g)).toHaveLength(1);

    // The person merges: the route's line is the receipts' sums against the band.
    w.gh.mergePull(SLUG, n, 'dana');
    await w.until(() => w.state('schema') === 'COMPLETED', 'schema landed');
    const line = RouteShowReply.parse(verbs.show('eng-503').body).line;
    expect(line).toBe(`${Math.round(second.body.activeMinutes)} min · $0.05 · in band for eng-503, across 1 node and 1 machine`);
    expect(w.gh.mergeCalls).toEqual([]);
  });

  it('a node stopped after its verification, before its receipt and its PR, gets both when the engine comes back', async () => {
    const privateKey = generateKeyPairSync('ed25519').privateKey;
    const key = { privateKey, publicKey: rawPublicKey(privateKey) };
    const w = await world({ route: ROUTE, checks: { check: 'node check.mjs schema.sql:export_jobs' }, signingKey: key, seat: 'dana', host: 'host-a' });
    await w.until(() => w.state('schema') === 'AWAITING_MERGE', 'schema awaiting merge');
    const first = pullOf(w, 'schema')!;
    // As a kill -9 right after the verified step leaves it: no receipt and no PR on its row.
    w.gh.closePull(SLUG, first);
    w.db.prepare(`UPDATE route_nodes SET receipt = NULL, pr_number = NULL, pr_url = NULL WHERE route_key = 'eng-503' AND node_id = 'schema'`).run();
    await w.until(() => (pullOf(w, 'schema') ?? first) !== first, 'a new PR for schema');
    const again = pullOf(w, 'schema')!;
    expect(verifyReceipt(w.store.node('eng-503', 'schema')!.receipt)).toEqual({ ok: true, signer: key.publicKey });
    expect(receiptOf(w, 'schema').body).toMatchObject({ taskId: 'eng-503/schema', costMicros: pricedStreams(w, 'schema').micros });
    expect(receiptLineIn(w.gh.pull(SLUG, again)!.body)).toMatch(new RegExp(`^\\d+ min · \\$0\\.02 · in band · seat dana · plain · ${MODEL} · signed$`));
  });

  it('a seat without keys lands its node with an unsigned receipt that says so', async () => {
    const w = await world({ route: ROUTE, checks: { check: 'node check.mjs schema.sql:export_jobs' } });
    await w.until(() => w.state('schema') === 'AWAITING_MERGE', 'schema awaiting merge');
    expect(receiptOf(w, 'schema')).toMatchObject({ signature: null, signer: null });
    expect(receiptLineIn(w.gh.pull(SLUG, pullOf(w, 'schema')!)!.body)).toMatch(/ · unsigned — run sleds keys init$/);
  });
});
