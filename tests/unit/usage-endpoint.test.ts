import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { instantMs, readingsFromUsage, retryAfterMs, scopeFamily, type UsageParse, type UsageReadings } from '../../core/usage-endpoint.js';
import { describeCredentials, fingerprint, keychainServices, parseCredentials } from '../../musher/quota/credentials.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'usage-endpoint');
const text = (name: string): string => readFileSync(join(FIXTURES, name), 'utf8');
const json = (name: string): unknown => JSON.parse(text(name));

function ok(r: UsageParse): UsageReadings {
  if (!r.ok) throw new Error(`expected readings, got: ${r.error}`);
  return r;
}

const bars = (r: UsageReadings): Array<[string, number, number | null]> => r.bars.map((b) => [b.window, b.usedPct, b.resetsAtMs]);

describe('readingsFromUsage: real-shaped answers', () => {
  it('flat windows: utilization is already a percentage; null buckets and codename keys are no bars', () => {
    const at = Date.UTC(2026, 3, 11, 3, 0);
    const r = ok(readingsFromUsage(text('flat-2026-04.json'), at));
    expect(bars(r)).toEqual([
      ['five_hour', 33, Date.parse('2026-04-11T07:00:00.528Z')],
      ['seven_day', 13, Date.parse('2026-04-17T00:59:59.951Z')],
      ['seven_day_sonnet', 1, Date.parse('2026-04-17T20:59:59.951Z')],
    ]);
    expect(r.bars.every((b) => b.from === 'flat' && b.active === null)).toBe(true);
    expect(r.credits).toMatchObject({ enabled: false, currency: null, exponent: 2, usedMinor: null, monthlyLimitMinor: null, utilizationPct: null });
    expect(r.notes).toEqual([]);
    expect(r.observedAt).toBe(at);
  });

  it('both shapes: limits[] wins and adds the scoped weekly windows; a scope without a reading is skipped', () => {
    const r = ok(readingsFromUsage(json('limits-2026-09.json'), Date.UTC(2026, 8, 30, 12)));
    expect(bars(r)).toEqual([
      ['five_hour', 42.5, Date.parse('2026-09-30T15:00:00Z')],
      ['seven_day', 71, Date.parse('2026-10-03T09:00:00Z')],
      ['seven_day_fable', 57, Date.parse('2026-10-03T09:00:00Z')],
      ['seven_day_opus', 33, Date.parse('2026-10-03T09:00:00Z')],
    ]);
    expect(r.bars.map((b) => [b.from, b.active])).toEqual([
      ['limits', true],
      ['limits', true],
      ['limits', false],
      ['limits', false],
    ]);
    // extra_usage (cents) and spend (minor units) agree: $10.00 of $50.00.
    expect(r.credits).toEqual({
      enabled: true,
      currency: 'USD',
      exponent: 2,
      usedMinor: 1000,
      monthlyLimitMinor: 5000,
      remainingMinor: 4000,
      usedMicros: 10_000_000,
      monthlyLimitMicros: 50_000_000,
      utilizationPct: 20,
      disabledReason: null,
      from: 'spend',
    });
    expect(r.notes).toEqual([]);
  });

  it('limits[] only: 0.5 is half a percent, unknown kinds are noted, EUR spend exact to the cent', () => {
    const r = ok(readingsFromUsage(json('limits-only-eur-spend.json'), Date.UTC(2026, 6, 15, 10)));
    expect(bars(r)).toEqual([
      ['five_hour', 0.5, Date.parse('2026-07-15T12:00:00Z')],
      ['seven_day', 42, Date.parse('2026-07-20T12:00:00Z')],
      ['seven_day_fable', 66, Date.parse('2026-07-20T12:00:00Z')],
    ]);
    expect(r.bars.find((b) => b.window === 'seven_day_fable')?.active).toBe(true);
    expect(r.notes).toEqual(['limits[]: kind "inactive_pool" not tracked']);
    expect(r.credits).toMatchObject({
      enabled: false,
      currency: 'EUR',
      usedMinor: 53411,
      monthlyLimitMinor: 55000,
      remainingMinor: 1589,
      usedMicros: 534_110_000,
      utilizationPct: 97.1,
      disabledReason: 'out_of_credits',
      from: 'spend',
    });
  });

  it('extra_usage in a zero-decimal currency: decimal_places 0 means whole yen', () => {
    const r = ok(readingsFromUsage(json('extra-usage-jpy.json'), Date.UTC(2026, 7, 1)));
    expect(r.credits).toMatchObject({ currency: 'JPY', exponent: 0, usedMinor: 1250, monthlyLimitMinor: 3000, usedMicros: 1_250_000_000, from: 'extra_usage' });
  });

  it('Enterprise seat: every window null → no bars, credits still read (cents → $105.87 of $300.00)', () => {
    const r = ok(readingsFromUsage(json('enterprise-null-windows.json'), Date.UTC(2026, 7, 1)));
    expect(r.bars).toEqual([]);
    expect(r.credits).toMatchObject({ usedMinor: 10587, monthlyLimitMinor: 30000, usedMicros: 105_870_000, monthlyLimitMicros: 300_000_000, utilizationPct: 35.3 });
  });

  it('an empty object is a valid answer with nothing in it', () => {
    expect(readingsFromUsage({}, 0)).toEqual({ ok: true, observedAt: 0, bars: [], credits: null, notes: [] });
    expect(readingsFromUsage('{}', 5)).toMatchObject({ ok: true, bars: [], credits: null });
  });
});

