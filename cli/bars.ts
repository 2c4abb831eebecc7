import { harnessOfProvider } from '../harnesses/registry.js';
import { formatAge, formatReset } from '../core/format.js';
import { askMusher, reportRefusal } from './musher-call.js';

/** `sleds bars [--json]`: every bar musher knows, with its source and the age of its data. */
export async function runBars(json: boolean): Promise<number> {
  const res = await askMusher('bars', {});
  if (!res) return 1;
  if (!res.ok) return reportRefusal(res, json);
  const { bars, now } = res.body;
  if (json) {
    process.stdout.write(`${JSON.stringify({ now, bars }, null, 2)}\n`);
    return 0;
  }
  if (bars.length === 0) {
    process.stdout.write('No bars yet: they arrive with the first reply of a subscriber session (API-key sessions have none).\n');
    return 0;
  }
  // Two accounts' bars (a second config dir, another login) are told apart by whose they are.
  const several = new Set(bars.map((b) => b.account)).size > 1;
  const rows = bars.map((b) => [
    `${harnessOfProvider(b.provider)?.binary.name ?? b.provider} ${b.label}${several ? ` (${b.accountLabel ?? b.account})` : ''}`,
    `${b.usedPct}%`,
    b.resetsAt === null ? '?' : formatReset(b.resetsAt, now),
    b.source,
    `${formatAge(b.ageMs)}${b.stale ? ' (stale)' : ''}`,
  ]);
  const head = ['bar', 'used', 'resets', 'source', 'age'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  process.stdout.write(`${[fmt(head), ...rows.map(fmt)].join('\n')}\n`);
  return 0;
}
