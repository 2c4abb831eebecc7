import { exitNumber, type ExitContext, type Offer } from './types.js';
import { formatIdle } from './words.js';

/** 5 — hand the session to a teammate, who picks it up with /sled pickup on their machine. */
export function price(ctx: ExitContext): Offer {
  const base = { exit: 'handoff' as const, number: exitNumber('handoff') };
  const t = ctx.teammate;
  if (!t) return { ...base, title: 'Hand off', ok: false, detail: 'no teammate in the roster (.sleds/roster.yml)', short: 'hand off', cost: null };
  const title = `Hand off to ${t.name}`;
  if (!ctx.handoffReady) return { ...base, title, ok: false, detail: `${t.name} owns the changed files; hand-offs are not set up on this machine yet`, short: t.name, cost: null };
  const idle = t.idleMs !== null ? `(idle ${formatIdle(t.idleMs)}) · ` : '';
  return { ...base, title, ok: true, detail: `${idle}Slack + /sled pickup`, short: t.name, cost: null };
}
