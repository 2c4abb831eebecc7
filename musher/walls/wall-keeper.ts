import { builtInHarness, HarnessId, harnessOfSource, knownHarnessId, storedHarness } from '../../harnesses/registry.js';
import { holdsPlatformKey } from '../../harnesses/port.js';
import { priceExits } from '../../core/exits/offers.js';
import { priceNamed } from '../../core/exits/handoff.js';
import { burnPerHourMicros } from '../../core/exits/burn.js';
import { exitByNumber, exitNumber, type ExitContext, type ExitKind } from '../../core/exits/types.js';
import { renderCardForPrompt, renderExitsHint, renderWallLine } from '../../core/wall/card.js';
import { wallCardOf, type WallCard } from '../../core/wall/view.js';
import { renderOutcomeForPrompt, renderTakenForPrompt, type ExitOutcome, type TakenBy } from '../../core/exits/outcome.js';
import { wallIdFrom, WALL_ID_LENGTH } from '../../core/wall/wall-id.js';
import { refinedBy, sameLimit } from '../../core/wall/fold.js';
import { formatWhen } from '../../core/exits/words.js';
import type { SledCommand } from '../../core/sled-command.js';
import type { HookAnswer } from '../../core/wire.js';
import type { WallRecord } from '../../core/usage.js';
import type { PriceTable } from '../../core/price-table.js';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import type { SessionStore } from '../store/sessions.js';
import type { UsageStore } from '../store/usage.js';
import type { WallBook, WallRow } from '../store/wall-book.js';
import { blockWith, carryOnWithNote } from '../hook-answers.js';
import { sourceHarnessId } from '../source-harness.js';
import type { ExitTakers, KeyPort, PolicyPort, SnapshotPort, TakeResult } from './ports.js';

/** The harness a preview without a session row is priced for: the statusline's, the only caller without one. */
const PREVIEW_HARNESS = HarnessId.parse(sourceHarnessId('statusline'));

/** A limit signal further than this from now is history being read back (a backfill), or a skewed clock: not a wall happening now. */
const LIVE_SIGNAL_MS = 15 * 60_000;
/** A wall with no known reset is taken as over after this long (the 5-hour window is the shortest). */
const UNKNOWN_RESET_SPAN_MS = 5 * 3_600_000;
/** After the reset, a wall whose work went elsewhere still blocks Claude Code's own auto-continue this long. */
const AFTER_RESET_GUARD_MS = 2 * 3_600_000;
/** Signals whose reset is an exact time (epoch seconds), not the whole minutes of Claude Code's message. */
const PRECISE_RESET_SOURCES: ReadonlySet<string> = new Set(['claude-transcript', 'codex-rollout', 'statusline']);
/** How often the statusline's preview of the exits is priced again. */
const PREVIEW_MS = 30_000;
/** Claude Code's own prompt when it continues by itself at the reset (shared/facts/claude-code.md §3). */
const AUTO_CONTINUE = /^Your claude\.ai usage limit has reset\./;
/** The exits whose work runs later, by a scheduled job: the wall stays until it has run. */
const SCHEDULED_EXITS: ReadonlySet<ExitKind> = new Set(['defer', 'overnight']);

/** An exit taken at a wall: the prompt's answer (`line`), who took which exit, and its typed outcome; or why not. */
export type TakenAtWall =
  | { ok: true; line: string; taken: TakenBy; outcome: ExitOutcome; after?: () => Promise<void>; settled?: () => ExitOutcome }
  | { ok: false; line: string; after?: undefined };

/** " <what the exit said>", or nothing when it said nothing: the sentence after a wall's own words at the prompt. */
function thenSaid(outcome: string | null): string {
  return outcome ? ` ${outcome}` : '';
}

