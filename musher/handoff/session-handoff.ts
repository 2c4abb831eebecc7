import { storedHarness } from '../../harnesses/registry.js';
import type { Log } from '../log.js';
import type { AreaOwner } from '../roster/reader.js';
import type { SessionRow } from '../store/sessions.js';
import type { WallRow } from '../store/wall-book.js';
import type { HandoffService } from './service.js';
import type { ExitOutcome } from '../../core/exits/outcome.js';

export interface HandedOff {
  ok: boolean;
  line: string;
  /** The hand-off's id when one was sealed. */
  id?: string;
  /** Pushes and announces it, once the answer has gone (a push takes seconds). */
  after?: () => Promise<void>;
  /** The line once `after` has run: where it went and what Slack said (a caller that waits shows this one). */
  settled?: () => string;
  /** The hand-off's own words, settled once `after` has run: no "sled: " (the prompt's), for a caller that waits. */
  said?: () => string;
  /** At a wall, what exit 5 did as a typed outcome (settled once `after` has run); absent for a hand-off mid-work. */
  outcome?: () => ExitOutcome;
}

export interface SessionHandoffDeps {
  handoff: Pick<HandoffService, 'send'> | null;
  session(sessionId: string): SessionRow | null;
  /** The wall the session stands at, if any: there a hand-off is exit 5, with its bookkeeping. */
  wallOf(sessionId: string): WallRow | null;
  takeAtWall(wall: WallRow, to: string | null): Promise<HandedOff>;
  /** A snapshot of the session as it is now (transcript, git state, brief). */
  snapshot(session: SessionRow): Promise<{ id: string | null; note: string | null }>;
  ownerFor(cwd: string | null): Promise<AreaOwner | null>;
  log: Log;
}

/**
 * Hands a session to a teammate now, at a wall or not (`/sled handoff dana`, the MCP `handoff` tool, the picker's
 * Hand off): at a wall it is exit 5; mid-work the session is snapshotted first, then sealed to the teammate the same
 * way. The recipient is the one named, else the owner of the files the session changed.
 */
export async function handOffSession(d: SessionHandoffDeps, sessionId: string, to: string | null): Promise<HandedOff> {
  const wall = d.wallOf(sessionId);
  if (wall) return d.takeAtWall(wall, to);
  if (!d.handoff) return { ok: false, line: 'sled: hand-offs are not set up on this machine — run `sleds keys init` and commit the roster entry it prints' };
  const session = d.session(sessionId);
  if (!session) return { ok: false, line: `sled: session ${sessionId} is not known to musher yet — type a prompt in it first, then hand it off` };
  if (!session.cwd) return { ok: false, line: "sled: the session's folder is not known yet — type a prompt in it first, then hand it off" };
  // A session stored under a harness this sleds does not know is reported, never sent as some other harness's.
  const harness = storedHarness(session.harness);
  if (!harness.ok) return { ok: false, line: `sled: hand-off not sent: ${harness.error}` };
  const shot = await d.snapshot(session);
  if (!shot.id) return { ok: false, line: `sled: hand-off not sent: the session could not be snapshotted (${shot.note ?? 'the musher log says why'})` };
  const owner = to ? null : await d.ownerFor(session.cwd).catch(() => null);
  try {
    const sent = await d.handoff.send({ sessionId, harness: harness.id, wallId: null, snapshotId: shot.id }, session.cwd, to, owner?.handle ?? null);
    d.log.info(`session ${sessionId} handed off mid-work as ${sent.id}`);
    return { ok: true, id: sent.id, line: `sled: ${sent.line}`, after: sent.after, settled: () => `sled: ${sent.settled()}`, said: () => sent.settled() };
  } catch (e) {
    return { ok: false, line: `sled: hand-off not sent: ${(e as Error).message}` };
  }
}
