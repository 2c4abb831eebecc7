import { describe, expect, it } from 'vitest';
import { decisionLine } from '../../musher/engine/pull-request.js';

/** Each decision in a node's PR says which rung of the ladder took it and why (issue 15 § 5). */
const at = Date.UTC(2026, 11, 3, 0, 52);
const q = 'How should exports reach the customer?';

describe('decisionLine: a decision in the PR body, with its rung and reason', () => {
  it.each<[string, Parameters<typeof decisionLine>[0], string]>([
    [
      'decided',
      { question: q, answer: 'Attach the file', answeredBy: 'sleds', at, rung: 'decided', reason: "reversible, low risk: took the agent's first option" },
      `- Decided (reversible, low risk): ${q} → **Attach the file** — took the agent's first option`,
    ],
    [
      'resolved from context',
      { question: q, answer: 'Email a CSV link', answeredBy: 'sleds', at, rung: 'context', reason: "Resolved from SPEC.md § Exports: 'Exports are emailed as a CSV link' → B) Email a CSV link" },
      `- Resolved from SPEC.md § Exports: 'Exports are emailed as a CSV link' — ${q} → **Email a CSV link**`,
    ],
    [
      'the on-call, by roster handle',
      { question: q, answer: 'Email a CSV link', answeredBy: 'dana', at, rung: 'on-call', reason: 'escalated to dana' },
      `- On-call @dana answered at 00:52 UTC: ${q} → **Email a CSV link** (escalated to dana)`,
    ],
    ['a person answering a parked question, as it always read', { question: q, answer: 'Email a CSV link', answeredBy: 'lee', at, rung: 'person', reason: null }, `- ${q} → **Email a CSV link** (lee, 2026-12-03 00:52Z)`],
    ['a decision from before the ladder', { question: q, answer: 'Email a CSV link', answeredBy: 'lee', at }, `- ${q} → **Email a CSV link** (lee, 2026-12-03 00:52Z)`],
  ])('%s', (_what, d, line) => expect(decisionLine(d)).toBe(line));
});
