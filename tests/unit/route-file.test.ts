import { describe, expect, it } from 'vitest';
import { parseRouteFile } from '../../musher/engine/route-yaml.js';
import { routeBand } from '../../core/routes/band.js';

/** Route files (issue 14 § 1): every refusal is one line naming the file and the line that has it; waves are layers. */
const FILE = '.sleds/routes/eng-503.yml';
const HARNESSES = ['claude-code', 'codex'];
const parse = (text: string, path = FILE) => parseRouteFile(text, { path, harnesses: HARNESSES });

const GOOD = `title: Large exports by email
tracker: ENG-503
mode: auto
notes: |
  Exports over 10k rows are emailed as a link.
nodes:
  - id: schema
    title: Export jobs table
    brief: Add an export_jobs table.
    band: { low_usd: 2, high_usd: 6, low_min: 10, high_min: 30, confidence: 0.8 }
  - id: queue
    title: Queue
    brief: A job queue.
    depends_on: [schema]
    harness: codex
    model: gpt-5
    band: { low_usd: 1, high_usd: 3, low_min: 5, high_min: 15, confidence: 0.6 }
  - id: mailer
    brief: Mail the link.
    depends_on: [queue, schema]
    area: backend
    overnight: true
    band: { low_usd: 0.5, high_usd: 1.5, low_min: 5, high_min: 10, confidence: 0.9 }
  - id: ui
    brief: A button.
    depends_on: [schema]
    band: { low_usd: 1, high_usd: 2, low_min: 5, high_min: 10, confidence: 0.7 }
`;

