import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildPriceTable, type PriceTable } from '../core/price-table.js';

/** Loads the effective-dated price table shipped in prices/effective/<YYYY-MM-DD>.json. */
export function loadPriceTable(root: string): PriceTable {
  const dir = join(root, 'prices', 'effective');
  const files = readdirSync(dir)
    .filter((n) => /^\d{4}-\d{2}-\d{2}\.json$/.test(n))
    .sort()
    .map((n) => ({ effectiveFrom: n.slice(0, 10), rows: JSON.parse(readFileSync(join(dir, n), 'utf8')) as unknown }));
  return buildPriceTable(files);
}