describe('readingsFromUsage: the utilization scale is declared, never guessed', () => {
  const body = { five_hour: { utilization: 0.42, resets_at: null }, seven_day: { utilization: 42, resets_at: null }, extra_usage: { utilization: 0.2 } };
  it.each([
    ['percent (the endpoint, default)', undefined, [0.4, 42], 0.2],
    ['percent (explicit)', 'percent' as const, [0.4, 42], 0.2],
    ['fraction (0–1 sources such as the rate-limit headers)', 'fraction' as const, [42, 100], 20],
  ])('%s', (_name, utilizationScale, expected, credit) => {
    const r = ok(readingsFromUsage(body, 0, utilizationScale ? { utilizationScale } : {}));
    expect(r.bars.map((b) => b.usedPct)).toEqual(expected);
    expect(r.credits?.utilizationPct).toBe(credit);
  });

  it('limits[].percent is a percentage whatever the option', () => {
    const r = ok(readingsFromUsage({ limits: [{ kind: 'session', percent: 0.5 }] }, 0, { utilizationScale: 'fraction' }));
    expect(r.bars[0]?.usedPct).toBe(0.5);
  });

  it('caps at 100 and floors at 0, one decimal, like Claude Code', () => {
    const r = ok(readingsFromUsage({ five_hour: { utilization: 130 }, seven_day: { utilization: -3 }, seven_day_opus: { utilization: 12.345 } }, 0));
    expect(r.bars.map((b) => b.usedPct)).toEqual([100, 0, 12.3]);
  });
});