describe('route files', () => {
  it('a good file: its key from the name, its nodes, waves as topological layers, the summed band at the weakest confidence', () => {
    const r = parse(GOOD);
    if (!r.ok) throw new Error(r.error);
    expect(r.route.key).toBe('eng-503');
    expect(r.route.title).toBe('Large exports by email');
    expect(r.route.tracker).toBe('ENG-503');
    expect(r.route.mode).toBe('auto');
    expect(r.route.notes).toBe('Exports over 10k rows are emailed as a link.');
    expect(r.route.waves).toEqual([['schema'], ['queue', 'ui'], ['mailer']]);
    expect(r.route.nodes.map((n) => [n.id, n.title, n.dependsOn, n.harness, n.model, n.area, n.overnight])).toEqual([
      ['schema', 'Export jobs table', [], null, null, null, false],
      ['queue', 'Queue', ['schema'], 'codex', 'gpt-5', null, false],
      ['mailer', 'mailer', ['queue', 'schema'], null, null, 'backend', true],
      ['ui', 'ui', ['schema'], null, null, null, false],
    ]);
    expect(r.route.band).toEqual({ lowUsd: 4.5, highUsd: 12.5, lowMin: 25, highMin: 65, confidence: 0.6 });
  });

  it('a route with a node without a band has no route band yet; mode defaults to the policy (null)', () => {
    const r = parse('title: T\nnodes:\n  - id: a\n    brief: x\n');
    if (!r.ok) throw new Error(r.error);
    expect(r.route.band).toBeNull();
    expect(r.route.mode).toBeNull();
    expect(r.route.waves).toEqual([['a']]);
    expect(routeBand([])).toBeNull();
  });

  const REFUSALS: Array<[string, string, string]> = [
    ['unknown dependency', 'title: T\nnodes:\n  - id: queue\n    brief: q\n  - id: mailer\n    brief: m\n    depends_on:\n      - queue\n      - queue2\n', `${FILE}:9: node 'mailer' depends on 'queue2', which this route does not have`],
    ['cycle', 'title: T\nnodes:\n  - id: a\n    brief: x\n    depends_on: [b]\n  - id: b\n    brief: y\n    depends_on: [a]\n', `${FILE}:5: nodes a → b → a form a cycle`],
    ['longer cycle', 'title: T\nnodes:\n  - id: z\n    brief: x\n  - id: a\n    brief: x\n    depends_on: [z, c]\n  - id: b\n    brief: y\n    depends_on: [a]\n  - id: c\n    brief: y\n    depends_on:\n      - b\n', `${FILE}:7: nodes a → c → b → a form a cycle`],
    ['self dependency', 'title: T\nnodes:\n  - id: a\n    brief: x\n    depends_on: [a]\n', `${FILE}:5: node 'a' depends on itself`],
    ['duplicate id', 'title: T\nnodes:\n  - id: a\n    brief: x\n  - id: b\n    brief: y\n  - id: a\n    brief: z\n', `${FILE}:7: node id 'a' is used twice (first on line 3)`],
    ['missing brief', 'title: T\nnodes:\n  - id: a\n    brief: x\n  - id: b\n    title: B\n', `${FILE}:5: node 'b' has no brief`],
    ['empty brief', 'title: T\nnodes:\n  - id: a\n    brief: "  "\n', `${FILE}:4: node 'a' has no brief (it is empty)`],
    ['bad id', 'title: T\nnodes:\n  - id: Schema_1\n    brief: x\n', `${FILE}:3: node id 'Schema_1' is not lowercase letters, digits and '-' (at most 40, starting with a letter or digit)`],
    ['unknown harness', 'title: T\nnodes:\n  - id: a\n    brief: x\n    harness: aider\n', `${FILE}:5: node 'a' asks for harness 'aider', which sleds does not know (known: claude-code, codex)`],
    ['unknown node field (a typo of depends_on)', 'title: T\nnodes:\n  - id: a\n    brief: x\n  - id: b\n    brief: y\n    depends-on: [a]\n', `${FILE}:7: a node has no field 'depends-on' (fields: id, title, brief, depends_on, area, harness, model, overnight, band, cap)`],
    ['unknown route field', 'title: T\nowner: me\nnodes:\n  - id: a\n    brief: x\n', `${FILE}:2: the route has no field 'owner' (fields: title, tracker, mode, notes, nodes)`],
    ['bad mode', 'title: T\nmode: yolo\nnodes:\n  - id: a\n    brief: x\n', `${FILE}:2: mode 'yolo' is not approve or auto`],
    ['no title', 'nodes:\n  - id: a\n    brief: x\n', `${FILE}:1: the route has no title`],
    ['no nodes', 'title: T\nnodes: []\n', `${FILE}:2: a route needs nodes: a list with at least one node`],
    ['band low above high', 'title: T\nnodes:\n  - id: a\n    brief: x\n    band: { low_usd: 6, high_usd: 2, low_min: 1, high_min: 2, confidence: 0.5 }\n', `${FILE}:5: node 'a''s band has a low above its high`],
    ['band missing a number', 'title: T\nnodes:\n  - id: a\n    brief: x\n    band:\n      low_usd: 1\n', `${FILE}:5: node 'a''s band needs high_usd, a number ≥ 0`],
    ['not YAML', 'title: T\nnodes:\n  - id: a\n   brief: [x\n', `${FILE}:4: not YAML: Sequence item without - indicator`],
    ['overnight not a boolean', 'title: T\nnodes:\n  - id: a\n    brief: x\n    overnight: soon\n', `${FILE}:5: node 'a': overnight is true or false`],
    ['a cap that is not an amount', 'title: T\nnodes:\n  - id: a\n    brief: x\n    overnight: true\n    cap: lots\n', `${FILE}:6: node 'a': cap 'lots' is not an amount`],
    ['a cap in euros', 'title: T\nnodes:\n  - id: a\n    brief: x\n    overnight: true\n    cap: 12 EUR\n', `${FILE}:6: node 'a': cap '12 EUR' is not in US dollars`],
    ['a cap on a daytime node', 'title: T\nnodes:\n  - id: a\n    brief: x\n    cap: $12\n', `${FILE}:5: node 'a': cap is for an overnight node (overnight: true)`],
  ];
  it('reads an overnight node’s own cap in micro-dollars; without one it is the policy’s (null)', () => {
    const r = parse('title: T\nnodes:\n  - id: a\n    brief: x\n    overnight: true\n    cap: $12.50\n  - id: b\n    brief: y\n    overnight: true\n');
    if (!r.ok) throw new Error(r.error);
    expect(r.route.nodes.map((n) => [n.id, n.overnight, n.capMicros])).toEqual([['a', true, 12_500_000], ['b', true, null]]);
  });

  it.each(REFUSALS)('refuses %s in one line naming file and line', (_what, text, error) => {
    const r = parse(text);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.split('\n')).toHaveLength(1);
    expect(r.error.startsWith(error)).toBe(true);
  });

  it('refuses a file whose name is not a route key', () => {
    const r = parse('title: T\nnodes:\n  - id: a\n    brief: x\n', '.sleds/routes/ENG 503.yml');
    expect(r).toEqual({ ok: false, error: `.sleds/routes/ENG 503.yml:1: the file's name is not a route key (lowercase letters, digits and '-', at most 40, e.g. eng-503.yml)` });
  });
});
