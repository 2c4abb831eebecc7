import { createElement } from 'react';
import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { PickView } from '../../cli/pick-view.js';
import type { Band } from '../../core/estimate/band.js';
import type { DispatchAnswer, PickerAnswer, PickerRow } from '../../core/picker/row.js';
import { buildPicker, type PickerInput } from '../../core/picker/rows.js';

const NOW = Date.UTC(2026, 10, 30, 14, 0);
const $ = (d: number): number => Math.round(d * 1_000_000);
const band = (lo: number, hi: number): Band => ({ lowMicros: $(lo), highMicros: $(hi), lowMinutes: 20, highMinutes: 55, fit: { inBand: 4, of: 5 }, basis: 'receipts', n: 9 });

function answer(worth: string | null): PickerAnswer {
  const task = { id: 'k3m9x2qa45pz', title: 'Fix the flaky login test', worth, state: 'open' as const };
  const input: PickerInput = {
    nowMs: NOW,
    timeZone: 'UTC',
    task,
    worthValueMicros: worth ? $(50) : null,
    running: null,
    atWall: null,
    ladders: [
      { harness: 'claude-code', name: 'Claude Code', provider: 'anthropic', models: ['claude-opus-5-5', 'claude-sonnet-5-5'] },
      { harness: 'codex', name: 'Codex', provider: 'openai', models: ['gpt-6-sol'] },
    ],
    bandOf: (_h, m) => (m === 'claude-opus-5-5' ? band(4, 11) : m === 'claude-sonnet-5-5' ? band(2, 6) : null),
    bars: [{ provider: 'anthropic', window: 'five_hour', name: '5-hour', usedPct: 70, resetsAtMs: NOW + 5 * 3_600_000, dollarsToWallMicros: $(6), crossesAtMs: NOW + 100 * 60_000 }],
    overnight: { startMs: NOW + 8 * 3_600_000, endMs: NOW + 16 * 3_600_000 },
    keyFor: { anthropic: true, openai: false },
    teammates: [{ handle: 'dana', name: 'Dana' }],
    handoffReady: true,
  };
  return { task: { id: task.id, title: task.title, worth }, ...buildPicker(input) };
}

const DOWN = '\u001B[B';
const UP = '\u001B[A';
const ENTER = '\r';

type View = { frames: string[] };

/**
 * Polls the frames written since `since` (ink renders on its own schedule) until one shows what is expected.
 * Frames, not the last one: when the view exits, ink under CI=true writes one more, empty, frame.
 */
async function frameWith(view: View, text: string, since = 0): Promise<string> {
  const end = Date.now() + 5000;
  for (;;) {
    const f = view.frames.slice(since).reverse().find((x) => x.includes(text));
    if (f !== undefined) return f;
    if (Date.now() > end) throw new Error(`the frame never showed ${JSON.stringify(text)}; last frame:\n${view.frames.at(-1) ?? ''}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Writes a key and waits for a frame, drawn after it, that shows `text`. */
async function press(view: View & { stdin: { write(s: string): void } }, key: string, text: string): Promise<string> {
  const since = view.frames.length;
  view.stdin.write(key);
  return frameWith(view, text, since);
}

const instances: Array<{ unmount(): void }> = [];
afterEach(() => {
  for (const i of instances.splice(0)) i.unmount();
});

describe('sleds pick, the ink view', () => {
  it('renders every row with its band, headroom, wall and verb (snapshot)', async () => {
    const view = render(createElement(PickView, { answer: answer('normal'), color: false, onTake: async () => ({ ok: true, line: '' }) }));
    instances.push(view);
    const frame = await frameWith(view, 'enter takes the verb');
    expect(frame).not.toMatch(/\u001B\[/); // NO_COLOR: not one escape
    expect(frame).toMatchInlineSnapshot(`
      "task k3m9x2qa45pz: Fix the flaky login test · worth normal
      wall: $6 more; you will cross at 3:40 pm UTC
      › Dispatch  Claude Code · opus 5.5     $4–11 · 20–55 min · 80% in band
                  30% of the bar left · crosses before it lands
        Dispatch  Claude Code · sonnet 5.5   $2–6 · 20–55 min · 80% in band
                  30% of the bar left · lands before the wall
        Dispatch  Codex · gpt-6-sol          no band yet
                  no bar seen yet
        Queue     overnight batch · opus 5.5 $2–5.50 · 20–55 min · 80% in band
                  off the bar (platform key) · ½ price · runs 10:00pm–6:00am · lands by 6:00am
        Offer     dana                       $4–11 · 20–55 min · 80% in band
                  their own bars · not at a wall: ask them
        Offer     a person with the agent    $4–11 · 20–55 min · 80% in band
                  a person’s time · a person drives the agent: post it to the team
      ↑/↓ choose · enter takes the verb · q quits"
    `);
  });

  it('shows the held state: no verb on any row, and how to state a worth', async () => {
    const view = render(createElement(PickView, { answer: answer(null), color: false, onTake: async () => ({ ok: true, line: '' }) }));
    instances.push(view);
    const frame = await frameWith(view, 'enter takes the verb');
    expect(frame).toContain('held: not worth doing until someone states a worth — sleds task k3m9x2qa45pz worth high|normal|low');
    const lines = frame.split('\n');
    const rows = lines.filter((l) => /^[› ] \S/.test(l));
    expect(rows).toHaveLength(6);
    for (const r of rows) expect(r).toMatch(/^[› ] —/);
    expect(lines.filter((l) => l.endsWith(' · held'))).toHaveLength(6);
    expect(frame).toContain('$4–11 · 20–55 min · 80% in band');
    expect(frame).not.toMatch(/Dispatch|Queue|Offer/);
  });

  it('arrow keys move the selection and enter takes that row’s verb, showing what it did', async () => {
    const taken: PickerRow[] = [];
    const onTake = async (row: PickerRow): Promise<DispatchAnswer> => {
      taken.push(row);
      return { ok: true, line: `Queued task k3m9x2qa45pz: job abcd2345` };
    };
    const view = render(createElement(PickView, { answer: answer('normal'), color: false, onTake }));
    instances.push(view);
    await frameWith(view, '› Dispatch  Claude Code · opus 5.5');
    await press(view, DOWN, '› Dispatch  Claude Code · sonnet 5.5');
    // One key at a time: the test stdin keeps only the last write until ink reads it.
    await press(view, DOWN, '› Dispatch  Codex · gpt-6-sol');
    await press(view, DOWN, '› Queue     overnight batch');
    await press(view, DOWN, '› Offer     dana');
    await press(view, UP, '› Queue     overnight batch');
    const frame = await press(view, ENTER, 'Queued task k3m9x2qa45pz: job abcd2345');
    expect(taken.map((r) => [r.index, r.verb])).toEqual([[4, 'Queue']]);
    expect(frame).toContain('› Queue     overnight batch');
  });

  it('enter on a row without a verb says why and takes nothing', async () => {
    const taken: PickerRow[] = [];
    const view = render(createElement(PickView, { answer: answer(null), color: false, onTake: async (r: PickerRow) => (taken.push(r), { ok: true, line: 'x' }) }));
    instances.push(view);
    await frameWith(view, 'enter takes the verb');
    await press(view, ENTER, 'Claude Code · opus 5.5 is not offered: held: not worth doing until someone states a worth');
    expect(taken).toEqual([]);
  });
});