export interface WallKeeperDeps {
  clock: Clock;
  log: Log;
  timeZone: string;
  seat: string;
  prices: PriceTable;
  sessions: SessionStore;
  usage: UsageStore;
  book: WallBook;
  policy: PolicyPort;
  key: KeyPort;
  snapshot: SnapshotPort;
  exits: ExitTakers;
  randomBytes(n: number): Uint8Array;
  /** The command `sleds go <wall>` runs: the session resumed on the key in the user's terminal. */
  goCommand?(wall: WallRow): Promise<{ file: string; args: string[]; env: Record<string, string>; cwd: string }>;
  /** The roster's owner of what the session changed (the hand-off's teammate). */
  roster?: {
    ownerFor(cwd: string | null, self: string): Promise<{ handle: string; name: string; idleMs: number | null; why?: 'owner' | 'headroom' } | null>;
    /** The roster's teammates but this seat: each can be named at the wall (`/sled 5 dana`). */
    teammatesAt?(cwd: string | null, self: string): Array<{ handle: string; name: string }>;
  };
  /** Whether hand-offs can be sealed and sent from this machine (its seat keys exist). */
  handoffReady?: () => Promise<boolean>;
  /** A wall's reset became known more precisely: a job scheduled for the old reset moves with it. */
  onResetMoved?(wallId: string, resetsAtMs: number): void;
  /** The worth the policy reads for a session (its task's); default the session's own. */
  worthOf?(sessionId: string): string | null;
  /** The remaining work from the band of the session's task (task sizing); null: none, the card shows the burn. */
  remainingOf?(sessionId: string): Omit<ExitContext['remaining'], 'burnPerHourMicros'> | null;
  /** The harness version a session runs, when known (for the snapshot). */
  harnessVersion?(sessionId: string): string | null;
  /** Whether the wall's bar has since been read back under 100% (usage rolled back, a promotion, another account). */
  barBackUnderFull?(wall: WallRow): boolean;
}

/**
 * The wall: turns limit signals into walls (one per session and window), prices the six exits, asks the policy,
 * answers the prompts typed at the wall, and takes the exit chosen. Owns the walls' rows (WallBook) and nothing else.
 */
export class WallKeeper {
  constructor(private readonly d: WallKeeperDeps) {}

  /** Signals being handled, per session: the next waits for the one before (see onSignal). */
  private readonly inFlight = new Map<string, Promise<unknown>>();

  /**
   * A fresh limit signal from any source. Opens a wall, or folds the signal into the session's wall of the same
   * limit. Signals of one session are handled one after another: opening a wall awaits (the key, the roster), and two
   * signals of one limit in flight together (the spool drain and the transcript follower) must not both open one.
   */
  onSignal(signal: WallRecord): Promise<WallRow | null> {
    const before = this.inFlight.get(signal.sessionId) ?? Promise.resolve();
    const mine = before.catch(() => undefined).then(() => this.handleSignal(signal));
    const tail = mine.catch(() => undefined);
    this.inFlight.set(signal.sessionId, tail);
    void tail.then(() => {
      if (this.inFlight.get(signal.sessionId) === tail) this.inFlight.delete(signal.sessionId);
    });
    return mine;
  }

  private async handleSignal(signal: WallRecord): Promise<WallRow | null> {
    const now = this.d.clock.now();
    if (!signal.sessionId || Math.abs(now - signal.timestampMs) > LIVE_SIGNAL_MS) return null;
    if (signal.resetsAtMs !== null && signal.resetsAtMs <= now) return null;
    const current = this.current(signal.sessionId);
    if (current && sameLimit(current, signal)) return this.fold(current, signal);
    return this.open(signal);
  }

  /** Another sight of an open wall: noted; its reset made exact and its window named when the signal knows better. */
  private fold(wall: WallRow, signal: WallRecord): WallRow | null {
    const now = this.d.clock.now();
    this.d.book.signal(wall.wallId, now, signal.source);
    const better = refinedBy(wall, { ...signal, precise: PRECISE_RESET_SOURCES.has(signal.source) });
    if (better.window !== null) this.d.book.setWindow(wall.wallId, better.window, now, signal.source);
    if (better.resetsAtMs !== null) {
      this.d.book.setReset(wall.wallId, better.resetsAtMs, now, signal.source);
      this.d.onResetMoved?.(wall.wallId, better.resetsAtMs);
    }
    return this.d.book.get(wall.wallId);
  }

