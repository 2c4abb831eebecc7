import { routeBand, type RouteBand } from './band.js';
import { waves } from './waves.js';
import { parseMoney } from '../policy/money.js';

/**
 * A route file, `.sleds/routes/<key>.yml` (issue 14 § 1), checked as a tree that kept each value's line (the YAML
 * parsing is musher/engine/route-yaml.ts': core/ imports no packages), so that every refusal is one line naming the
 * file and the line that has it. Pure: the known harness ids come in as an argument (core/ does not import
 * harnesses/).
 *
 * Unknown fields are REFUSED, not warned: a file is reviewed like code, and a typo such as `depends-on` that were
 * only warned about would drop a dependency and let a node start before the one it needs.
 */

/** Route keys and node ids: they go into branch names (`sleds/<route>/<node>`). */
export const ROUTE_ID = /^[a-z0-9][a-z0-9-]{0,39}$/;

export type RouteMode = 'approve' | 'auto';
export const ROUTE_MODES: readonly RouteMode[] = ['approve', 'auto'];

export interface RouteNode {
  id: string;
  title: string;
  brief: string;
  dependsOn: string[];
  area: string | null;
  harness: string | null;
  model: string | null;
  overnight: boolean;
  band: RouteBand | null;
  /** An overnight node's own cap in micro-dollars (`cap: $12`); null: the policy's (`overnight.cap`). */
  capMicros: number | null;
  /** The 1-based line of the node in its file (for later refusals that name it). */
  line: number;
}

export interface ParsedRoute {
  key: string;
  title: string;
  tracker: string | null;
  /** null: the policy's default. */
  mode: RouteMode | null;
  notes: string | null;
  nodes: RouteNode[];
  /** Topological layers of node ids; wave 0 has no dependencies. */
  waves: string[][];
  /** The sum of the nodes' bands; null when a node has none yet (the estimator's comes later). */
  band: RouteBand | null;
}

export type RouteParse = { ok: true; route: ParsedRoute } | { ok: false; error: string };

const ROUTE_FIELDS = ['title', 'tracker', 'mode', 'notes', 'nodes'] as const;
const NODE_FIELDS = ['id', 'title', 'brief', 'depends_on', 'area', 'harness', 'model', 'overnight', 'band', 'cap'] as const;
const BAND_FIELDS = ['low_usd', 'high_usd', 'low_min', 'high_min', 'confidence'] as const;

/** The key a route file's name gives: `eng-503.yml` → `eng-503`; null when the name is not a route key. */
export function routeKeyOfFile(path: string): string | null {
  const base = path.split('/').pop() ?? '';
  const m = /^(.*)\.ya?ml$/.exec(base);
  return m && ROUTE_ID.test(m[1]!) ? m[1]! : null;
}

/** A parsed document with the 1-based line of every value and key. */
export type Positioned =
  | { kind: 'scalar'; line: number; value: string | number | boolean | null }
  | { kind: 'seq'; line: number; items: Positioned[] }
  | { kind: 'map'; line: number; entries: PositionedEntry[] };
export interface PositionedEntry {
  key: string;
  keyLine: number;
  value: Positioned;
}

class Refusal extends Error {}

type Pair = PositionedEntry;
type YAMLMap = Extract<Positioned, { kind: 'map' }>;
type YamlNode = Positioned;
const isMap = (p: unknown): p is YAMLMap => (p as Positioned | null)?.kind === 'map';
const isSeq = (p: unknown): p is Extract<Positioned, { kind: 'seq' }> => (p as Positioned | null)?.kind === 'seq';
const isScalar = (p: unknown): p is Extract<Positioned, { kind: 'scalar' }> => (p as Positioned | null)?.kind === 'scalar';

