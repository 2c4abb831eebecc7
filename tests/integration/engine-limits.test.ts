/**
 * Limits are routine (issue 14 § 11): a node whose harness hits its wall goes WAITING_FOR_LIMIT with the reset (not
 * runtime), and the repository's policy decides — `wait` for the reset, `switch` harness or model now, or `ask` a
 * person (wait, or switch) with a parked question. On real git, SQLite and processes (tests/support/engine-world.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git } from '../support/route-repo.js';
import { routeQuestionVerbs } from '../../musher/engine/route-questions-api.js';
import { useEngineWorlds } from '../support/engine-world.js';
import { harnessById, registerHarness } from '../../harnesses/registry.js';
import { plainHarness } from '../support/minimal-harness/index.js';

const { world } = useEngineWorlds();
const T0 = Date.UTC(2026, 11, 2, 9);
/** The reset the agent's limit names: an hour after the world's clock starts. */
const RESET_S = T0 / 1000 + 3600;

const route = (model = '') => `title: t
nodes:
  - id: api
    ${model ? `model: ${model}\n    ` : ''}brief: |
      @limit ${RESET_S} ${model || ''}
      @write api.txt api done
`;

describe('a node at its limit', { timeout: 60_000 }, () => {
  it('wait (the default): it waits for the reset named by its harness, then resumes its session and lands', async () => {
    const w = await world({ route: route() });
    await w.until(() => w.state('api') === 'WAITING_FOR_LIMIT', 'api at its limit');
    const held = w.store.node('eng-503', 'api')!;
    expect(held.run.resetsAtMs).toBe(RESET_S * 1000);
    // Rounds before the reset start nothing.
    await w.until(() => true, 'a round before the reset');
    expect(w.state('api')).toBe('WAITING_FOR_LIMIT');
    expect(w.starts()).toHaveLength(1);
    w.clock.t = RESET_S * 1000 + 1;
    await w.until(() => w.state('api') === 'AWAITING_MERGE', 'api resumed after the reset');
    const starts = w.starts();
    expect(starts).toHaveLength(2);
    expect(starts[1]).toContain(`${held.sessionId} resume`);
    // The hour at the wall is waiting, not runtime.
    const run = w.store.node('eng-503', 'api')!.run;
    expect(run.waitMs.limit).toBeGreaterThanOrEqual(3600_000 - 60_000);
    expect(run.runtimeMs).toBeLessThan(600_000);
  });

  it('switch: it carries on at once on the policy’s model, in the same session, and lands before the reset', async () => {
    const w = await world({ route: route('plain-big'), atLimit: { then: 'switch', harness: null, model: 'plain-small' } });
    await w.until(() => w.state('api') === 'AWAITING_MERGE', 'api switched and awaiting merge');
    expect(w.clock.now()).toBeLessThan(RESET_S * 1000);
    const api = w.store.node('eng-503', 'api')!;
    expect(api.model).toBe('plain-small');
    expect(git(w.bare, 'show', 'sleds/eng-503/api:api.txt')).toBe('api done');
    const starts = w.starts();
    expect(starts).toHaveLength(2);
    expect(starts[1]).toContain(`${api.sessionId} resume`);
    expect(w.log.some((l) => /eng-503\/api: at its limit — switched to plain-small/.test(l))).toBe(true);
    expect(readFileSync(join(w.plainHome, 'sessions', `${api.sessionId}.log`), 'utf8')).toContain('you are plain-small');
  });

  it('switch harness: a fresh session in the other harness takes the worktree over, told so', async () => {
    if (!harnessById('plain-b').ok) registerHarness({ ...plainHarness, id: 'plain-b', displayName: 'Plain B' });
    const w = await world({ route: route('plain-big'), atLimit: { then: 'switch', harness: 'plain-b', model: 'plain-small' } });
    await w.until(() => w.state('api') === 'AWAITING_MERGE', 'api switched harness and awaiting merge');
    const api = w.store.node('eng-503', 'api')!;
    expect(api).toMatchObject({ harness: 'plain-b', model: 'plain-small' });
    const starts = w.starts();
    // Another harness cannot resume the first one's session: a new one, which names itself.
    expect(starts.map((l) => l.split(' ')[1])).toEqual(['new', 'new']);
    expect(api.sessionId).toBe(starts[1]!.split(' ')[0]);
    expect(readFileSync(join(w.plainHome, 'sessions', `${api.sessionId}.log`), 'utf8')).toContain('You take this node over from plain, which stopped at its usage limit');
  });

  it('ask: a parked question (wait, or switch); the answer B switches it, and the question is the route’s decision', async () => {
    const w = await world({ route: route('plain-big'), atLimit: { then: 'ask', harness: null, model: 'plain-small' } });
    await w.until(() => w.store.openQuestions().length === 1, 'the question about the limit');
    const [q] = w.store.openQuestions();
    expect(q).toMatchObject({ routeKey: 'eng-503', nodeId: 'api', question: 'eng-503/api hit its usage limit. Wait for the reset, or switch to plain-small?' });
    expect(q!.options).toEqual(['Wait for the reset at 10:00 UTC: nothing more is spent meanwhile', 'Switch to plain-small now: it carries on from the worktree']);
    // Unanswered, it waits.
    await w.until(() => true, 'a round with no answer');
    expect(w.state('api')).toBe('WAITING_FOR_LIMIT');
    expect(routeQuestionVerbs({ store: w.store }).answer(JSON.stringify({ node: q!.id, answer: 'B', by: 'dana' }), w.clock.now())).toMatchObject({ status: 200 });
    await w.until(() => w.state('api') === 'AWAITING_MERGE', 'api switched after the answer', 40);
    expect(w.store.node('eng-503', 'api')!.model).toBe('plain-small');
    expect(w.store.decisions('eng-503')).toMatchObject([{ nodeId: 'api', answer: 'Switch to plain-small now: it carries on from the worktree', answeredBy: 'dana' }]);
  });

  it('ask, and nobody answers before the reset: it resumes, and the moot question holds nothing later', async () => {
    const w = await world({ route: route('plain-big'), atLimit: { then: 'ask', harness: null, model: 'plain-small' } });
    await w.until(() => w.store.openQuestions().length === 1, 'the question about the limit');
    w.clock.t = RESET_S * 1000 + 1;
    // The same model again after the reset: the agent's limit was for its window, which has reset.
    await w.until(() => w.state('api') === 'AWAITING_MERGE', 'api resumed after the reset');
    expect(w.store.openQuestions()).toEqual([]);
    expect(w.store.decisions('eng-503')).toMatchObject([{ nodeId: 'api', answeredBy: 'sleds engine', source: 'engine' }]);
  });
});