  /** The session's wall that still matters now, closing the ones that are over. */
  current(sessionId: string): WallRow | null {
    const wall = this.d.book.latestForSession(sessionId);
    if (!wall || wall.state === 'closed') return null;
    const now = this.d.clock.now();
    const resetAt = wall.resetsAtMs ?? wall.hitAtMs + UNKNOWN_RESET_SPAN_MS;
    const over =
      wall.state === 'open' || wall.choice === 'hold'
        ? now >= resetAt && !(wall.choice === 'hold' && wall.choiceArg)
        : wall.choice !== null && SCHEDULED_EXITS.has(wall.choice)
          ? false // closed by its job
          : now >= resetAt + AFTER_RESET_GUARD_MS;
    if (over) {
      this.d.book.close(wall.wallId, now, 'the window reset');
      return null;
    }
    // A wall waiting for a choice, or a plain hold (it schedules nothing), is over once its bar reads under 100%
    // again: nothing is in the way any more. The other exits moved the work elsewhere and keep their guard.
    const waiting = wall.state === 'open' || (wall.choice === 'hold' && !wall.choiceArg);
    if (waiting && this.d.barBackUnderFull?.(wall)) {
      this.d.book.close(wall.wallId, now, 'its bar is back under 100%');
      return null;
    }
    return wall;
  }

  private async open(signal: WallRecord): Promise<WallRow> {
    const now = this.d.clock.now();
    const session = this.d.sessions.get(signal.sessionId);
    const harness = this.harnessOf(signal, session?.harness);
    const policy = this.d.policy.forDirectory(session?.cwd ?? null);
    const context = await this.context(signal, harness, session?.model ?? null, policy, session?.cwd ?? null);
    const offers = priceExits(context);
    const available = Object.fromEntries(offers.map((o) => [o.exit, o.ok ? { ok: true } : { ok: false, why: o.detail }])) as Record<ExitKind, { ok: boolean; why?: string }>;
    const decision = policy.decide({
      nowMs: now,
      timeZone: this.d.timeZone,
      window: signal.window,
      resetAtMs: signal.resetsAtMs,
      worth: this.d.worthOf ? this.d.worthOf(signal.sessionId) : this.d.sessions.worth(signal.sessionId),
      allowanceLeft: context.key?.allowanceLeft ?? null,
      owner: context.teammate ? { handle: context.teammate.handle, idleMs: context.teammate.idleMs } : null,
      available,
    });
    let wallId = '';
    for (;;) {
      wallId = wallIdFrom(this.d.randomBytes(WALL_ID_LENGTH));
      const row = { wallId, sessionId: signal.sessionId, harness, window: signal.window, resetsAtMs: signal.resetsAtMs, hitAtMs: now, signal: signal.source, context, offers, decision: decision.record };
      const opened = this.d.book.open(row, (open) => sameLimit(open, signal));
      if (opened.opened) break;
      // Another path opened this limit's wall while this one was pricing (the store's guard): the signal folds into it.
      if (opened.into) return this.fold(opened.into, signal)!;
    }
    this.d.log.warn(`wall ${wallId}: session ${signal.sessionId} hit ${signal.window ?? 'a usage limit'} (${signal.source}); policy: ${decision.choice}${decision.rule ? ` by rule '${decision.rule}'` : ''}`);
    for (const e of policy.errors) this.d.book.event({ wallId, at: now, kind: 'policy-error', detail: { error: e } });
    const wall = this.d.book.get(wallId)!;
    void this.snapshot(wall, session);
    if (decision.choice !== 'ask') {
      const result = await this.take(wall, decision.choice, null, 'policy', decision.rule);
      if (result.after) void result.after().catch((e: Error) => this.d.log.error(`wall ${wallId}: ${e.message}`));
    }
    return this.d.book.get(wallId)!;
  }

  private async snapshot(wall: WallRow, session: ReturnType<SessionStore['get']>): Promise<void> {
    try {
      const shot = await this.d.snapshot.take(wall, {
        cwd: session?.cwd ?? null,
        transcriptPath: session?.transcriptPath ?? null,
        model: session?.model ?? null,
        version: this.d.harnessVersion?.(wall.sessionId) ?? null,
      });
      this.d.book.setSnapshot(wall.wallId, shot.id, shot.note, this.d.clock.now());
    } catch (e) {
      this.d.log.error(`wall ${wall.wallId}: snapshot failed: ${(e as Error).message}`);
      this.d.book.setSnapshot(wall.wallId, null, (e as Error).message, this.d.clock.now());
    }
  }

