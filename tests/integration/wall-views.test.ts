import { describe, expect, it } from 'vitest';
import { sleds, startMusher, status, waitFor, type SledsWorld } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';
import { limitAhead } from '../support/limit-ahead.js';
import { ExitOutcomeSchema, WallCardSchema } from '../../protocol/schemas.js';
import { renderCardForPrompt } from '../../core/wall/card.js';
import { renderWallCardForTerminal } from '../../cli/wall-view.js';

/**
 * Issue 13 part 5: a real musher answers `GET /v1/wall/:id` with the WallCard view model beside the prompt's card,
 * `sleds wall show` renders that model, and an exit taken at the wall keeps its ExitOutcome in the wall's log.
 */

const newWorld = useWorlds();
const SESSION = 'wall-view-sess-1';
const LIMIT = limitAhead();

const hook = (w: SledsWorld, event: string, body: Record<string, unknown>) =>
  sleds(w, ['hook', event], JSON.stringify({ session_id: SESSION, cwd: '/tmp', hook_event_name: event, ...body }));

async function prompt(w: SledsWorld, text: string): Promise<{ decision?: string; reason?: string } | null> {
  const r = await hook(w, 'UserPromptSubmit', { prompt: text });
  expect(r.code).toBe(0);
  return r.stdout ? JSON.parse(r.stdout) : null;
}

describe('the wall as a view model, over the socket', () => {
  it('`sleds wall show` renders the WallCard musher sends; --json carries it beside the card; the outcome of /sled 2 is kept typed', async () => {
    const w = newWorld({ SLEDS_NO_AUTOSTART: '1', SLEDS_SEAT: 'dana' });
    await startMusher(w);
    await hook(w, 'SessionStart', { source: 'startup', model: 'claude-opus-5-5' });
    await hook(w, 'StopFailure', { error: 'rate_limit', last_assistant_message: LIMIT.message });
    const wallId = (await waitFor('the wall to open', async () => (await status(w)).wallBook[0]))!.wallId;
    await waitFor('the snapshot', async () => (await status(w)).wallBook[0]?.snapshotId);

    const held = await prompt(w, '/sled 2');
    expect(held?.reason).toMatch(/^2 Hold until reset\. Holding: Claude Code continues by itself at /);

    const shown = await sleds(w, ['wall', 'show', wallId, '--json']);
    expect(shown.code).toBe(0);
    const body = JSON.parse(shown.stdout) as { card: string; wallCard: unknown; events: Array<{ kind: string; detail: Record<string, unknown> }> };
    const card = WallCardSchema.parse(body.wallCard);
    expect(card.exits.map((e) => [e.number, e.kind, e.available])).toEqual([
      [1, 'continue', false],
      [2, 'hold', true],
      [3, 'overnight', false],
      [4, 'switch', false],
      [5, 'handoff', false],
      [6, 'defer', true],
    ]);
    expect(card.exits[0]!.whyNot).toBe('no platform key configured (sleds key set anthropic)');
    expect(card).toMatchObject({ wallId, window: 'five_hour', windowTitle: '5-hour', snapshot: { id: (await status(w)).wallBook[0]!.snapshotId } });
    expect(card.pick).toMatchObject({ exit: 'hold', number: 2, by: 'user', rule: null });
    expect(card.pick!.outcome).toMatch(/^Holding: Claude Code continues by itself at /);
    // The card in the prompt's words is the same model rendered, and the terminal renders the model.
    expect(body.card).toBe(renderCardForPrompt(card));
    const text = await sleds(w, ['wall', 'show', wallId]);
    expect(text.stdout).toBe(`${renderWallCardForTerminal(card)}\n`);

    const outcome = body.events.find((e) => e.kind === 'outcome')!.detail.outcome;
    expect(ExitOutcomeSchema.parse(outcome)).toMatchObject({ exit: 'hold', result: 'held', resumedBy: 'harness', harnessName: 'Claude Code', wallId, resumesAtMs: card.resetAtMs });
  });
});
