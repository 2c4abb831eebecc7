import { describe, expect, it } from 'vitest';
import { canonicalJson, canonicalReceipt } from '../../core/receipt/canonical.js';
import { bandWord, receiptLine, UNSIGNED_NOTE } from '../../core/receipt/line.js';
import { activeMinutes, ACTIVE_GAP_MS, filesTouched } from '../../core/receipt/activity.js';
import { keptHookFields } from '../../core/hook-fields.js';
import { remainingFromBand } from '../../core/estimate/remaining.js';
import type { Band } from '../../core/estimate/band.js';
import type { ReceiptBody } from '../../core/receipt/receipt.js';
import { RosterFile } from '../../core/roster.js';
import { checkSigner, type SignerCheck } from '../../core/receipt/signer.js';

const BAND: Band = { lowMicros: 4_000_000, highMicros: 11_000_000, lowMinutes: 20, highMinutes: 55, fit: { inBand: 13, of: 16 }, basis: 'receipts', n: 16 };

const BODY: ReceiptBody = {
  v: 1, id: 'rcpt1', taskId: 'task1', title: 'Fix the login test', type: 'bugfix', repo: '/src/shop', seat: 'dana', harness: 'claude-code',
  models: ['claude-opus-5-5'], costMicros: 7_400_000, keyMicros: 0, activeMinutes: 31.2, promptChars: 120, filesTouched: 3, turns: 4,
  band: BAND, inBand: true, startedAt: 1_000, endedAt: 2_000,
};