  /**
   * The harness a wall's exits are priced for: the session's as stored; else the one harness that produces the
   * signal's source (a rollout is Codex's). A stored name sleds does not know is logged, not taken for another
   * harness's. Left: a preview for a session musher has no row of (its source, 'preview', names no harness) is
   * priced for the statusline's harness, as before — only the statusline asks for one without a session row.
   */
  private harnessOf(signal: WallRecord, stored: string | null | undefined): HarnessId {
    if (stored) {
      const found = storedHarness(stored);
      if (found.ok) return found.id;
      this.d.log.warn(`session ${signal.sessionId}: ${found.error}; its exits are priced for the harness of its ${signal.source} signal`);
    }
    return knownHarnessId(harnessOfSource(signal.source)?.id) ?? PREVIEW_HARNESS;
  }

  private async context(signal: WallRecord, harness: HarnessId, model: string | null, policy: ReturnType<PolicyPort['forDirectory']>, cwd: string | null): Promise<ExitContext> {
    const now = this.d.clock.now();
    const series = this.d.usage.sessionSeries(signal.sessionId, now - 24 * 3_600_000);
    const sessionModel = model ?? series.at(-1)?.model ?? null;
    const provider = builtInHarness(harness).provider;
    const keyed = holdsPlatformKey(provider) && (await this.d.key.configured(provider));
    const cheaper = sessionModel ? policy.cheaperModel(sessionModel) : null;
    return {
      nowMs: now,
      timeZone: this.d.timeZone,
      wall: { window: signal.window, resetAtMs: signal.resetsAtMs },
      session: { id: signal.sessionId, harness, provider: builtInHarness(harness).provider, model: sessionModel },
      remaining: { ...(this.remainingOf(signal.sessionId) ?? { usd: null, minutes: null, fit: null }), burnPerHourMicros: burnPerHourMicros(series) },
      key: keyed ? { allowanceLeft: this.d.key.allowanceLeft(this.d.seat, policy.allowance(this.d.seat), now) } : null,
      cheaper: cheaper && sessionModel ? { model: cheaper, priceRatio: this.priceRatio(sessionModel, cheaper, now) } : null,
      overnight: policy.overnightWindow(now, this.d.timeZone),
      teammate: (await this.d.roster?.ownerFor(cwd, this.d.seat).catch(() => null)) ?? null,
      teammates: this.teammatesAt(cwd),
      handoffReady: (await this.d.handoffReady?.()) ?? false,
      coldCache: this.coldCache(signal, now),
    };
  }

  private teammatesAt(cwd: string | null): Array<{ handle: string; name: string }> {
    try {
      return this.d.roster?.teammatesAt?.(cwd, this.d.seat) ?? [];
    } catch (e) {
      this.d.log.error(`wall: the roster at ${cwd ?? '?'}: ${(e as Error).message}`);
      return [];
    }
  }

  private remainingOf(sessionId: string): Omit<ExitContext['remaining'], 'burnPerHourMicros'> | null {
    try {
      return this.d.remainingOf?.(sessionId) ?? null;
    } catch (e) {
      this.d.log.error(`wall: the remaining work of ${sessionId}: ${(e as Error).message}`);
      return null;
    }
  }

  /**
   * Whether the prompt cache will have expired by the reset (5 minutes, or an hour when the session cached for an
   * hour), and what writing the session's context again will cost then.
   */
  private coldCache(signal: WallRecord, now: number): ExitContext['coldCache'] {
    const last = this.d.usage.lastCall(signal.sessionId);
    if (!last || signal.resetsAtMs === null) return null;
    const ttl = last.cachedForAnHour ? 3_600_000 : 5 * 60_000;
    if (signal.resetsAtMs - last.ts <= ttl) return null;
    const row = this.d.prices.lookup(last.model, now);
    const rate = row ? (last.cachedForAnHour ? row.base.cacheWrite1h : row.base.cacheWrite5m) : null;
    // Rates are pico-dollars per token.
    return { writeCostMicros: rate !== null ? Math.round((last.contextTokens * rate) / 1_000_000) : null };
  }

  /** How the cheaper model's price compares, on output tokens (a family's token classes keep the same ratios). */
  private priceRatio(from: string, to: string, now: number): number | null {
    const a = this.d.prices.lookup(from, now);
    const b = this.d.prices.lookup(to, now);
    if (!a || !b || a.base.output <= 0) return null;
    return b.base.output / a.base.output;
  }

