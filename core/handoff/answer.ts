import { cdAndRun, shellLine } from '../shell-quote.js';

/** The facts of a pickup the answer needs (musher's PickedUpSession has them). */
export interface PickedUp {
  id: string;
  sender: string;
  /** The harness the session was handed off from (a registry id). */
  harness: string;
  sessionId: string;
  dir: string;
  branch: string;
  /** Picked up by this seat before: nothing was installed again. */
  again?: boolean;
}

/**
 * What the answers say of a harness, from its adapter (musher/handoff/harness-words.ts): core names none.
 */
export interface HarnessWords {
  /** The registry id stored with sessions and hand-offs. */
  id: string;
  displayName: string;
  /** The `--harness` value `sleds pickup` takes for it (its binary's name). */
  pickupFlag: string;
  /** How a sled verb is typed at its prompt ('/sled', or 'sled' where a slash command cannot be routed). */
  sledCommand: string;
  /** How a person resumes a session in it, as words to paste (the adapter's resumeWords). */
  resumeWords(sessionId: string): string[];
}

/** The words of a harness by its id (musher passes the registry's). */
export type WordsOf = (harness: string) => HarnessWords;

/**
 * What the teammate is told after a pickup: where the work is, and the one command that resumes it (or the tmux
 * window it resumed in). The command is for pasting into a shell: every part is shell-quoted (the folder and the id
 * come from a bundle made on another machine).
 */
export function pickedUpAnswer(p: PickedUp, here: string, tmuxWindow: string | null, wordsOf: WordsOf): string {
  const where = p.again
    ? `You picked up ${p.id} from ${p.sender} before: the work is in ${p.dir} (branch ${p.branch}); nothing was installed again.`
    : `Picked up ${p.id} from ${p.sender}: the work is in ${p.dir} (branch ${p.branch}).`;
  const pickup = shellLine(['sleds', 'pickup', p.id]);
  const typedIn = wordsOf(here);
  if (p.harness === here) {
    const resume = cdAndRun(p.dir, typedIn.resumeWords(p.sessionId));
    if (p.again) return `${where}\nTo resume it: ${resume}`;
    if (tmuxWindow) return `${where}\n${p.sender}'s session resumed in a new tmux window, ${tmuxWindow}, next to this one (this session stays as it was). Elsewhere: ${resume}`;
    return `${where}\nThe session resumes there: ${resume}   (or \`${pickup}\` in a terminal)`;
  }
  return `${where}\nIt came from ${wordsOf(p.harness).displayName}: \`${shellLine(['sleds', 'pickup', p.id, '--harness', typedIn.pickupFlag])}\` in a terminal starts it there with the brief as the first prompt.`;
}

/**
 * What the sender is told once the hand-off is sealed: who has it and how they pick it up, in the harness the
 * roster says they use (`there`, musher's rosterHarness), and whether the session itself resumes there.
 */
export function handedOffLine(name: string, id: string, there: HarnessWords, from: string): string {
  const how = `in ${there.displayName} with ${pickupCommand(id, there)}`;
  const goesOn = there.id === from ? 'the session resumes there' : 'it starts there with the brief of this session';
  return `Handed off to ${name}. ${name} picks it up ${how} — ${goesOn}. You can keep working on something else.`;
}

/** What the teammate types to pick it up, in their harness. */
export function pickupCommand(id: string, there: HarnessWords): string {
  return `${there.sledCommand} pickup ${id}`;
}

/**
 * The answer's word on delivery as the hand-off is sealed (the push runs after the answer): whether Slack will tell
 * the teammate, and when it will not, why and what to tell them by hand. `slackWhy` null: Slack is set up for them.
 */
export function deliveryPendingLine(name: string, pickup: string, slackWhy: string | null): string {
  const pushing = 'It is being pushed to the remote now (sleds handoffs shows when it is there).';
  return slackWhy === null ? `${pushing} Slack tells ${name} once it is.` : `${pushing} Not sent on Slack (${slackWhy}): tell ${name}: ${pickup}.`;
}

/** The word on delivery once the push is done: where it went, and whether Slack told the teammate. */
export function deliveredLine(where: string, name: string, pickup: string, slackError: string | null): string {
  return slackError === null ? `Pushed to ${where}; Slack told ${name}.` : `Pushed to ${where}; not sent on Slack (${slackError}): tell ${name}: ${pickup}.`;
}

/** The short reasons Slack was not used, for the answer (the long ones, with their fix, are in the log). */
export const NO_SLACK_TOKEN = 'no Slack bot token — sleds slack set-token';
export const noSlackIdWords = (handle: string): string => `${handle} has no slack id in .sleds/roster.yml`;
