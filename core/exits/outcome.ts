import { formatUsd, formatUsdShort } from '../format.js';
import type { ExitKind } from './types.js';
import { formatShortTime, formatWhen } from './words.js';

/**
 * What taking an exit did, as a typed view model: which exit, what happened, and the facts (times, money, ids, what
 * runs next). Each surface renders it (the prompt below; `--json` carries it as it is). Pure.
 */

interface Decided {
  wallId: string;
  /** When it was taken, and the zone its times are rendered in. */
  atMs: number;
  timeZone: string;
}

/** 1 and 4: the session resumed on the platform key, here in its pane or by `sleds go <wall>` in a terminal. */
export interface OnKeyOutcome extends Decided {
  exit: 'continue' | 'switch';
  result: 'continuing';
  where: 'pane' | 'terminal';
  /** The harness named in the sentence (Codex's: it keeps no pane to resume in); null: "this session". */
  harnessName: string | null;
  /** The cheaper model it runs on (4), or null (1: the same model). */
  model: string | null;
  /** The seat's allowance left on the key; null when uncapped. */
  allowanceLeftMicros: number | null;
}

/** 2: a plain hold (the harness continues by itself at the reset) or a moved one (sleds resumes it then). */
export interface HoldOutcome extends Decided {
  exit: 'hold';
  result: 'held' | 'scheduled';
  resumesAtMs: number;
  /** Who resumes the session: the harness itself (a plain hold) or sleds (a moved hold, Codex). */
  resumedBy: 'harness' | 'sleds';
  harnessName: string;
  /** Whether the harness's own continue at the reset is held back (a moved hold of a harness that continues by itself). */
  ownContinueHeldBack: boolean;
}

/** 3: queued as an overnight job (a one-node overnight route) for the policy's window on the batch tier. */
export interface OvernightOutcome extends Decided {
  exit: 'overnight';
  result: 'scheduled';
  startMs: number;
  endMs: number;
  /** The job's id, as `sleds queue` lists it and `sleds queue cancel` takes it. */
  job: string;
  /** Its band at ½ price and its cap, micro-dollars. */
  lowMicros: number;
  highMicros: number;
  capMicros: number;
}

/** 6: the session runs itself headless at the reset (or the time given), on the same model. */
export interface DeferOutcome extends Decided {
  exit: 'defer';
  result: 'scheduled';
  runsAtMs: number;
}

/** 5: the snapshot sealed to a teammate; `words` are the hand-off's own (core/handoff/answer.ts). */
export interface HandoffOutcome extends Decided {
  exit: 'handoff';
  result: 'handed-off';
  handoffId: string;
  words: string;
}

export type ExitOutcome = OnKeyOutcome | HoldOutcome | OvernightOutcome | DeferOutcome | HandoffOutcome;

/** The commands that follow from an outcome: what the user can run next. */
export function nextCommands(o: ExitOutcome): string[] {
  switch (o.exit) {
    case 'continue':
    case 'switch':
      return o.where === 'terminal' ? [`sleds go ${o.wallId}`] : [];
    case 'hold':
      return o.result === 'scheduled' ? ['/sled cancel'] : [];
    case 'overnight':
      return ['sleds queue', `sleds queue cancel ${o.job}`];
    case 'defer':
      return ['sleds status', '/sled cancel'];
    case 'handoff':
      return ['sleds handoffs'];
  }
}

/** The outcome in the prompt's words (the wall's outcome line, as the card and `/sled N` show it). */
export function renderOutcomeForPrompt(o: ExitOutcome): string {
  const when = (ms: number): string => formatWhen(ms, o.atMs, o.timeZone);
  switch (o.exit) {
    case 'continue':
    case 'switch': {
      const via = o.model ? ` on ${o.model}` : '';
      const allowance = o.allowanceLeftMicros === null ? '' : ` Allowance left ${formatUsd(o.allowanceLeftMicros)}.`;
      if (o.where === 'pane') return `Continuing this session${via} on the platform key, here in this pane.${allowance}`;
      const what = o.harnessName ? `this ${o.harnessName} session` : 'this session';
      return `Run \`sleds go ${o.wallId}\` in a terminal: it resumes ${what}${via} on the platform key.${allowance}`;
    }
    case 'hold': {
      if (o.resumedBy === 'harness') return `Holding: ${o.harnessName} continues by itself at ${when(o.resumesAtMs)}. Nothing is spent until then.`;
      const held = o.ownContinueHeldBack ? ` ${o.harnessName}'s own continue at the reset is held back.` : '';
      return `Holding until ${when(o.resumesAtMs)}; sleds resumes this session then.${held} /sled cancel undoes it.`;
    }
    case 'overnight':
      return `Queued as overnight job ${o.job} for tonight's window (${formatShortTime(o.startMs, o.timeZone)}–${formatShortTime(o.endMs, o.timeZone)}) on the batch tier at ½ price (${formatUsdShort(o.lowMicros)}–${formatUsdShort(o.highMicros).slice(1)}, cap ${formatUsdShort(o.capMicros)}): this session resumes headless where it stopped, in its own worktree. \`sleds queue\` shows it; /sled cancel undoes it.`;
    case 'defer':
      return `Deferred: this session runs itself headless at ${when(o.runsAtMs)} on the same model; the result shows at your next prompt and in \`sleds status\`. /sled cancel undoes it.`;
    case 'handoff':
      return o.words;
  }
}

/** Who took the exit: the policy (and its rule) or the user at the prompt. */
export interface TakenBy {
  exit: ExitKind;
  number: number;
  title: string;
  by: 'policy' | 'user';
  rule: string | null;
}

/** `/sled N`'s answer at the prompt: who chose which exit, then what it did. */
export function renderTakenForPrompt(t: TakenBy, o: ExitOutcome): string {
  const who = t.by === 'policy' ? `The policy chose ${t.number} ${t.title}${t.rule ? ` (rule: ${t.rule})` : ''}.` : `${t.number} ${t.title}.`;
  return `${who} ${renderOutcomeForPrompt(o)}`;
}