  /** The wall as a view model: what every surface renders (the prompt's card, `sleds wall show`, `--json`). */
  view(wall: WallRow): WallCard {
    return wallCardOf({
      wallId: wall.wallId,
      window: wall.window,
      resetAtMs: wall.resetsAtMs,
      nowMs: this.d.clock.now(),
      timeZone: this.d.timeZone,
      snapshotId: wall.snapshotId,
      snapshotNote: wall.snapshotNote ?? (wall.snapshotId ? null : 'still being written'),
      remaining: wall.context.remaining,
      offers: wall.offers,
      choice: wall.choice
        ? { exit: wall.choice, by: wall.chosenBy ?? 'user', rule: this.ruleOf(wall), outcome: wall.outcome }
        : null,
    });
  }

  /** The card, as the user sees it at the prompt. */
  card(wall: WallRow): string {
    return renderCardForPrompt(this.view(wall));
  }

  private ruleOf(wall: WallRow): string | null {
    const chosen = [...this.d.book.events(wall.wallId)].reverse().find((e) => e.kind === 'chosen');
    return (chosen?.detail.rule as string | null | undefined) ?? null;
  }

  /**
   * A prompt typed in a session. Returns the answer when the wall has something to say, or null to let the rest
   * of musher handle it. `resumedFor` is the wall a resumed process was started for (its prompts are the exit).
   */
  async answerPrompt(p: { sessionId: string; harness: string; prompt: string; command: SledCommand | null; resumedFor: string | null }): Promise<{ answer: HookAnswer; after?: () => Promise<void> } | null> {
    const wall = this.current(p.sessionId);
    const cmd = p.command;
    if (!wall) {
      if (cmd?.verb === 'exit' || cmd?.verb === 'exits' || cmd?.verb === 'cancel') {
        return { answer: blockWith('sled: no wall in this session — /sled status shows the bars and when each is forecast to fill', p.harness) };
      }
      const result = cmd ? null : this.pendingResult(p.sessionId);
      return result ? { answer: carryOnWithNote(result, p.harness) } : null;
    }
    if (cmd?.verb === 'exits') return { answer: blockWith(this.card(wall), p.harness) };
    if (cmd?.verb === 'cancel') return { answer: blockWith(this.cancel(wall), p.harness) };
    if (cmd?.verb === 'exit' || cmd?.verb === 'handoff') {
      // `/sled handoff dana` at a wall is `/sled 5 dana`.
      const [kind, arg] = cmd.verb === 'exit' ? [exitByNumber(cmd.number)!, cmd.arg] : (['handoff', cmd.to] as const);
      const result = await this.take(wall, kind, arg, 'user', null);
      return { answer: blockWith(result.line, p.harness), after: result.after };
    }
    if (cmd) return null; // status, help: answered as anywhere else
    if (p.resumedFor === wall.wallId) return null; // the exit at work
    return this.atWall(wall, p.prompt, p.harness);
  }

  /** An ordinary prompt (or Claude Code's auto-continue) in a session at a wall. */
  private atWall(wall: WallRow, prompt: string, harness: string): { answer: HookAnswer } | null {
    const now = this.d.clock.now();
    const reset = wall.resetsAtMs;
    const beforeReset = reset === null || now < reset;
    const autoContinue = AUTO_CONTINUE.test(prompt.trim());
    if (wall.state === 'open') return beforeReset ? { answer: blockWith(this.card(wall), harness) } : null;
    const chosen = `${exitNumber(wall.choice!)} ${wall.offers.find((o) => o.exit === wall.choice)?.title ?? wall.choice}`;
    if (wall.choice === 'hold' && !wall.choiceArg) {
      // A plain hold is only chosen for a harness that continues by itself at the reset (musher/exits/hold.ts).
      if (!beforeReset) return null; // the harness's own continue: the hold doing its job
      const at = reset !== null ? formatWhen(reset, now, this.d.timeZone) : 'the reset';
      const lines = [`sled: holding until ${at}; ${builtInHarness(wall.harness).displayName} continues by itself then.${thenSaid(wall.outcome)}`, `Reply /sled 1 … /sled 6 to choose otherwise.  wall ${wall.wallId}`];
      return { answer: blockWith(lines.join('\n'), harness) };
    }
    if (autoContinue) {
      return { answer: blockWith(`sled: not continuing here — this session's work went to ${chosen} at the wall (wall ${wall.wallId}).${thenSaid(wall.outcome)}`, harness) };
    }
    if (!beforeReset) return null;
    const lines = [`sled: this session is past its wall by ${chosen}.${thenSaid(wall.outcome)}`, `Reply /sled exits for the card, /sled cancel to undo.  wall ${wall.wallId}`];
    return { answer: blockWith(lines.join('\n'), harness) };
  }