describe('canonical serialization', () => {
  it.each([
    [{ b: 1, a: 2 }, '{"a":2,"b":1}'],
    [{ z: { y: [3, { d: 1, c: null }], x: 'é "q"' } }, '{"z":{"x":"é \\"q\\"","y":[3,{"c":null,"d":1}]}}'],
    [{ a: undefined, b: true }, '{"b":true}'],
    [[1, 'two', null], '[1,"two",null]'],
    [{ B: 1, a: 2, _: 3 }, '{"B":1,"_":3,"a":2}'],
  ])('%j → %s', (value, text) => expect(canonicalJson(value)).toBe(text));

  it('the same receipt in any field order gives the same bytes', () => {
    const reversed = Object.fromEntries(Object.entries(BODY).reverse());
    expect(canonicalReceipt(reversed)).toBe(canonicalReceipt(BODY));
    expect(canonicalReceipt(BODY)).not.toMatch(/\s(?=["{[\d])/);
  });

  it('refuses numbers JSON cannot carry', () => {
    expect(() => canonicalJson({ a: Number.NaN })).toThrow(/NaN/);
  });
});

describe('receiptLine', () => {
  it.each([
    ['in band, signed', BODY, true, '31 min · $7.40 · in band · seat dana · claude-opus-5-5 · signed'],
    ['over band on dollars', { ...BODY, costMicros: 12_000_000, inBand: false }, true, '31 min · $12.00 · over band · seat dana · claude-opus-5-5 · signed'],
    ['over band on minutes', { ...BODY, activeMinutes: 80, inBand: false }, true, '80 min · $7.40 · over band · seat dana · claude-opus-5-5 · signed'],
    ['under band', { ...BODY, costMicros: 1_000_000, activeMinutes: 5, inBand: false }, true, '5 min · $1.00 · under band · seat dana · claude-opus-5-5 · signed'],
    ['no band, two models, unsigned', { ...BODY, band: null, inBand: null, models: ['claude-opus-5-5', 'claude-sonnet-5'] }, false, `31 min · $7.40 · no band · seat dana · claude-opus-5-5+claude-sonnet-5 · ${UNSIGNED_NOTE}`],
  ] as const)('%s', (_n, body, signed, line) => expect(receiptLine(body as ReceiptBody, signed)).toBe(line));

  it('a prior band judges nothing', () => {
    expect(bandWord({ ...BODY, band: { ...BAND, basis: 'prior' }, inBand: null })).toBe('no band');
  });
});

describe('active minutes', () => {
  const MIN = 60_000;
  it.each([
    ['no calls', [], 0],
    ['one call', [0], 0],
    ['steady work', [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((m) => m * MIN), 10],
    ['a wait for input is not work', [0, 2 * MIN, 4 * MIN, 64 * MIN, 66 * MIN], 6],
    ['a gap of exactly the threshold counts', [0, ACTIVE_GAP_MS], 5],
    ['two sessions merged, out of order', [10 * MIN, 0, 11 * MIN, 1 * MIN], 2],
  ])('%s', (_n, ts, minutes) => expect(activeMinutes(ts)).toBe(minutes));
});

describe('files touched', () => {
  it('distinct paths from what was kept of Claude Code edits and Codex patches; reads and shells do not count', () => {
    const payloads = [
      { tool_name: 'Edit', tool_input: { file_path: '/r/src/a.ts', old_string: 'x', new_string: 'y' } },
      { tool_name: 'Edit', tool_input: { file_path: '/r/src/a.ts' } },
      { tool_name: 'Write', tool_input: { file_path: '/r/src/b.ts', content: '' } },
      { tool_name: 'MultiEdit', tool_input: { file_path: '/r/src/c.ts', edits: [] } },
      { tool_name: 'NotebookEdit', tool_input: { notebook_path: '/r/n.ipynb' } },
      { tool_name: 'Read', tool_input: { file_path: '/r/src/d.ts' } },
      { tool_name: 'Bash', tool_input: { command: 'npm test' } },
      { tool_name: 'apply_patch', tool_input: { command: '*** Begin Patch\n*** Update File: src/e.ts\n@@\n-x\n+y\n*** Add File: src/f.ts\n+z\n*** End Patch' } },
      'garbage',
      null,
    ];
    expect(filesTouched(payloads.map((p) => keptHookFields('PostToolUse', p)))).toBe(6);
    expect(filesTouched([{ tool: 'Edit', files: ['/a', '/b'] }, { tool: 'Write', files: ['/a'] }, { files: 'garbage' }, null, 'x'])).toBe(2);
  });
});

describe('remaining work from the band', () => {
  it.each([
    ['nothing spent yet: the whole band', 0, 0, { usd: { loMicros: 4_000_000, hiMicros: 11_000_000 }, minutes: { lo: 20, hi: 55 }, fit: 13 / 16 }],
    ['part spent', 5_000_000, 25, { usd: { loMicros: 0, hiMicros: 6_000_000 }, minutes: { lo: 0, hi: 30 }, fit: 13 / 16 }],
    ['past the top of its band: not known', 11_000_000, 60, null],
  ])('%s', (_n, spent, minutes, want) => expect(remainingFromBand(BAND, spent, minutes)).toEqual(want));

  it('a prior or no band gives nothing: the card falls back to the burn', () => {
    expect(remainingFromBand({ ...BAND, basis: 'prior' }, 0, 0)).toBeNull();
    expect(remainingFromBand(null, 0, 0)).toBeNull();
  });
});

describe('whose key signed a receipt, by the roster', () => {
  const DANA = 'A'.repeat(43) + '=';
  const OTHER = 'B'.repeat(43) + '=';
  const roster = RosterFile.parse({ teammates: [{ handle: 'dana', keys: { x25519: DANA, ed25519: DANA } }, { handle: 'sam' }] });
  it.each<[string, RosterFile | null, string, string, SignerCheck['kind']]>([
    ["the seat's roster key", roster, 'dana', DANA, 'seat-key'],
    ['the seat by another case', roster, 'Dana', DANA, 'seat-key'],
    ['another key than the roster names', roster, 'dana', OTHER, 'other-key'],
    ['a seat without keys', roster, 'sam', OTHER, 'unknown'],
    ['a seat not in the roster', roster, 'lee', OTHER, 'unknown'],
    ['no roster', null, 'dana', DANA, 'unknown'],
  ])('%s', (_what, r, seat, signer, kind) => {
    expect(checkSigner(r, seat, signer).kind).toBe(kind);
  });
});
