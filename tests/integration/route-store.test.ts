import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../musher/store/db.js';
import { LifecycleEvents } from '../../musher/store/lifecycle-events.js';
import { RouteStore } from '../../musher/engine/route-store.js';
import type { ParsedRoute } from '../../core/routes/route-file.js';
import { parseRouteFile } from '../../musher/engine/route-yaml.js';

/** The route store on real SQLite: two engines (two connections to one file) never both get a node. */
const T = Date.UTC(2026, 11, 2, 9);
const LEASE = 120_000;
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function clockAt(t: number) {
  const c = { t, now: () => c.t };
  return c;
}

/** Two stores on two connections to the same database file, as two engine processes would have. */
function twoEngines() {
  const dir = mkdtempSync(join(tmpdir(), 'sl-routes-'));
  const file = join(dir, 'sleds.db');
  const dbA = openStore(file);
  const dbB = openStore(file);
  cleanups.push(() => {
    dbA.close();
    dbB.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const clock = clockAt(T);
  return { a: new RouteStore(dbA, clock), b: new RouteStore(dbB, clock), events: new LifecycleEvents(dbA), clock, dbA };
}

function route(text: string, key = 'eng-503'): ParsedRoute {
  const r = parseRouteFile(text, { path: `.sleds/routes/${key}.yml`, harnesses: ['claude-code', 'codex'] });
  if (!r.ok) throw new Error(r.error);
  return r.route;
}

const FOUR = `title: Large exports by email
tracker: ENG-503
nodes:
  - id: schema
    brief: table
  - id: queue
    brief: queue
    depends_on: [schema]
  - id: ui
    brief: button
    depends_on: [schema]
  - id: mailer
    brief: mail
    depends_on: [queue]
`;
const WHERE = { repoRoot: '/repo', filePath: '/repo/.sleds/routes/eng-503.yml' };
const ids = (rows: Array<{ routeKey: string; nodeId: string }>) => rows.map((r) => `${r.routeKey}/${r.nodeId}`);

/** Drives a claimed node to COMPLETED through the run's own events. */
function land(s: RouteStore, key: string, id: string, token: number, at: number) {
  for (const e of [{ type: 'claimed' }, { type: 'prepared' }, { type: 'turn-completed', sessionId: 'sess-1' }, { type: 'verified' }, { type: 'merged' }] as const) {
    const r = s.step(key, id, token, e, at);
    if (!r.ok) throw new Error(r.error);
  }
}

describe('route store', () => {
  it('two engines race to claim the same ready node: exactly one gets a token, the other gets null', () => {
    const { a, b } = twoEngines();
    a.upsertRoute(route(FOUR), WHERE, 'auto');
    a.arm('eng-503', null);
    expect(ids(b.ready(T))).toEqual(['eng-503/schema']);
    const seenByA = a.ready(T)[0]!;
    const seenByB = b.ready(T)[0]!;
    const tokenA = a.claim(seenByA.routeKey, seenByA.nodeId, 'host-a:1', T, LEASE);
    const tokenB = b.claim(seenByB.routeKey, seenByB.nodeId, 'host-b:2', T, LEASE);
    expect([tokenA, tokenB]).toEqual([1, null]);
    const row = b.node('eng-503', 'schema')!;
    expect([row.run.state, row.leaseOwner, row.leaseExpiresAt, row.fencingToken, row.run.claims]).toEqual(['CLAIMING', 'host-a:1', T + LEASE, 1, 1]);
    expect(ids(a.ready(T))).toEqual([]);
    expect(a.held('host-a:1').map((n) => n.nodeId)).toEqual(['schema']);
    expect(a.held('host-b:2')).toEqual([]);
  });

  it('two engine processes race for twenty ready nodes: every node is claimed once, none twice', async () => {
    const { a, dbA } = twoEngines();
    const many = 'title: Many\nnodes:\n' + Array.from({ length: 20 }, (_, i) => `  - id: n${i}\n    brief: b${i}\n`).join('');
    a.upsertRoute(route(many, 'many'), { repoRoot: '/repo', filePath: '/repo/.sleds/routes/many.yml' }, 'auto');
    a.arm('many', null);
    const file = dbA.name;
    const go = `${file}.go`;
    const fixture = join(import.meta.dirname, 'fixtures', 'route-claimer.ts');
    const engines = ['e1', 'e2'].map((owner) => {
      const child = spawn(process.execPath, ['--import', 'tsx', fixture, file, go, owner], { stdio: ['ignore', 'pipe', 'inherit'] });
      const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
      return { child, lines };
    });
    for (const e of engines) expect((await e.lines.next()).value).toBe('ready');
    writeFileSync(go, '');
    const got = await Promise.all(engines.map(async (e) => JSON.parse((await e.lines.next()).value as string) as string[]));
    await Promise.all(engines.map((e) => (e.child.exitCode === null ? once(e.child, 'exit') : null)));
    const all = [...got[0]!, ...got[1]!].sort();
    expect(all).toEqual(Array.from({ length: 20 }, (_, i) => `n${i}`).sort());
    expect(new Set(all).size).toBe(20);
    expect(a.nodes('many').every((n) => n.run.state === 'CLAIMING' && n.fencingToken === 1 && n.run.claims === 1)).toBe(true);
  });

  it('a stale token writes nothing: after a take-over the old engine cannot step or patch the node', () => {
    const { a, b, clock, events } = twoEngines();
    a.upsertRoute(route(FOUR), WHERE, 'auto');
    a.arm('eng-503', null);
    const t1 = a.claim('eng-503', 'schema', 'host-a:1', T, LEASE)!;
    expect(a.step('eng-503', 'schema', t1, { type: 'claimed' }, T + 1, { worktree: '/wt/schema', branch: 'sleds/eng-503/schema' }).ok).toBe(true);
    // the lease is live: nobody takes it over
    clock.t = T + LEASE - 1;
    expect(b.takeOver('eng-503', 'schema', 'host-b:2', clock.t, LEASE)).toBeNull();
    // engine A died; its lease runs out
    clock.t = T + LEASE + 1;
    const t2 = b.takeOver('eng-503', 'schema', 'host-b:2', clock.t, LEASE);
    expect(t2).toBe(t1 + 1);
    expect(a.takeOver('eng-503', 'schema', 'host-a:1', clock.t, LEASE)).toBeNull();
    const stale = a.step('eng-503', 'schema', t1, { type: 'prepared' }, clock.t);
    expect(stale.ok).toBe(false);
    if (!stale.ok) expect(stale.error).toBe(`node eng-503/schema: token ${t1} is stale (it is ${t2} now) — another engine holds it; let it go`);
    expect(a.patch('eng-503', 'schema', t1, { lastError: 'x' })).toBe(false);
    expect(a.renew('eng-503', 'schema', 'host-a:1', t1, clock.t, LEASE)).toBe(false);
    const row = b.node('eng-503', 'schema')!;
    expect([row.run.state, row.leaseOwner, row.lastError, row.worktree]).toEqual(['PREPARING', 'host-b:2', null, '/wt/schema']);
    // the new holder moves it, and every move is one lifecycle event with the node as correlation id
    expect(b.step('eng-503', 'schema', t2!, { type: 'prepared' }, clock.t).ok).toBe(true);
    expect(b.renew('eng-503', 'schema', 'host-b:2', t2!, clock.t + 10, LEASE)).toBe(true);
    expect(b.node('eng-503', 'schema')!.leaseExpiresAt).toBe(clock.t + 10 + LEASE);
    expect(events.byCorrelation('eng-503/schema').map((e) => [e.entityKind, e.eventType, e.fromState, e.toState])).toEqual([
      ['run', 'created', null, 'QUEUED'],
      ['run', 'claim', 'QUEUED', 'CLAIMING'],
      ['run', 'claimed', 'CLAIMING', 'PREPARING'],
      ['run', 'prepared', 'PREPARING', 'RUNNING'],
    ]);
  });

  it('a move the run does not allow is refused and nothing is written', () => {
    const { a } = twoEngines();
    a.upsertRoute(route(FOUR), WHERE, 'auto');
    a.arm('eng-503', null);
    const t = a.claim('eng-503', 'schema', 'e1', T, LEASE)!;
    const r = a.step('eng-503', 'schema', t, { type: 'merged' }, T + 5, { prNumber: 7 });
    expect(r).toEqual({ ok: false, error: `run eng-503/schema: a run that is CLAIMING cannot take 'merged'` });
    expect(a.node('eng-503', 'schema')!.prNumber).toBeNull();
  });

  it('ready() follows dependencies (merged only), arming, and approve vs auto', () => {
    const { a, b } = twoEngines();
    a.upsertRoute(route(FOUR), WHERE, 'approve');
    expect(a.route('eng-503')!.mode).toBe('approve');
    // not armed: nothing
    expect(ids(a.ready(T))).toEqual([]);
    expect(a.arm('eng-503', ['schema', 'nope'])).toEqual({ ok: false, error: `route 'eng-503' has no node 'nope' (it has schema, queue, ui, mailer)` });
    expect(a.arm('eng-503', null)).toEqual({ ok: true, armed: ['schema', 'queue', 'ui', 'mailer'] });
    // approve mode: armed is not enough
    expect(ids(a.ready(T))).toEqual([]);
    expect(a.approve('eng-503', 'schema')).toEqual({ ok: true });
    expect(ids(a.ready(T))).toEqual(['eng-503/schema']);
    // auto: armed nodes whose dependencies are merged
    a.setMode('eng-503', 'auto');
    const t = a.claim('eng-503', 'schema', 'e1', T, LEASE)!;
    expect(ids(b.ready(T))).toEqual([]);
    // AWAITING_MERGE is not merged: the next wave waits
    for (const e of [{ type: 'claimed' }, { type: 'prepared' }, { type: 'turn-completed', sessionId: 's' }, { type: 'verified' }] as const) expect(a.step('eng-503', 'schema', t, e, T + 1).ok).toBe(true);
    expect(ids(b.ready(T))).toEqual([]);
    expect(a.step('eng-503', 'schema', t, { type: 'merged' }, T + 2).ok).toBe(true);
    expect(ids(b.ready(T))).toEqual(['eng-503/queue', 'eng-503/ui']);
    // a second route armed only in part: wave order across routes (its wave 0 before eng-503's wave 1)
    a.upsertRoute(route('title: Other\nnodes:\n  - id: one\n    brief: x\n  - id: two\n    brief: y\n', 'other'), { repoRoot: '/repo', filePath: '/repo/.sleds/routes/other.yml' }, 'auto');
    a.arm('other', ['two']);
    expect(ids(b.ready(T))).toEqual(['other/two', 'eng-503/queue', 'eng-503/ui']);
    const tq = a.claim('eng-503', 'queue', 'e1', T, LEASE)!;
    land(a, 'eng-503', 'queue', tq, T + 3);
    expect(ids(b.ready(T))).toEqual(['other/two', 'eng-503/ui', 'eng-503/mailer']);
  });

  it('re-loading a route: new nodes QUEUED, started ones keep their run, a removed node that never started is deleted, one that started is kept; the stored mode stays', () => {
    const { a } = twoEngines();
    a.upsertRoute(route(FOUR), WHERE, 'approve');
    a.setMode('eng-503', 'auto');
    a.arm('eng-503', ['schema']);
    const t = a.claim('eng-503', 'schema', 'e1', T, LEASE)!;
    a.step('eng-503', 'schema', t, { type: 'claimed' }, T + 1);
    const edited = `title: Large exports, by email
nodes:
  - id: queue
    brief: a queue
  - id: mailer
    brief: mail
    depends_on: [queue]
  - id: audit
    brief: audit log
    depends_on: [mailer]
`;
    a.upsertRoute(route(edited), WHERE, 'approve');
    expect(a.route('eng-503')!).toMatchObject({ title: 'Large exports, by email', mode: 'auto', tracker: null });
    const rows = a.nodes('eng-503');
    expect(rows.map((n) => [n.nodeId, n.run.state, n.wave, n.brief])).toEqual([
      ['queue', 'QUEUED', 0, 'a queue'],
      ['schema', 'PREPARING', 0, 'table'],
      ['mailer', 'QUEUED', 1, 'mail'],
      ['audit', 'QUEUED', 2, 'audit log'],
    ]);
    expect(a.node('eng-503', 'ui')).toBeNull();
  });

  it('decisions are kept with who answered, when and through what', () => {
    const { a, b } = twoEngines();
    a.upsertRoute(route(FOUR), WHERE);
    a.addDecision({ routeKey: 'eng-503', nodeId: 'mailer', question: 'Link expiry?', options: ['24 h (+$0)', '7 days (+$1)'], answer: '7 days (+$1)', answeredBy: 'ana', answeredAt: T + 5, source: 'slack' });
    a.addDecision({ routeKey: 'eng-503', nodeId: 'ui', question: 'Where?', options: ['menu', 'toolbar'], answer: 'menu', answeredBy: 'bo', answeredAt: T + 1, source: 'cli' });
    expect(b.decisions('eng-503').map((d) => [d.nodeId, d.answer, d.answeredBy, d.answeredAt, d.source, d.options])).toEqual([
      ['ui', 'menu', 'bo', T + 1, 'cli', ['menu', 'toolbar']],
      ['mailer', '7 days (+$1)', 'ana', T + 5, 'slack', ['24 h (+$0)', '7 days (+$1)']],
    ]);
    expect(b.decisions('other')).toEqual([]);
  });

  it('an escalated question parks once when its time runs out, and its answer is the on-call’s decision with the reason; the repository’s other routes’ decisions are the org’s', () => {
    const { a, b } = twoEngines();
    a.upsertRoute(route(FOUR), WHERE);
    a.upsertRoute(route(FOUR, 'eng-490'), { repoRoot: '/repo', filePath: '/repo/.sleds/routes/eng-490.yml' });
    a.upsertRoute(route(FOUR, 'ops-1'), { repoRoot: '/other', filePath: '/other/.sleds/routes/ops-1.yml' });
    a.addDecision({ routeKey: 'eng-490', nodeId: 'ui', question: 'Where?', options: ['menu', 'toolbar'], answer: 'menu', answeredBy: 'sleds', answeredAt: T, source: 'ladder', rung: 'decided', reason: "reversible, low risk: took the agent's first option" });
    a.addDecision({ routeKey: 'ops-1', nodeId: 'ui', question: 'Where?', options: ['menu', 'toolbar'], answer: 'toolbar', answeredBy: 'bo', answeredAt: T, source: 'cli' });
    expect(b.repoDecisions('/repo').map((d) => [d.routeKey, d.answer, d.rung, d.reason])).toEqual([['eng-490', 'menu', 'decided', "reversible, low risk: took the agent's first option"]]);

    const q = a.addQuestion({ id: 'q7k2m9qa45pz', routeKey: 'eng-503', nodeId: 'mailer', question: 'Which table?', options: ['jobs', 'exports', 'a JSON column'], askedAt: T, ladder: { reversible: false, risk: 'high', rung: 'escalated', escalatedTo: 'dana', escalateUntil: T + 30 * 60_000 } });
    expect(q.ladder).toEqual({ reversible: false, risk: 'high', rung: 'escalated', escalatedTo: 'dana', escalateUntil: T + 30 * 60_000, parkedAt: null });
    expect(b.dueEscalations(T + 30 * 60_000 - 1)).toEqual([]);
    expect(b.dueEscalations(T + 30 * 60_000).map((x) => x.id)).toEqual(['q7k2m9qa45pz']);
    expect(a.parkEscalation('q7k2m9qa45pz', T + 31 * 60_000)).toBe(true);
    expect(b.parkEscalation('q7k2m9qa45pz', T + 31 * 60_000)).toBe(false);
    expect(b.question('q7k2m9qa45pz')!.ladder).toMatchObject({ rung: 'parked', parkedAt: T + 31 * 60_000 });

    expect(a.answerQuestion('q7k2m9qa45pz', { choice: 'D', text: null, by: 'dana', at: T + 40 * 60_000, source: 'slack' })).toEqual({ ok: false, kind: 'bad-choice', error: "question 'q7k2m9qa45pz' has no option D — choose one of A, B, C" });
    expect(a.answerQuestion('q7k2m9qa45pz', { choice: 'C', text: null, by: 'dana', at: T + 40 * 60_000, source: 'slack' })).toMatchObject({ ok: true, question: { choice: 'C', answer: 'a JSON column' } });
    expect(b.decisions('eng-503').map((d) => [d.answer, d.answeredBy, d.rung, d.reason])).toEqual([['a JSON column', 'dana', 'on-call', 'escalated to dana; answered after it parked']]);
  });

  it('start refuses a node that is over or not there', () => {
    const { a } = twoEngines();
    expect(a.approve('eng-503', 'schema')).toEqual({ ok: false, error: `no route 'eng-503' — load it first (sleds route load eng-503)` });
    a.upsertRoute(route(FOUR), WHERE, 'auto');
    expect(a.approve('eng-503', 'nope')).toEqual({ ok: false, error: `route 'eng-503' has no node 'nope'` });
    a.arm('eng-503', null);
    const t = a.claim('eng-503', 'schema', 'e1', T, LEASE)!;
    land(a, 'eng-503', 'schema', t, T + 1);
    expect(a.approve('eng-503', 'schema')).toEqual({ ok: false, error: `node eng-503/schema is COMPLETED (merged); nothing to start` });
  });
});
