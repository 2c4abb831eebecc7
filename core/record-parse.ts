import type { z } from 'zod';

/** Small pieces every log-record parser (Claude transcripts, Codex rollouts) needs. Pure. */

/** The first thing wrong with a record, in one line: "message.usage.input_tokens: expected number". */
export function zodProblem(error: z.ZodError): string {
  const first = error.issues[0];
  if (first === undefined) return 'does not match the expected shape';
  const path = first.path.map(String).join('.');
  return path.length > 0 ? `${path}: ${first.message}` : first.message;
}

/** An ISO timestamp as epoch ms; null when absent or unreadable. */
export function parseTimestamp(ts: string | null | undefined): number | null {
  if (ts === null || ts === undefined) return null;
  const ms = Date.parse(ts);
  return Number.isNaN(ms) ? null : ms;
}