describe('readingsFromUsage: bad input is one line, never a throw', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['an HTML page', text('proxy-page.html'), /answered HTML \("Just a moment\.\.\."\), not JSON/],
    ['HTML without a title', '<html><body>502</body></html>', /answered HTML \(a web page\)/],
    ['plain garbage', 'upstream connect error', /not JSON \(22 bytes\)/],
    ['an empty body', '  ', /empty body/],
    ['a JSON array', '[1,2]', /not an object \(an array\)/],
    ['JSON null', null, /not an object \(null\)/],
    ['a number', 42, /not an object \(number\)/],
    ['the API error envelope', text('error-401.json'), /answered an error \(authentication_error: OAuth token has expired/],
    ['a bare error string', { error: 'rate limited' }, /answered an error \(error: rate limited\)/],
  ];
  it.each(cases)('%s', (_name, input, expected) => {
    const r = readingsFromUsage(input, 0);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatch(expected);
    expect(r.error).not.toMatch(/\n/);
  });

  it('never echoes the body (an error page may carry a token)', () => {
    const r = readingsFromUsage('Bearer sk-ant-oat01-SECRET is invalid', 0);
    expect(r.ok).toBe(false);
    expect(JSON.stringify(r)).not.toContain('SECRET');
  });

  it('a part with an odd shape sinks only itself', () => {
    const r = ok(
      readingsFromUsage(
        {
          five_hour: { utilization: '33' },
          seven_day: { utilization: 20, resets_at: 1_790_000_000 },
          limits: [{ kind: 'weekly_scoped', percent: '9', scope: { model: { display_name: 'Opus' } } }, { kind: 'weekly_scoped', percent: 9, scope: {} }],
          extra_usage: 'on',
        },
        0,
      ),
    );
    expect(bars(r)).toEqual([['seven_day', 20, 1_790_000_000_000]]);
    expect(r.credits).toBeNull();
    expect(r.notes).toEqual([
      'limits[]: an entry with an unexpected shape was ignored',
      'limits[]: a weekly_scoped entry names no model; ignored',
      'five_hour has an unexpected shape: ignored',
      'extra_usage has an unexpected shape: ignored',
    ]);
  });

  it('a window whose reset is already past says nothing about now: dropped with a note', () => {
    const r = ok(readingsFromUsage({ five_hour: { utilization: 90, resets_at: '2026-01-01T00:00:00Z' } }, Date.UTC(2026, 0, 1, 1)));
    expect(r.bars).toEqual([]);
    expect(r.notes).toEqual(['five_hour: resets_at is already past; reading dropped']);
  });

  it('unknown windows with a reading are noted, not recorded', () => {
    const r = ok(readingsFromUsage({ seven_day_omelette: { utilization: 4, resets_at: null }, iguana_necktie: null }, 0));
    expect(r.bars).toEqual([]);
    expect(r.notes).toEqual(['window "seven_day_omelette" not tracked']);
  });

  it('credits: a spend/extra_usage disagreement is noted, spend kept', () => {
    const r = ok(
      readingsFromUsage(
        { extra_usage: { is_enabled: true, used_credits: 1001, monthly_limit: 5000 }, spend: { used: { amount_minor: 1000 }, limit: { amount_minor: 5000 } } },
        0,
      ),
    );
    expect(r.credits).toMatchObject({ usedMinor: 1000, utilizationPct: 20, enabled: true });
    expect(r.notes).toEqual(['credits: spend.used (1000) and extra_usage.used_credits (1001) differ; spend kept']);
  });

  it('credits: a partial spend (used, no limit) does not override a complete extra_usage', () => {
    const r = ok(readingsFromUsage({ extra_usage: { is_enabled: true, monthly_limit: 5000, used_credits: 1000, utilization: 20 }, spend: { used: { amount_minor: 0 } } }, 0));
    expect(r.credits).toMatchObject({ usedMinor: 1000, monthlyLimitMinor: 5000, utilizationPct: 20, from: 'extra_usage' });
    expect(r.notes).toEqual(['credits: spend.used (0) and extra_usage.used_credits (1000) differ; extra_usage kept']);
  });
});

describe('scope families and instants', () => {
  it.each([
    [{ model: { display_name: 'Opus' } }, 'opus'],
    [{ model: { display_name: 'Claude Sonnet 5' } }, 'sonnet'],
    [{ model: { display_name: 'Fable' } }, 'fable'],
    [{ model: { id: 'claude-opus-4-8', display_name: null } }, 'opus'],
    [{ surface: { display_name: 'OAuth apps' } }, 'oauth_apps'],
    [{ model: { id: null, display_name: '' } }, null],
    [null, null],
  ])('%j → %s', (scope, family) => {
    expect(scopeFamily(scope)).toBe(family);
  });

  it('instants: ISO with microseconds, epoch seconds, epoch ms, garbage', () => {
    expect(instantMs('2026-04-11T07:00:00.528743+00:00')).toBe(Date.UTC(2026, 3, 11, 7, 0, 0, 528));
    expect(instantMs(1_790_000_000)).toBe(1_790_000_000_000);
    expect(instantMs(1_790_000_000_123)).toBe(1_790_000_000_123);
    expect(instantMs('soon')).toBeNull();
    expect(instantMs(null)).toBeNull();
  });
});

