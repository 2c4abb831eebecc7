import { formatWithOptions } from 'node:util';
import { it } from 'vitest';

/**
 * `it.each(cases)(title, test)` for tables whose values hold `$`: vitest's `it.each` reads every `$word` of a formatted
 * title as a key of the case ("$5 wanted, $4.99 left today" is printed "undefined wanted, undefined left today"). The
 * title is formatted by node's printf (%s %d %i %f %j %o) and nothing else.
 */
export function eachCase<C extends readonly [unknown, ...unknown[]]>(cases: ReadonlyArray<C>) {
  return (title: string, test: (...c: C) => unknown): void => {
    const placeholders = title.match(/%[sdifjoO]/g)?.length ?? 0;
    for (const c of cases) {
      // %o as vitest prints it, on one line (node's %o would add hidden properties such as an array's length).
      it(formatWithOptions({ breakLength: Infinity }, title.replace(/%o/g, '%O'), ...c.slice(0, placeholders)), async () => {
        await test(...c);
      });
    }
  };
}
