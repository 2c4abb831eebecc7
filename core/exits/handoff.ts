import { exitNumber, type ExitContext, type Offer } from './types.js';
import { formatIdle } from './words.js';

const NO_ROSTER = 'no teammate in the roster (.sleds/roster.yml)';

/** `/sled 5 dana` for each teammate who can be named: "/sled 5 dana", "/sled 5 dana or /sled 5 lee". */
function nameThem(teammates: ReadonlyArray<{ handle: string }>): string {
  return teammates.map((t) => `/sled 5 ${t.handle}`).join(' or ');
}

/** 5 — hand the session to a teammate, who picks it up with /sled pickup on their machine. */
export function price(ctx: ExitContext): Offer {
  const base = { exit: 'handoff' as const, number: exitNumber('handoff') };
  const t = ctx.teammate;
  const others = ctx.teammates ?? [];
  if (!t) {
    if (others.length === 0) return { ...base, title: 'Hand off', ok: false, detail: NO_ROSTER, short: 'hand off', cost: null };
    // Nobody to choose by default; each of them can still be named.
    const who = others.length === 1 ? `${others[0]!.name} owns` : `none of ${others.map((o) => o.name).join(', ')} owns`;
    const detail = others.length === 1 ? `${who} none of the changed files — ${nameThem(others)}` : `${who} the changed files — ${nameThem(others)}`;
    return { ...base, title: 'Hand off', ok: false, detail, short: 'hand off', cost: null };
  }
  return priceTo(ctx, t, t.why === 'headroom' ? 'has the most headroom' : 'owns the changed files');
}

/**
 * 5 to a teammate named at the wall (`/sled 5 dana`): anyone in the roster but this seat, whatever files they own.
 * Null when the wall does not know its roster (opened before it was kept): the wall's own offer stands.
 */
export function priceNamed(ctx: ExitContext, handle: string): Offer | null {
  if (!ctx.teammates) return null;
  const named = ctx.teammates.find((t) => t.handle.toLowerCase() === handle.toLowerCase());
  if (!named) {
    const detail = ctx.teammates.length === 0 ? NO_ROSTER : `${handle} is not in the roster (.sleds/roster.yml) — ${nameThem(ctx.teammates)}`;
    return { exit: 'handoff', number: exitNumber('handoff'), title: 'Hand off', ok: false, detail, short: 'hand off', cost: null };
  }
  const idleMs = ctx.teammate && ctx.teammate.handle.toLowerCase() === named.handle.toLowerCase() ? ctx.teammate.idleMs : null;
  return priceTo(ctx, { ...named, idleMs }, 'is in the roster');
}

function priceTo(ctx: ExitContext, t: { name: string; idleMs: number | null }, why: string): Offer {
  const base = { exit: 'handoff' as const, number: exitNumber('handoff') };
  const title = `Hand off to ${t.name}`;
  if (!ctx.handoffReady) return { ...base, title, ok: false, detail: `${t.name} ${why}; hand-offs are not set up on this machine yet`, short: t.name, cost: null };
  const idle = t.idleMs !== null ? `(idle ${formatIdle(t.idleMs)}) · ` : '';
  return { ...base, title, ok: true, detail: `${idle}Slack + /sled pickup`, short: t.name, cost: null };
}
