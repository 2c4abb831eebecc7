import { describe, expect, it } from 'vitest';
import { price, priceNamed } from '../../core/exits/handoff.js';
import type { ExitContext } from '../../core/exits/types.js';
import { RosterFile, recipientOf } from '../../core/roster.js';

const roster = RosterFile.parse({
  teammates: [{ handle: 'jake', name: 'Jake' }, { handle: 'dana', name: 'Dana', areas: ['docs/**'] }, { handle: 'lee', name: 'Lee', areas: ['*.ts'] }],
});

describe('who a hand-off goes to when nobody is named', () => {
  it.each([
    ['the owner of the changed files', ['cart.ts'], 'jake', () => null, { handle: 'lee', why: 'owner' }],
    ['the owner, before anyone idle longer', ['docs/a.md'], 'jake', (h: string) => (h === 'lee' ? 9e6 : 1), { handle: 'dana', why: 'owner' }],
    ['nobody owns them: the teammate idle longest', ['Makefile'], 'jake', (h: string) => (h === 'lee' ? 9e6 : h === 'dana' ? 1 : 5e9), { handle: 'lee', why: 'headroom' }],
    ['nobody owns them and no idle time is known: nobody', ['Makefile'], 'jake', () => null, null],
    ['never this seat, however idle', ['Makefile'], 'jake', (h: string) => (h === 'jake' ? 9e9 : null), null],
  ] as const)('%s', (_name, files, self, idleOf, want) => {
    const got = recipientOf(roster, files, self, [], idleOf);
    expect(got ? { handle: got.who.handle, why: got.why } : null).toEqual(want);
  });
});

const ctx = (over: Partial<ExitContext>): ExitContext => ({
  nowMs: 0,
  timeZone: 'UTC',
  wall: { window: 'five_hour', resetAtMs: 1 },
  session: { id: 's', harness: 'claude-code', provider: 'anthropic', model: null },
  remaining: { usd: null, minutes: null, fit: null, burnPerHourMicros: null },
  key: null,
  cheaper: null,
  overnight: null,
  teammate: null,
  teammates: [{ handle: 'dana', name: 'Dana' }],
  handoffReady: true,
  coldCache: null,
  ...over,
});

describe('exit 5 priced for the card and for a teammate named at the wall', () => {
  it.each([
    ['nobody in the roster', { teammates: [] }, false, 'no teammate in the roster (.sleds/roster.yml)'],
    ['one teammate, owning none of the files', {}, false, 'Dana owns none of the changed files — /sled 5 dana'],
    ['two, owning none', { teammates: [{ handle: 'dana', name: 'Dana' }, { handle: 'lee', name: 'Lee' }] }, false, 'none of Dana, Lee owns the changed files — /sled 5 dana or /sled 5 lee'],
    ['the owner', { teammate: { handle: 'dana', name: 'Dana', idleMs: null, why: 'owner' as const } }, true, 'Slack + /sled pickup'],
    ['chosen by headroom, keys missing', { handoffReady: false, teammate: { handle: 'dana', name: 'Dana', idleMs: 60_000, why: 'headroom' as const } }, false, 'Dana has the most headroom; hand-offs are not set up on this machine yet'],
  ])('the card: %s', (_name, over, ok, detail) => {
    expect(price(ctx(over))).toMatchObject({ ok, detail });
  });

  it.each([
    ['a teammate who owns nothing', 'Dana', {}, true, 'Hand off to Dana', 'Slack + /sled pickup'],
    ['a name not in the roster', 'zed', {}, false, 'Hand off', 'zed is not in the roster (.sleds/roster.yml) — /sled 5 dana'],
    ['named, keys missing', 'dana', { handoffReady: false }, false, 'Hand off to Dana', 'Dana is in the roster; hand-offs are not set up on this machine yet'],
  ])('named: %s', (_name, handle, over, ok, title, detail) => {
    expect(priceNamed(ctx(over), handle)).toMatchObject({ ok, title, detail });
  });

  it('a wall opened before it kept its roster keeps its own offer', () => {
    expect(priceNamed(ctx({ teammates: undefined }), 'dana')).toBeNull();
  });
});
