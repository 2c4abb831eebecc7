/**
 * Rows by a 32-bit hash of their key, in two typed arrays (open addressing, linear probing): a cold backfill's record
 * of the keys it wrote while their index is dropped. About 12 bytes a slot at most half full (6 MB for 240k rows), and
 * nothing for the garbage collector, where a Map would box each 32-bit key. Pure.
 *
 * A hash says only "maybe": `find` asks the caller whether a row with an equal hash is the one, so two keys that share
 * a hash cost one more look, never a wrong answer.
 */
export class RowsByHash {
  private hashes: Int32Array;
  private rowids: Float64Array;
  private used = 0;

  constructor(initialSlots = 1 << 16) {
    const slots = 1 << Math.ceil(Math.log2(Math.max(16, initialSlots)));
    this.hashes = new Int32Array(slots);
    this.rowids = new Float64Array(slots);
  }

  get size(): number {
    return this.used;
  }

  /** The first row with this hash that `isIt` accepts, or null. */
  find(hash: number, isIt: (rowid: number) => boolean): number | null {
    const mask = this.hashes.length - 1;
    for (let i = hash & mask; this.rowids[i] !== 0; i = (i + 1) & mask) {
      if (this.hashes[i] === (hash | 0) && isIt(this.rowids[i]!)) return this.rowids[i]!;
    }
    return null;
  }

  /** Adds a row (rowids start at 1: 0 marks an empty slot). */
  add(hash: number, rowid: number): void {
    if (rowid <= 0) throw new Error(`rowid ${rowid}: rows are numbered from 1`);
    if ((this.used + 1) * 2 > this.hashes.length) this.grow();
    this.put(hash | 0, rowid);
    this.used++;
  }

  private put(hash: number, rowid: number): void {
    const mask = this.hashes.length - 1;
    let i = hash & mask;
    while (this.rowids[i] !== 0) i = (i + 1) & mask;
    this.hashes[i] = hash;
    this.rowids[i] = rowid;
  }

  private grow(): void {
    const { hashes, rowids } = this;
    this.hashes = new Int32Array(hashes.length * 2);
    this.rowids = new Float64Array(rowids.length * 2);
    for (let i = 0; i < hashes.length; i++) if (rowids[i] !== 0) this.put(hashes[i]!, rowids[i]!);
  }
}
