import { renderOutcomeForPrompt, type ExitOutcome } from '../core/exits/outcome.js';

/**
 * What an exit did, in the words an MCP tool answers the model with: the outcome's facts (core/exits/outcome.ts),
 * then what the model should do about it.
 */
export function renderOutcomeForTool(o: ExitOutcome): string {
  if (o.exit === 'handoff') return `${o.words} This session's work is theirs now: stop here and tell the person.`;
  return renderOutcomeForPrompt(o);
}

/** A hand-off the `handoff` tool made: at a wall, rendered from exit 5's outcome; mid-work, from its line. */
export function renderHandOffForTool(reply: { line: string; outcome?: ExitOutcome }): string {
  return reply.outcome ? renderOutcomeForTool(reply.outcome) : `${reply.line} This session's work is theirs now: stop here and tell the person.`;
}
