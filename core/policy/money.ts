/**
 * Money as the policy file writes it: `$40`, `40`, `40.50`, `40.50 USD`, `$1,500` → integer micro-dollars. Parsed
 * from the text, never through floating point, so `$0.10` is exactly 100 000 micro-dollars. Only US dollars: the
 * platform keys bill in them. Pure.
 */

export type MoneyParse = { ok: true; micros: number } | { ok: false; error: string };

export function parseMoney(value: unknown): MoneyParse {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) return { ok: false, error: `${value} is not an amount: write e.g. $40` };
    // A YAML number has already been through a double; its shortest decimal form is what the file said.
    return parseMoney(String(value));
  }
  if (typeof value !== 'string') return { ok: false, error: 'expected an amount like $40 or 40.50 USD' };
  const m = /^\s*(\$)?\s*(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,6}))?\s*(usd)?\s*$/i.exec(value);
  if (!m) {
    if (/^\s*-/.test(value) || /^\s*\$\s*-/.test(value)) return { ok: false, error: `'${value}' is negative: an allowance is $0 or more` };
    if (/[€£¥]|\b(eur|gbp|jpy|cad|aud)\b/i.test(value)) return { ok: false, error: `'${value}' is not in US dollars: platform keys bill in USD` };
    return { ok: false, error: `'${value}' is not an amount: write e.g. $40, 40 or 40.50 USD` };
  }
  if (m[1] && m[4]) return { ok: false, error: `'${value}' says dollars twice: write $40 or 40 USD` };
  const whole = Number(m[2]!.replace(/,/g, ''));
  const fraction = Number((m[3] ?? '').padEnd(6, '0'));
  const micros = whole * 1_000_000 + fraction;
  if (!Number.isSafeInteger(micros)) return { ok: false, error: `'${value}' is too large` };
  return { ok: true, micros };
}