  /** Takes an exit, by the user's `/sled N` or the policy's choice. Unavailable exits say why and change nothing. */
  async take(wall: WallRow, kind: ExitKind, arg: string | null, by: 'policy' | 'user', rule: string | null): Promise<TakenAtWall> {
    // A teammate named at the wall is priced on their own: anyone in the roster can be handed the session.
    const offer = (kind === 'handoff' && arg ? priceNamed(wall.context, arg) : null) ?? wall.offers.find((o) => o.exit === kind);
    if (!offer || !offer.ok) {
      return { ok: false, line: `sled: ${exitNumber(kind)} ${offer?.title ?? kind} cannot be taken here: ${offer?.detail ?? 'not offered'}. /sled exits shows the others.` };
    }
    if (wall.choice && wall.choice !== kind) this.d.exits[wall.choice].cancel?.(wall);
    const now = this.d.clock.now();
    // The wall's life cycle refuses a choice at a wall that is over or was moved meanwhile (SPEC.md § wall).
    const moved = this.d.book.choose(wall.wallId, { exit: kind, arg, by, rule, at: now });
    if (!moved.ok) return { ok: false, line: `sled: ${moved.error}. /sled status shows the bars.` };
    const chosen = this.d.book.get(wall.wallId)!;
    let result: TakeResult;
    try {
      result = await this.d.exits[kind].take(chosen, arg);
    } catch (e) {
      result = { ok: false, line: `${offer.title} failed: ${(e as Error).message}` };
    }
    if (!result.ok) {
      this.d.book.reopen(wall.wallId, this.d.clock.now(), result.line);
      return { ok: false, line: `sled: ${result.line}\nThe wall is still open: /sled exits shows the others.  wall ${wall.wallId}` };
    }
    const said = renderOutcomeForPrompt(result.outcome);
    this.d.book.outcome(wall.wallId, this.d.clock.now(), said, { outcome: result.outcome });
    const taken: TakenBy = { exit: kind, number: offer.number, title: offer.title, by, rule };
    return { ok: true, line: renderTakenForPrompt(taken, result.outcome), taken, outcome: result.outcome, after: result.after, settled: result.settled };
  }

  private cancel(wall: WallRow): string {
    if (!wall.choice) return `sled: nothing to cancel — no exit taken yet at wall ${wall.wallId}. /sled exits shows them.`;
    const undone = this.d.exits[wall.choice].cancel?.(wall) ?? false;
    if (!undone) return `sled: ${exitNumber(wall.choice)} cannot be undone from here. /sled exits shows the card.`;
    const reopened = this.d.book.reopen(wall.wallId, this.d.clock.now(), 'cancelled by the user');
    if (!reopened.ok) return `sled: ${reopened.error}. /sled exits shows the card.`;
    return `sled: cancelled ${exitNumber(wall.choice)} at wall ${wall.wallId}. The wall is open again: /sled 1 … /sled 6.`;
  }

  /** The statusline's second line while the session is at a wall (open, or past it by a choice that is running). */
  statusLine(sessionId: string | null): string | null {
    if (!sessionId) return null;
    const wall = this.current(sessionId);
    if (!wall) return null;
    if (wall.state === 'open') return renderWallLine(wall.wallId, wall.offers);
    const offer = wall.offers.find((o) => o.exit === wall.choice);
    return `⛔ wall ${wall.wallId} · ${offer ? `${offer.number} ${offer.title.toLowerCase()}` : wall.choice} · /sled exits`;
  }

  private readonly previews = new Map<string, { at: number; amberAt: number; hint: string }>();

  /** What the statusline shows before a wall: the policy's amber threshold, and the exits the wall would offer. */
  preview(sessionId: string | null): { amberAt: number; hint: string } | null {
    return sessionId ? (this.previews.get(sessionId) ?? null) : null;
  }

