import { readFileSync } from 'node:fs';
import { replayTrace, TraceSample } from '../core/forecast/replay.js';
import { formatClock } from '../core/format.js';
import { fail } from './fail.js';

/**
 * `sleds forecast replay <trace.jsonl|-> [--json]`: runs the forecaster over a recorded trace, one sample per line,
 * and prints one forecast per sample, so anyone can score it. A bad line is one error on stderr; the rest goes on.
 */
export async function runForecastReplay(args: string[], json: boolean): Promise<number> {
  const file = args.find((a) => !a.startsWith('--'));
  if (!file) {
    return fail('which trace? e.g. sleds forecast replay trace.jsonl --json (one {"t","window","used_percentage","resets_at"} per line)', 2);
  }
  let text: string;
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (e) {
    return fail(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const samples: TraceSample[] = [];
  let bad = 0;
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    let parsed;
    try {
      parsed = TraceSample.safeParse(JSON.parse(line));
    } catch {
      // Not JSON: counted as a bad line below, like one that fails the schema.
      parsed = null;
    }
    if (!parsed?.success) {
      bad++;
      const why = parsed ? parsed.error.issues.map((x) => `${x.path.join('.') || 'line'} ${x.message}`).join('; ') : 'not JSON';
      process.stderr.write(`sleds: ${file}:${i + 1}: ${why} — skipped\n`);
      return;
    }
    samples.push(parsed.data);
  });
  for (const out of replayTrace(samples)) {
    if (json) process.stdout.write(`${JSON.stringify(out)}\n`);
    else {
      const eta = out.eta === null ? 'no forecast' : `wall ${formatClock(out.eta)}${out.band ? ` (${formatClock(out.band[0])}–${formatClock(out.band[1])})` : ''}`;
      process.stdout.write(`${new Date(out.t).toISOString()}  ${out.window.padEnd(14)} ${eta}\n`);
    }
  }
  return bad > 0 && samples.length === 0 ? 1 : 0;
}
