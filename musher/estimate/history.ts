import type { EstimateQuery, ReceiptFeatures } from '../../core/estimate/estimator.js';
import { ReceiptBody } from '../../core/receipt/receipt.js';
import type { Log } from '../log.js';

/** The most receipts of one repository an estimate reads: the newest (a repository's habits drift). */
export const HISTORY_PER_REPO = 5000;

/** The stored receipts, as rows written after a given row (musher/store/receipts.ts). */
export interface ReceiptRows {
  since(afterRow: number): Array<{ row: number; body: string }>;
}

/**
 * The estimator's history, kept in memory: what it compares of each receipt, by repository. The bodies are read and
 * parsed once, then only the receipts written since (a receipt never changes once written), so sizing a task reads
 * no body. Why not feature columns in SQLite: with 5,000 receipts in one repository, fetching those 5,000 rows from
 * an index cost as much as reading and parsing the 5,000 bodies did (about 30 ms each, measured); in memory an
 * estimate takes about 1 ms.
 */
export class ReceiptHistory {
  private readonly byRepo = new Map<string | null, ReceiptFeatures[]>();
  private lastRow = 0;
  constructor(
    private readonly rows: ReceiptRows,
    private readonly log?: Log,
    private readonly perRepo = HISTORY_PER_REPO,
  ) {}

  /** The receipts of the query's repository, newest first (core/estimate picks the similar ones and the nearest). */
  of(q: Pick<EstimateQuery, 'repo'>): ReceiptFeatures[] {
    this.catchUp();
    return [...(this.byRepo.get(q.repo) ?? [])].reverse();
  }

  private catchUp(): void {
    for (const { row, body } of this.rows.since(this.lastRow)) {
      this.lastRow = row;
      const r = parseBody(body);
      if (!r) {
        this.log?.warn(`receipt row ${row} is not a receipt body — left out of estimates`);
        continue;
      }
      let list = this.byRepo.get(r.repo);
      if (!list) this.byRepo.set(r.repo, (list = []));
      list.push(featuresOf(r));
      if (list.length > this.perRepo) list.shift();
    }
  }
}

function featuresOf(b: ReceiptBody): ReceiptFeatures {
  return {
    type: b.type,
    repo: b.repo,
    seat: b.seat,
    models: b.models,
    costMicros: b.costMicros,
    activeMinutes: b.activeMinutes,
    promptChars: b.promptChars,
    filesTouched: b.filesTouched,
    turns: b.turns,
    inBand: b.inBand,
    endedAt: b.endedAt,
  };
}

function parseBody(text: string): ReceiptBody | null {
  try {
    const parsed = ReceiptBody.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    // A stored body that is not JSON is not a receipt the estimator can learn from.
    return null;
  }
}