  /** Prices the exits for a session's binding bar without opening a wall; at most every PREVIEW_MS per session. */
  async refreshPreview(sessionId: string, bar: { window: string; resetsAtMs: number | null }): Promise<void> {
    const now = this.d.clock.now();
    const last = this.previews.get(sessionId);
    if (last && now - last.at < PREVIEW_MS) return;
    this.previews.set(sessionId, { at: now, amberAt: last?.amberAt ?? 90, hint: last?.hint ?? '' });
    const session = this.d.sessions.get(sessionId);
    const policy = this.d.policy.forDirectory(session?.cwd ?? null);
    const signal: WallRecord = { source: 'preview', dedupKey: '', sessionId, timestampMs: now, window: bar.window, resetsAtMs: bar.resetsAtMs, message: '' };
    const harness = this.harnessOf(signal, session?.harness);
    const offers = priceExits(await this.context(signal, harness, session?.model ?? null, policy, session?.cwd ?? null));
    this.previews.set(sessionId, { at: now, amberAt: policy.amberAt, hint: renderExitsHint(offers) });
  }

  /** `sleds go <wall>`: what to run, or why not (one line). */
  async go(wallId: string): Promise<{ cmd: { file: string; args: string[]; env: Record<string, string>; cwd: string } } | { error: string }> {
    const wall = this.d.book.get(wallId);
    if (!wall) return { error: `no wall ${wallId} — sleds status lists the walls` };
    if (wall.state === 'closed') return { error: `wall ${wallId} is over (${wall.outcome ?? 'the window reset'})` };
    if (wall.choice !== 'continue' && wall.choice !== 'switch') {
      return { error: `wall ${wallId}: choose 1 (continue on the key) or 4 (cheaper model) first — type /sled 1 or /sled 4 in the session` };
    }
    if (!this.d.goCommand) return { error: 'the gateway is not running: set a platform key with `sleds key set anthropic`' };
    try {
      return { cmd: await this.d.goCommand(wall) };
    } catch (e) {
      return { error: `wall ${wallId}: ${(e as Error).message}` };
    }
  }

  /** `sleds policy explain <wall>`. */
  explain(wallId: string): string | null {
    const wall = this.d.book.get(wallId);
    if (!wall) return null;
    const events = this.d.book.events(wallId);
    const lines = [`wall ${wall.wallId} · session ${wall.sessionId} · ${wall.window ?? 'unknown window'} · hit ${new Date(wall.hitAtMs).toISOString()}`];
    lines.push(this.d.policy.explain(wall.decision));
    for (const e of events) {
      if (e.kind === 'chosen') lines.push(`${new Date(e.at).toISOString()} chosen: ${exitNumber(e.detail.exit as ExitKind)} ${String(e.detail.exit)} by ${String(e.detail.by)}${e.detail.rule ? ` (rule: ${String(e.detail.rule)})` : ''}`);
      if (e.kind === 'outcome') lines.push(`${new Date(e.at).toISOString()} outcome: ${String(e.detail.line)}`);
      if (e.kind === 'policy-error') lines.push(`policy error: ${String(e.detail.error)}`);
    }
    return lines.join('\n');
  }

  /** Closes a wall whose scheduled exit has run, with its result (shown at the next prompt and in status). */
  finish(wallId: string, line: string): void {
    const now = this.d.clock.now();
    this.d.book.outcome(wallId, now, line);
    this.d.book.close(wallId, now, 'its exit ran');
  }

  /** The result of an exit that ran later (a defer, a moved hold), shown once with the session's next prompt. */
  private pendingResult(sessionId: string): string | null {
    const wall = this.d.book.latestForSession(sessionId);
    if (!wall || wall.state !== 'closed' || !wall.outcome || !wall.choice) return null;
    const events = this.d.book.events(wall.wallId);
    if (!events.some((e) => e.kind === 'closed' && e.detail.why === 'its exit ran') || events.some((e) => e.kind === 'reported')) return null;
    this.d.book.event({ wallId: wall.wallId, at: this.d.clock.now(), kind: 'reported', detail: {} });
    return `sled: wall ${wall.wallId} — ${wall.outcome}`;
  }
}

