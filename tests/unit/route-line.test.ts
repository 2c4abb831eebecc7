import { describe, expect, it } from 'vitest';
import { routeLine, type RouteLineNode } from '../../core/routes/route-line.js';

/** The route's line (issue 14 § 12), from the nodes' receipts, bands and the decisions answered from a phone. */
const band = { lowUsd: 1, highUsd: 3, lowMin: 5, highMin: 10, confidence: 0.8 };
function receipt(costMicros: number, activeMinutes: number, host: string) {
  const body = { v: 1, id: 'r', taskId: 't', title: 'x', type: null, repo: null, seat: 'dana', harness: 'claude-code', models: ['m'], costMicros, keyMicros: 0, activeMinutes, promptChars: 0, filesTouched: 0, turns: 1, band: null, inBand: null, startedAt: 0, endedAt: 1 };
  return { body, signature: null, signer: null, host };
}
const landed = (usd: number, min: number, host: string): RouteLineNode => ({ state: 'COMPLETED', band, receipt: receipt(usd * 1e6, min, host) });
const ROUTE = { key: 'eng-503', tracker: 'ENG-503' };

describe('route line', () => {
  it('the issue’s line: minutes and dollars summed, in band, nodes, machines and one phone', () => {
    const nodes = [landed(2, 8, 'a'), landed(1.9, 7.6, 'b'), landed(2, 8, 'a'), landed(1.5, 7.4, 'b')];
    const decisions = [{ answeredBy: 'ana', source: 'slack' }, { answeredBy: 'ana', source: 'slack' }, { answeredBy: 'bo', source: 'cli' }];
    expect(routeLine(nodes, ROUTE, decisions)).toBe(`31 min · $7.40 · in band for ENG-503, across 4 nodes, 2 machines and 1 person's phone`);
  });

  const TABLE: Array<[string, RouteLineNode[], string]> = [
    ['over band in dollars', [landed(4, 6, 'a')], '6 min · $4.00 · over band for ENG-503, across 1 node and 1 machine'],
    ['over band in minutes', [landed(2, 11, 'a')], '11 min · $2.00 · over band for ENG-503, across 1 node and 1 machine'],
    ['under band', [landed(0.5, 2, 'a')], '2 min · $0.50 · under band for ENG-503, across 1 node and 1 machine'],
    ['no band', [{ state: 'COMPLETED', band: null, receipt: receipt(1e6, 3, 'a') }], '3 min · $1.00 · no band for ENG-503, across 1 node and 1 machine'],
    ['a model no price was found for: named, and no band judged on the rest', [landed(2, 8, 'a'), { state: 'COMPLETED', band, receipt: { ...receipt(1e6, 2, 'b'), unpriced: ['mystery-9'] } }], '10 min · $3.00 + mystery-9 unpriced · band not judged for ENG-503, across 2 nodes and 2 machines'],
    ['on its way', [landed(2, 8, 'a'), { state: 'RUNNING', band, receipt: null }], 'so far 8 min · $2.00 · band $2.00–$6.00 for ENG-503, across 1 of 2 nodes landed and 1 machine'],
  ];
  it.each(TABLE)('%s', (_what, nodes, line) => {
    expect(routeLine(nodes, ROUTE, [])).toBe(line);
  });

  it('a route without a tracker item is named by its key; a receipt that is not one is not counted', () => {
    expect(routeLine([{ state: 'COMPLETED', band, receipt: { nope: true } }], { key: 'eng-503', tracker: null }, [])).toBe('0 min · $0.00 · under band for eng-503, across 1 node and 0 machines');
  });
});
