/**
 * Claude Code's StopFailure text for a 5-hour limit that resets three hours from now (shared/facts/claude-code.md §3), and
 * the ways sleds writes that time back. Tests that run a real musher read the real clock; a fixed "resets 11:55pm"
 * would fall inside the default policy's "hold when the reset is near" for part of every evening, and past midnight
 * be written with a weekday.
 */
export interface LimitAhead {
  /** The reset, epoch ms, on the whole minute (the text carries no seconds). */
  atMs: number;
  /** The assistant's message as Claude Code writes it: "You've hit your 5-hour limit · resets 2:55am (UTC)". */
  message: string;
  /** The reset in a card or answer: "2:55 am UTC", maybe after "today " or a weekday (a regex source, escaped). */
  when: string;
  /** The reset in the statusline: "2:55am". */
  short: string;
  /** The reset as an ISO time of day: "T02:55:00.000Z". */
  isoTime: string;
}

export function limitAhead(nowMs: number = Date.now(), aheadMs = 3 * 3_600_000): LimitAhead {
  const atMs = Math.floor((nowMs + aheadMs) / 60_000) * 60_000;
  const d = new Date(atMs);
  const h24 = d.getUTCHours();
  const h12 = h24 % 12 === 0 ? 12 : h24 % 12;
  const mm = String(d.getUTCMinutes()).padStart(2, '0');
  const ampm = h24 < 12 ? 'am' : 'pm';
  return {
    atMs,
    message: `You've hit your 5-hour limit · resets ${h12}:${mm}${ampm} (UTC)`,
    when: `(?:today |[A-Z][a-z]+day )?${h12}:${mm} ${ampm} UTC`,
    short: `${h12}:${mm}${ampm}`,
    isoTime: d.toISOString().slice(10),
  };
}
