import { describe, expect, it } from 'vitest';
import { RowsByHash } from '../../musher/store/rows-by-hash.js';

describe('RowsByHash', () => {
  it('finds every row it was given, through growth and shared hashes, and only the one the caller accepts', () => {
    const rows = new RowsByHash(16);
    const keyOf = new Map<number, string>();
    // Hashes that collide on purpose (i % 97), negative ones, and far more rows than the first table holds.
    for (let rowid = 1; rowid <= 5_000; rowid++) {
      keyOf.set(rowid, `k${rowid}`);
      rows.add((rowid % 97) - 40, rowid);
    }
    expect(rows.size).toBe(5_000);
    for (const rowid of [1, 2, 96, 97, 98, 2_500, 5_000]) {
      expect(rows.find((rowid % 97) - 40, (id) => keyOf.get(id) === `k${rowid}`)).toBe(rowid);
    }
    expect(rows.find(3, (id) => keyOf.get(id) === 'k1')).toBeNull(); // another hash's row is never offered
    expect(rows.find(1_000_000, () => true)).toBeNull();
  });

  it('refuses rowid 0, which marks an empty slot', () => {
    expect(() => new RowsByHash().add(1, 0)).toThrow(/numbered from 1/);
  });
});
