/**
 * The `/sled …` verbs typed at the harness prompt. Codex cannot route a slash command, so `sled status` (no
 * slash) is accepted too. Pure: musher answers them without a model call.
 */
export type SledCommand =
  | { verb: 'status' }
  | { verb: 'help' }
  | { verb: 'unknown'; word: string };

export function sledUsage(word: string): string {
  return `sled: unknown verb '${word}' — try /sled status or /sled help`;
}

const SLED_PREFIX = /^\s*(?:\/sled(?::sled)?|sled)(?=\s|$)(.*)$/is;

export function parseSledPrompt(prompt: string): SledCommand | null {
  const m = SLED_PREFIX.exec(prompt);
  if (!m) return null;
  const rest = m[1]!.trim();
  // "sled" without a slash is only ours when a verb we know follows: "sled the dogs" stays a prompt.
  const slashed = /^\s*\//.test(prompt);
  const word = rest.split(/\s+/)[0]?.toLowerCase() ?? '';
  if (word === '' || word === 'status') return slashed || word === 'status' ? { verb: 'status' } : null;
  if (word === 'help') return { verb: 'help' };
  return slashed ? { verb: 'unknown', word } : null;
}

export const SLED_HELP = [
  'sled verbs (typed at the prompt, answered without a model call):',
  '  /sled status   every bar, its reset, today\'s spend by model, and the data\'s age',
  '  /sled help     this list',
].join('\n');
