import { describe, expect, it } from 'vitest';
import { draftRoute, parseItemRef } from '../../core/routes/from-item.js';
import { nodeBand } from '../../core/routes/band.js';

const acme = { owner: 'acme', name: 'shop' };

describe('parseItemRef: what `--from` accepts', () => {
  it.each([
    ['acme/shop#12', acme, { repo: acme, number: 12 }],
    ['https://github.com/acme/shop/issues/12', null, { repo: acme, number: 12 }],
    ['https://github.com/acme/shop/issues/12#issuecomment-1', null, { repo: acme, number: 12 }],
    ['#12', acme, { repo: acme, number: 12 }],
    ['12', acme, { repo: acme, number: 12 }],
  ])('%s', (text, checkout, want) => expect(parseItemRef(text, checkout)).toEqual(want));

  it.each([
    ['#12', null, "'#12' names no repository and this checkout has no GitHub remote — say owner/repo#12"],
    ['acme/shop/12', acme, "'acme/shop/12' is not a tracker item — say owner/repo#12, #12, or the issue's URL"],
    ['../../etc#1', acme, "'../../etc#1' is not a tracker item — say owner/repo#12, #12, or the issue's URL"],
    ['acme/shop#0', acme, "'acme/shop#0' is not a tracker item — say owner/repo#12, #12, or the issue's URL"],
    ['https://evil.example/acme/shop/issues/1', acme, "'https://evil.example/acme/shop/issues/1' is not a tracker item — say owner/repo#12, #12, or the issue's URL"],
  ])('refuses %s', (text, checkout, error) => expect(parseItemRef(text, checkout)).toEqual({ error }));
});

describe('draftRoute: a tracker item as a route', () => {
  it('makes each task a node, its indented lines the brief, (after …) its dependencies by number or id', () => {
    const d = draftRoute({
      key: 'acme/shop#1',
      title: 'Exports',
      body: 'Why we do it.\n\n- [ ] Schema\n  the table\n- [x] API (after 1)\n* [ ] UI (after schema)\n- [ ] Mail (after 2, 3)\nnot part of a task\n',
    });
    expect(d).toEqual({
      title: 'Exports',
      tracker: 'acme/shop#1',
      notes: 'Drafted from acme/shop#1.\n\nWhy we do it.',
      nodes: [
        { id: 'schema', title: 'Schema', brief: 'Schema\n\nthe table', depends_on: [] },
        { id: 'api', title: 'API', brief: 'API', depends_on: ['schema'] },
        { id: 'ui', title: 'UI', brief: 'UI', depends_on: ['schema'] },
        { id: 'mail', title: 'Mail', brief: 'Mail', depends_on: ['api', 'ui'] },
      ],
    });
  });

  it('an item with no task list is one node whose brief is the item', () => {
    expect(draftRoute({ key: 'acme/shop#2', title: 'Fix the 500 on /export', body: 'It fails for big accounts.' })).toEqual({
      title: 'Fix the 500 on /export',
      tracker: 'acme/shop#2',
      notes: 'Drafted from acme/shop#2.',
      nodes: [{ id: 'fix-the-500-on-export', title: 'Fix the 500 on /export', brief: 'Fix the 500 on /export\n\nIt fails for big accounts.', depends_on: [] }],
    });
  });

  it('ids are unique, start with a letter, and carry no control characters from a hostile item', () => {
    const d = draftRoute({ key: 'a/b#3', title: 'T\u001b[31m', body: '- [ ] 2024 plan\n- [ ] Same\n- [ ] Same\n- [ ] \u202eevil' });
    if ('error' in d) throw new Error(d.error);
    expect(d.title).toBe('T[31m');
    expect(d.nodes.map((n) => n.id)).toEqual(['n-2024-plan', 'same', 'same-2', 'evil']);
    expect(d.nodes[3]!.brief).toBe('evil');
  });

  it('refuses a dependency on no task, and an item with more tasks than a route holds', () => {
    expect(draftRoute({ key: 'a/b#4', title: 'x', body: '- [ ] One (after nine)' })).toEqual({ error: `a/b#4: task 1 ("One") is after 'nine', which is no task of the item — name a task by its number or id` });
    expect(draftRoute({ key: 'a/b#5', title: 'x', body: Array.from({ length: 41 }, (_, i) => `- [ ] t${i}`).join('\n') })).toEqual({ error: 'a/b#5 has 41 tasks; a route holds at most 40 — split the item' });
  });
});

describe("nodeBand: the estimator's answer as a node's band", () => {
  const b = (basis: 'receipts' | 'prior', fit: { inBand: number; of: number } | null) => ({ lowMicros: 2_000_000, highMicros: 6_500_000, lowMinutes: 10, highMinutes: 30, fit, basis, n: basis === 'prior' ? 0 : 8 });
  it.each([
    ['a measured band: its fit is the confidence', { band: b('receipts', { inBand: 4, of: 5 }), prior: null }, { lowUsd: 2, highUsd: 6.5, lowMin: 10, highMin: 30, confidence: 0.8 }],
    ['a prior: confidence 0, never shown as measured', { band: null, prior: b('prior', null) }, { lowUsd: 2, highUsd: 6.5, lowMin: 10, highMin: 30, confidence: 0 }],
    ['neither: no band', { band: null, prior: null }, null],
  ])('%s', (_what, answer, want) => expect(nodeBand(answer)).toEqual(want));
});