/** Checks a route file's tree; `notYaml` is the reader's first parse error (with its line), if any. */
export function checkRouteTree(tree: Positioned | null, opts: { path: string; harnesses: readonly string[]; notYaml?: { line: number; message: string } | null }): RouteParse {
  const file = opts.path;
  const lineOf = (n: Positioned | PositionedEntry | null | undefined): number => (n ? ('keyLine' in n ? n.keyLine : n.line) : 1);
  const refuse = (at: number, what: string): never => {
    throw new Refusal(`${file}:${at}: ${what}`);
  };
  try {
    if (opts.notYaml) refuse(opts.notYaml.line, `not YAML: ${opts.notYaml.message.split('\n')[0]}`);
    const key = routeKeyOfFile(file);
    if (key === null) refuse(1, `the file's name is not a route key (lowercase letters, digits and '-', at most 40, e.g. eng-503.yml)`);
    const top = tree;
    if (!isMap(top)) refuse(lineOf(top as YamlNode | null), 'a route is a map with title and nodes');
    const fields = fieldsOf(top as YAMLMap, ROUTE_FIELDS, 'the route', lineOf, refuse);

    const title = requiredText(fields.title, 'title', 'the route', 1, lineOf, refuse);
    const tracker = optionalText(fields.tracker, 'tracker', 'the route', lineOf, refuse);
    const notes = optionalText(fields.notes, 'notes', 'the route', lineOf, refuse);
    const modeText = optionalText(fields.mode, 'mode', 'the route', lineOf, refuse);
    if (modeText !== null && !ROUTE_MODES.includes(modeText as RouteMode)) refuse(lineOf(fields.mode!.value as YamlNode), `mode '${modeText}' is not approve or auto`);

    const nodesPair = fields.nodes;
    if (!nodesPair || !isSeq(nodesPair.value) || nodesPair.value.items.length === 0) refuse(nodesPair ? nodesPair.keyLine : 1, 'a route needs nodes: a list with at least one node');
    const nodes: RouteNode[] = [];
    const depLines = new Map<string, Map<string, number>>();
    const seen = new Map<string, number>();
    for (const item of (nodesPair!.value as { items: unknown[] }).items) {
      const at = lineOf(item as YamlNode);
      if (!isMap(item)) refuse(at, 'a node is a map with id, title and brief');
      const f = fieldsOf(item as YAMLMap, NODE_FIELDS, 'a node', lineOf, refuse);
      const id = requiredText(f.id, 'id', 'a node', at, lineOf, refuse);
      const idLine = lineOf(f.id!.value as YamlNode);
      if (!ROUTE_ID.test(id)) refuse(idLine, `node id '${id}' is not lowercase letters, digits and '-' (at most 40, starting with a letter or digit)`);
      const twin = seen.get(id);
      if (twin !== undefined) refuse(idLine, `node id '${id}' is used twice (first on line ${twin})`);
      seen.set(id, idLine);
      const where = `node '${id}'`;
      const nodeTitle = optionalText(f.title, 'title', where, lineOf, refuse) ?? id;
      const brief = requiredText(f.brief, 'brief', where, at, lineOf, refuse);
      const deps = new Map<string, number>();
      if (f.depends_on) {
        const v = f.depends_on.value;
        if (isScalar(v) && v.value === null) {
          // `depends_on:` with nothing: none
        } else if (!isSeq(v)) refuse(f.depends_on.keyLine, `${where}: depends_on is a list of node ids`);
        else
          for (const d of v.items) {
            if (!isScalar(d) || typeof d.value !== 'string') refuse(lineOf(d as YamlNode), `${where}: depends_on is a list of node ids`);
            const dep = (d as { value: string }).value;
            if (dep === id) refuse(lineOf(d as YamlNode), `node '${id}' depends on itself`);
            if (!deps.has(dep)) deps.set(dep, lineOf(d as YamlNode));
          }
      }
      depLines.set(id, deps);
      const harness = optionalText(f.harness, 'harness', where, lineOf, refuse);
      if (harness !== null && !opts.harnesses.includes(harness))
        refuse(lineOf(f.harness!.value as YamlNode), `node '${id}' asks for harness '${harness}', which sleds does not know (known: ${opts.harnesses.join(', ')})`);
      let overnight = false;
      if (f.overnight) {
        const v = f.overnight.value;
        if (!isScalar(v) || typeof v.value !== 'boolean') refuse(lineOf(v as YamlNode), `${where}: overnight is true or false`);
        overnight = (v as { value: boolean }).value;
      }
      let capMicros: number | null = null;
      if (f.cap) {
        const v = f.cap.value;
        const money = isScalar(v) ? parseMoney(v.value) : ({ ok: false, error: 'expected an amount like $12' } as const);
        if (!money.ok) refuse(lineOf(v as YamlNode), `${where}: cap ${money.error}`);
        else capMicros = money.micros;
        if (!overnight) refuse(f.cap.keyLine, `${where}: cap is for an overnight node (overnight: true); a daytime node is held by the allowance`);
      }
      nodes.push({
        id,
        title: nodeTitle,
        brief,
        dependsOn: [...deps.keys()],
        area: optionalText(f.area, 'area', where, lineOf, refuse),
        harness,
        model: optionalText(f.model, 'model', where, lineOf, refuse),
        overnight,
        band: f.band ? bandOf(f.band, where, lineOf, refuse) : null,
        capMicros,
        line: at,
      });
    }
    for (const n of nodes)
      for (const [dep, line] of depLines.get(n.id)!) if (!seen.has(dep)) refuse(line, `node '${n.id}' depends on '${dep}', which this route does not have`);
    const layered = waves(nodes);
    if (!layered.ok) {
      const [from, to] = layered.cycle;
      refuse(depLines.get(from!)!.get(to!)!, `nodes ${layered.cycle.join(' → ')} form a cycle`);
    }
    const route: ParsedRoute = {
      key: key!,
      title,
      tracker,
      mode: modeText as RouteMode | null,
      notes,
      nodes,
      waves: (layered as { ok: true; waves: string[][] }).waves,
      band: routeBand(nodes.map((n) => n.band)),
    };
    return { ok: true, route };
  } catch (e) {
    if (e instanceof Refusal) return { ok: false, error: e.message };
    throw e;
  }
}

