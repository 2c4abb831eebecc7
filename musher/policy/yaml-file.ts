import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import type { IssuePath } from '../../core/policy/schema.js';

/**
 * One policy file's YAML: its data, its syntax errors as one line each with the line number, and the line of any
 * path in it (for zod's errors, which know paths but not lines).
 */

export interface YamlProblem {
  line: number | null;
  message: string;
}

export interface ParsedYaml {
  /** The mapping the file holds ({} for an empty file); null when the YAML does not parse. */
  data: unknown;
  errors: YamlProblem[];
  warnings: YamlProblem[];
  /** The 1-based line of a path's value (or of its key, or of the nearest part of the path that exists). */
  lineOf(path: IssuePath): number | null;
}

/** "Map keys must be unique at line 2, column 1:\n\n…" → "Map keys must be unique" */
function firstClause(message: string): string {
  return message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '').trim();
}

export function parseYamlFile(text: string): ParsedYaml {
  const counter = new LineCounter();
  const doc: Document.Parsed = parseDocument(text, { lineCounter: counter, prettyErrors: true, uniqueKeys: true });
  const lineAt = (offset: number | undefined): number | null => (offset === undefined ? null : counter.linePos(offset).line);
  const errors: YamlProblem[] = doc.errors.map((e) => ({ line: e.linePos?.[0]?.line ?? null, message: firstClause(e.message) }));
  const warnings: YamlProblem[] = doc.warnings.map((e) => ({ line: e.linePos?.[0]?.line ?? null, message: firstClause(e.message) }));

  let data: unknown = null;
  if (errors.length === 0) {
    try {
      data = doc.toJS({ maxAliasCount: 100 }) ?? {};
    } catch (e) {
      errors.push({ line: null, message: (e as Error).message.split('\n')[0]! });
    }
  }

  const lineOf = (path: IssuePath): number | null => {
    let node: unknown = doc.contents;
    let line: number | null = lineAt((node as Node | null)?.range?.[0]) ?? (text.trim().length > 0 ? 1 : null);
    for (const step of path) {
      if (isMap(node)) {
        const pair = node.items.find((p) => (isScalar(p.key) ? String(p.key.value) : String(p.key)) === String(step));
        if (!pair) return line;
        line = lineAt((pair.key as Node | null)?.range?.[0]) ?? line;
        node = pair.value;
      } else if (isSeq(node) && typeof step === 'number') {
        node = node.items[step];
        if (node === undefined) return line;
      } else {
        return line;
      }
      const here = lineAt((node as Node | null)?.range?.[0]);
      // A value on the key's own line or below it; an empty value (`per_day:`) keeps the key's line.
      if (here !== null) line = here;
    }
    return line;
  };

  return { data, errors, warnings, lineOf };
}
