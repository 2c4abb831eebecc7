import { isMap, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';
import { checkRouteTree, type Positioned, type RouteParse } from '../../core/routes/route-file.js';

/**
 * Reads a route file's YAML into the tree core/routes checks, keeping the line of every key and value (parseDocument
 * with a LineCounter), so a refusal names the line that has the problem.
 */
export function parseRouteFile(text: string, opts: { path: string; harnesses: readonly string[] }): RouteParse {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false, uniqueKeys: true });
  const first = doc.errors[0];
  if (first) return checkRouteTree(null, { ...opts, notYaml: { line: lc.linePos(first.pos[0]).line, message: first.message } });
  const lineAt = (n: unknown): number => {
    const range = (n as { range?: [number, number, number] | null } | null)?.range;
    return range ? lc.linePos(range[0]).line : 1;
  };
  const tree = (n: unknown): Positioned => {
    if (isMap(n))
      return {
        kind: 'map',
        line: lineAt(n),
        entries: n.items.map((pair) => ({ key: isScalar(pair.key) ? String(pair.key.value) : String(pair.key), keyLine: lineAt(pair.key), value: tree(pair.value) })),
      };
    if (isSeq(n)) return { kind: 'seq', line: lineAt(n), items: n.items.map(tree) };
    if (isScalar(n)) {
      const v = n.value;
      return { kind: 'scalar', line: lineAt(n), value: typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? v : v === null || v === undefined ? null : String(v) };
    }
    // an empty value (`brief:` with nothing) or an alias: nothing there
    return { kind: 'scalar', line: lineAt(n), value: null };
  };
  return checkRouteTree(doc.contents === null ? null : tree(doc.contents), opts);
}