type LineOf = (n: Positioned | PositionedEntry | null | undefined) => number;
type Refuse = (at: number, what: string) => never;

function fieldsOf<K extends string>(map: YAMLMap, known: readonly K[], what: string, lineOf: LineOf, refuse: Refuse): Partial<Record<K, Pair>> {
  const out: Partial<Record<K, Pair>> = {};
  for (const pair of map.entries) {
    const k: string | null = pair.key;
    if (k === null || !known.includes(k as K)) refuse(pair.keyLine, `${what} has no field '${k ?? '?'}' (fields: ${known.join(', ')})`);
    out[k as K] = pair as Pair;
  }
  return out;
}

function optionalText(pair: Pair | undefined, field: string, what: string, lineOf: LineOf, refuse: Refuse): string | null {
  if (!pair) return null;
  const v = pair.value;
  if (isScalar(v) && v.value === null) return null;
  if (!isScalar(v) || (typeof v.value !== 'string' && typeof v.value !== 'number')) refuse(lineOf((v ?? pair.key) as YamlNode), `${what}: ${field} is text`);
  const text = String((v as { value: string | number }).value).trim();
  return text === '' ? null : text;
}

function requiredText(pair: Pair | undefined, field: string, what: string, at: number, lineOf: LineOf, refuse: Refuse): string {
  const text = optionalText(pair, field, what, lineOf, refuse);
  if (text === null) refuse(pair ? pair.keyLine : at, `${what} has no ${field}${pair ? ' (it is empty)' : ''}`);
  return text!;
}

function bandOf(pair: Pair, what: string, lineOf: LineOf, refuse: Refuse): RouteBand {
  const v = pair.value;
  const at = pair.keyLine;
  if (!isMap(v)) refuse(at, `${what}: band is { low_usd, high_usd, low_min, high_min, confidence }`);
  const f = fieldsOf(v as YAMLMap, BAND_FIELDS, `${what}'s band`, lineOf, refuse);
  const num = (k: (typeof BAND_FIELDS)[number]): number => {
    const p = f[k];
    if (!p || !isScalar(p.value) || typeof p.value.value !== 'number' || !Number.isFinite(p.value.value) || p.value.value < 0)
      refuse(p ? lineOf(p.value as YamlNode) : at, `${what}'s band needs ${k}, a number ≥ 0`);
    return (p!.value as { value: number }).value;
  };
  const band = { lowUsd: num('low_usd'), highUsd: num('high_usd'), lowMin: num('low_min'), highMin: num('high_min'), confidence: num('confidence') };
  if (band.lowUsd > band.highUsd || band.lowMin > band.highMin) refuse(at, `${what}'s band has a low above its high`);
  if (band.confidence > 1) refuse(lineOf(f.confidence!.value as YamlNode), `${what}'s band confidence is between 0 and 1`);
  return band;
}
