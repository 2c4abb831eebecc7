/**
 * Reads Claude Code's usage-limit sentence ("You've hit your 5-hour limit · resets 8:55pm (UTC)"), as the
 * StopFailure hook hands it over, into a window and, when the zone is stated, a reset time.
 */

const LABELS: ReadonlyArray<[RegExp, string]> = [
  [/5-hour limit/i, 'five_hour'],
  [/weekly limit/i, 'seven_day'],
  [/opus limit/i, 'seven_day_opus'],
  [/sonnet limit/i, 'seven_day_sonnet'],
  [/fable limit/i, 'seven_day_overage_included'],
  [/usage credit limit/i, 'overage'],
];

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

export interface LimitText {
  window: string | null;
  resetsAtMs: number | null;
}

export function parseLimitText(text: string, nowMs: number): LimitText {
  const window = LABELS.find(([re]) => re.test(text))?.[1] ?? null;
  return { window, resetsAtMs: parseReset(text, nowMs) };
}

/** "resets 8:55pm (UTC)" → the next such time; "resets Dec 2, 3:42am (UTC)" → that date. Only UTC is resolved. */
function parseReset(text: string, nowMs: number): number | null {
  const m = /resets\s+(?:([A-Za-z]{3})[a-z]*\s+(\d{1,2}),\s*)?(\d{1,2})(?::(\d{2}))?\s*([ap]m)\s*\(UTC\)/i.exec(text);
  if (!m) return null;
  let hour = Number(m[3]) % 12;
  if (m[5]!.toLowerCase() === 'pm') hour += 12;
  const minute = m[4] ? Number(m[4]) : 0;
  const now = new Date(nowMs);
  if (m[1] && m[2]) {
    const month = MONTHS.indexOf(m[1].toLowerCase());
    if (month < 0) return null;
    let at = Date.UTC(now.getUTCFullYear(), month, Number(m[2]), hour, minute);
    if (at < nowMs - 86_400_000) at = Date.UTC(now.getUTCFullYear() + 1, month, Number(m[2]), hour, minute);
    return at;
  }
  let at = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), hour, minute);
  // The text has whole minutes: a reset at 12:34:57 reads "12:34am", which is already past at 12:34:50.
  if (at < nowMs - 60_000) at += 86_400_000;
  return at;
}
