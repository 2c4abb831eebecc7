/**
 * Spans of time as the policy file writes them: `45m`, `4h`, `1d`, `7d`, `1h30m`, `90s`, `2w`. Always with a unit:
 * a bare number is refused because nobody can tell whether `45` means minutes or hours. Pure.
 */

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

export type DurationParse = { ok: true; ms: number } | { ok: false; error: string };

export function parseDuration(value: unknown): DurationParse {
  if (typeof value === 'number') return { ok: false, error: `${value} has no unit: write e.g. ${value}m, ${value}h or ${value}d` };
  if (typeof value !== 'string') return { ok: false, error: 'expected a span like 45m, 4h or 7d' };
  const text = value.trim().toLowerCase().replace(/\s+/g, '');
  if (!/^(\d+(\.\d+)?[smhdw])+$/.test(text)) return { ok: false, error: `'${value}' is not a span: write e.g. 45m, 4h, 1d, 1h30m` };
  let ms = 0;
  for (const m of text.matchAll(/(\d+(?:\.\d+)?)([smhdw])/g)) ms += Number(m[1]) * UNIT_MS[m[2]!]!;
  return { ok: true, ms: Math.round(ms) };
}

/** "45m", "2h 10m", "1d 4h", "30s": the two largest units, for reasons and `policy show`. */
export function formatDuration(ms: number): string {
  const sign = ms < 0 ? '-' : '';
  let rest = Math.round(Math.abs(ms) / 1000);
  if (rest < 60) return `${sign}${rest}s`;
  const units: Array<[string, number]> = [
    ['w', 7 * 86_400],
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
  ];
  const out: string[] = [];
  for (const [name, size] of units) {
    if (rest >= size) {
      // Whole weeks only read well when they are whole: "10d" rather than "1w 3d".
      if (name === 'w' && rest % size !== 0) continue;
      out.push(`${Math.floor(rest / size)}${name}`);
      rest %= size;
      if (out.length === 2) break;
    } else if (out.length > 0) {
      break;
    }
  }
  return sign + out.join(' ');
}
