import type { z } from 'zod';
import type { ReportReply } from '../protocol/schemas.js';
import type { ReportQuery } from '../protocol/requests.js';
import { formatUsd } from '../core/format.js';
import { REPORT_DIMENSIONS, REPORT_PERIODS, WEEK_DAYS } from '../core/report/report.js';
import { askMusher, reportRefusal } from './musher-call.js';
import { fail } from './fail.js';

/**
 * `sleds report daily|weekly|monthly|session [--by model|project|seat] [--since D] [--until D] [--tz Z]
 * [--start-of-week DAY] [--json]`: the reports a ccusage user expects (the same totals on the same history), with the
 * platform key's spend beside the seat's API-equivalent cost.
 */

const USAGE = 'report takes daily, weekly, monthly or session — e.g. sleds report daily --since 20261101 --by project';

type Report = z.output<typeof ReportReply>;
type Totals = Report['totals'];

const n = (x: number) => x.toLocaleString('en-US');

function costCell(t: Totals): string {
  const priced = formatUsd(t.costMicros);
  return t.unpricedReplies > 0 ? `${priced} + ${t.unpricedReplies} unpriced (${t.unpricedModels.join(', ')})` : priced;
}

function table(r: Report, breakdown: boolean): string {
  const head = r.period === 'session' ? 'Session' : r.period === 'weekly' ? 'Week of' : r.period === 'monthly' ? 'Month' : 'Date';
  const header = [head, 'Input', 'Output', 'Cache create', 'Cache read', 'Total tokens', 'API-equivalent', 'On the key'];
  const line = (label: string, t: Totals) => [label, n(t.inputTokens), n(t.outputTokens), n(t.cacheCreationTokens), n(t.cacheReadTokens), n(t.totalTokens), costCell(t), formatUsd(t.keyCostMicros)];
  const rows: string[][] = [header];
  for (const row of r.rows) {
    rows.push(line(r.period === 'session' ? `${row.period.slice(0, 8)} ${row.project ?? ''}`.trim() : row.period, row));
    if (breakdown) for (const b of row.breakdown) rows.push(line(`  ${b.name}`, b));
  }
  rows.push(line('Total', r.totals));
  const widths = header.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows.map((row) => row.map((cell, i) => (i === 0 || i === 6 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ').trimEnd()).join('\n');
}

function valueOf(args: string[], flag: string): string | undefined | null {
  const at = args.indexOf(flag);
  if (at < 0) return undefined;
  const v = args[at + 1];
  return v === undefined || v.startsWith('--') ? null : v;
}

export async function runReport(args: string[], json: boolean): Promise<number> {
  const flags = ['--by', '--since', '--until', '--tz', '--start-of-week'] as const;
  const words = args.filter((a, i) => !a.startsWith('--') && !(flags as readonly string[]).includes(args[i - 1] ?? ''));
  const period = words[0];
  if (!period || words.length > 1 || !(REPORT_PERIODS as readonly string[]).includes(period)) return fail(USAGE, 2);
  const query: Record<string, string> = { period };
  for (const flag of flags) {
    const v = valueOf(args, flag);
    if (v === null) return fail(`${flag} takes a value — e.g. ${flag === '--by' ? `--by ${REPORT_DIMENSIONS.join('|')}` : flag === '--start-of-week' ? `--start-of-week ${WEEK_DAYS[1]}` : flag === '--tz' ? '--tz Europe/Berlin' : `${flag} 20261101`}`, 2);
    if (v !== undefined) query[flag === '--start-of-week' ? 'start_of_week' : flag.slice(2)] = v;
  }
  // The reader's zone, not musher's: a day is the day of whoever reads the report.
  query.tz ??= Intl.DateTimeFormat().resolvedOptions().timeZone;
  // musher checks the values (an unknown --by is its one-line refusal).
  const res = await askMusher('report', { query: query as z.input<typeof ReportQuery> });
  if (!res) return 1;
  if (!res.ok) return reportRefusal(res, json);
  if (json) {
    process.stdout.write(`${JSON.stringify(res.body, null, 2)}\n`);
    return 0;
  }
  if (res.body.rows.length === 0) {
    process.stdout.write('No usage in that range yet: musher records every reply it reads from the harnesses’ histories.\n');
    return 0;
  }
  process.stdout.write(`${table(res.body, query.by !== undefined)}\n`);
  return 0;
}
