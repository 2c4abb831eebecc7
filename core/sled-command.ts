/**
 * The `/sled …` verbs typed at the harness prompt. Codex cannot route a slash command, so `sled status` (no
 * slash) is accepted too. Pure: musher answers them without a model call.
 */
export type SledCommand =
  | { verb: 'status' }
  | { verb: 'help' }
  | { verb: 'exits' }
  | { verb: 'cancel' }
  /** `/sled 1` … `/sled 6`; `arg` is the rest ("+2h", an ISO time, a teammate's handle), if any. */
  | { verb: 'exit'; number: number; arg: string | null }
  | { verb: 'worth'; level: string | null }
  /** `/sled task <title>` starts a task in this session; bare, it names the current one. */
  | { verb: 'task'; title: string | null }
  /** `/sled type <label>`: the kind of work (similar tasks share it). */
  | { verb: 'type'; label: string | null }
  /** `/sled estimate`: the band of the session's task. */
  | { verb: 'estimate' }
  /** `/sled done`: the task is finished; its receipt is written. */
  | { verb: 'done' }
  /** `/sled answer <id> A|B`: answers a parked question. */
  | { verb: 'answer'; id: string | null; choice: string | null }
  /** `/sled handoff [handle]`: hand this session to a teammate now (at a wall it is `/sled 5`). */
  | { verb: 'handoff'; to: string | null }
  /** `/sled pickup <id>`: take over a session a teammate handed off. */
  | { verb: 'pickup'; id: string | null }
  /** `/sled resume [<job>]`: a delivered overnight job's branch and summary pulled into this session. */
  | { verb: 'resume'; job: string | null }
  /** `/sled overnight [cap $N]`: queue the session's task as an overnight job; `cap` is the words after the verb. */
  | { verb: 'overnight'; cap: string | null }
  | { verb: 'unknown'; word: string };

export function sledUsage(word: string): string {
  return `sled: unknown verb '${word}' — try /sled status or /sled help`;
}

const SLED_PREFIX = /^\s*(?:\/(?:sleds?:)?sled|sled)(?=\s|$)(.*)$/is;
/** Words that make an unslashed "sled …" ours; anything else stays an ordinary prompt ("sled the dogs"). */
const UNSLASHED_VERBS = new Set(['status', 'help', 'exits', 'cancel', 'worth', 'pickup', 'resume', 'task', 'type', 'estimate', 'done', 'answer', 'handoff', 'overnight', '1', '2', '3', '4', '5', '6']);

export function parseSledPrompt(prompt: string): SledCommand | null {
  const m = SLED_PREFIX.exec(prompt);
  if (!m) return null;
  const rest = m[1]!.trim();
  const slashed = /^\s*\//.test(prompt);
  const [first = '', ...args] = rest.split(/\s+/).filter((w) => w !== '');
  const word = first.toLowerCase();
  if (!slashed && !UNSLASHED_VERBS.has(word)) return null;
  const arg = args.length > 0 ? args.join(' ') : null;
  switch (word) {
    case '':
    case 'status':
      return { verb: 'status' };
    case 'help':
      return { verb: 'help' };
    case 'exits':
      return { verb: 'exits' };
    case 'cancel':
      return { verb: 'cancel' };
    case 'worth':
      return { verb: 'worth', level: arg?.toLowerCase() ?? null };
    case 'pickup':
      return { verb: 'pickup', id: args[0]?.toLowerCase() ?? null };
    case 'handoff':
    case 'hand-off':
      return { verb: 'handoff', to: args[0]?.replace(/^@/, '').toLowerCase() ?? null };
    case 'task':
      return { verb: 'task', title: arg };
    case 'type':
      return { verb: 'type', label: arg };
    case 'estimate':
      return { verb: 'estimate' };
    case 'done':
      return { verb: 'done' };
    case 'overnight':
      return { verb: 'overnight', cap: arg };
    case 'answer':
      return { verb: 'answer', id: args[0]?.toLowerCase() ?? null, choice: args[1]?.toUpperCase() ?? null };
    case 'resume':
      return { verb: 'resume', job: args[0]?.toLowerCase() ?? null };
    default:
      if (/^[1-6]$/.test(word)) return { verb: 'exit', number: Number(word), arg };
      return { verb: 'unknown', word };
  }
}

export const SLED_HELP = [
  'sled verbs (typed at the prompt, answered without a model call; in Codex type them without the slash):',
  '  /sled status        every bar, its reset, today\'s spend by model, and the data\'s age',
  '  /sled exits         the wall card again: the six ways on, priced',
  '  /sled 1 … /sled 6   take an exit: 1 key · 2 hold (+2h or a time) · 3 overnight · 4 cheaper model · 5 hand off · 6 defer (+2h or a time)',
  '  /sled cancel        undo a hold or a defer',
  '  /sled task <title>  start a task in this session (your first prompt starts one too)',
  '  /sled worth high    how much this task is worth (the policy reads it at the wall)',
  '  /sled type <label>  the kind of task (bugfix, feature…): its band comes from past ones of that kind',
  '  /sled estimate      the band of this task: dollars, minutes, and how often such bands held',
  '  /sled done          the task is finished: its signed receipt, actual against band',
  '  /sled answer <id> A|B  answer a parked question; the task goes on',
  '  /sled handoff [who] hand this session to a teammate now (the owner of the changed files, if you name nobody)',
  '  /sled pickup <id>   take over a session a teammate handed you',
  '  /sled resume [job]  pull a delivered overnight job (its branch, what it did and decided) into this session',
  '  /sled overnight [cap $N]  queue this task as an overnight job: sized, capped, run at ½ price in the window (sleds queue)',
  '  /sled help          this list',
].join('\n');