describe('retryAfterMs', () => {
  const now = Date.UTC(2026, 10, 29, 14, 0);
  it.each([
    ['120', 120_000],
    [' 7 ', 7_000],
    ['1.5', 1_500],
    ['0', null],
    ['', null],
    [null, null],
    ['soon', null],
    [new Date(now + 600_000).toUTCString(), 600_000],
    [new Date(now - 1_000).toUTCString(), null],
  ])('%s → %s', (value, expected) => {
    expect(retryAfterMs(value, now)).toBe(expected);
  });
});

describe('credentials (pure part)', () => {
  const now = Date.UTC(2026, 10, 29);
  const file = (oauth: unknown): string => JSON.stringify({ claudeAiOauth: oauth });

  it('a good login: token, 12-hex fingerprint, expiry, plan', () => {
    const c = parseCredentials(file({ accessToken: 'sk-ant-oat01-abc', refreshToken: 'r', expiresAt: now + 3_600_000, subscriptionType: 'max' }), '/x/.credentials.json', 'file', now);
    expect(c).toEqual({ ok: true, token: 'sk-ant-oat01-abc', fingerprint: fingerprint('sk-ant-oat01-abc'), expiresAt: now + 3_600_000, source: 'file', where: '/x/.credentials.json', subscriptionType: 'max' });
    expect(fingerprint('sk-ant-oat01-abc')).toMatch(/^[0-9a-f]{12}$/);
    expect(fingerprint('sk-ant-oat01-abd')).not.toBe(fingerprint('sk-ant-oat01-abc'));
  });

  it('an expired token is reported with its fingerprint, not used', () => {
    const c = parseCredentials(file({ accessToken: 'tok', expiresAt: now - 1 }), '/x/.credentials.json', 'file', now);
    expect(c).toMatchObject({ ok: false, reason: 'expired', fingerprint: fingerprint('tok') });
    if (!c.ok) expect(c.message).toMatch(/expired at 2026-11-28T23:59:59.999Z — run `claude` once/);
  });

  it('expiresAt in seconds is understood', () => {
    const c = parseCredentials(file({ accessToken: 'tok', expiresAt: Math.floor(now / 1000) + 60 }), 'f', 'file', now);
    expect(c).toMatchObject({ ok: true, expiresAt: now + 60_000 });
  });

  it.each([
    ['no claudeAiOauth', JSON.stringify({ other: 1 }), 'no-token'],
    ['an empty token', file({ accessToken: '' }), 'no-token'],
    ['a wrong shape', JSON.stringify({ claudeAiOauth: 'x' }), 'malformed'],
    ['not JSON (quoting a secret)', '{"claudeAiOauth":{"accessToken":"sk-ant-oat01-SECRET"', 'malformed'],
  ])('%s → %s, and the message never holds the secret', (_name, body, reason) => {
    const c = parseCredentials(body, '/x/.credentials.json', 'file', now);
    expect(c).toMatchObject({ ok: false, reason });
    expect(JSON.stringify(c)).not.toContain('SECRET');
  });

  it('a doctor line either way, never the token', () => {
    const good = parseCredentials(file({ accessToken: 'sk-ant-oat01-SECRET', expiresAt: now + 90 * 60_000 }), '/x/.credentials.json', 'file', now);
    expect(describeCredentials(good, now)).toBe(`claude login: ok (credentials file, token ${fingerprint('sk-ant-oat01-SECRET')}, expires in 90 min)`);
    const bad = parseCredentials('nope', '/x/.credentials.json', 'file', now);
    expect(describeCredentials(bad, now)).toBe('claude login: /x/.credentials.json is not valid JSON — sign in again with `claude` (/login)');
  });

  it('keychain service names: suffixed by sha256(config dir) when CLAUDE_CONFIG_DIR is set', () => {
    expect(keychainServices('/Users/a/.claude', false)).toEqual(['Claude Code-credentials']);
    const [suffixed, plain] = keychainServices('/tmp/cc', true);
    expect(suffixed).toMatch(/^Claude Code-credentials-[0-9a-f]{8}$/);
    expect(plain).toBe('Claude Code-credentials');
  });
});
