import { describe, expect, it } from 'vitest';
import { climb, holdsSlot, optionOfAnswer, resolveFromContext, sameQuestion, type LadderContext, type LadderOutcome, type LadderQuestion } from '../../core/overnight/ladder.js';

const EXPORTS_Q: LadderQuestion = {
  question: 'How should exports reach the customer?',
  options: ['Attach the file to the email', 'Email a CSV link'],
  reversible: false,
  risk: 'low',
};

const SPEC = `# Shop

## Exports

Exports are emailed as a CSV link that expires after seven days.

## Billing

Invoices are attached as a PDF file.
`;

const ctx = (over: Partial<LadderContext> = {}): LadderContext => ({ sources: [], decisions: [], onCall: '@dana', overnight: true, ...over });

describe('the ladder: which rung answers a question, and why', () => {
  it.each<[string, LadderQuestion, LadderContext, LadderOutcome]>([
    [
      'an earlier decision on the same question (another route of the repository) whose answer is an option',
      EXPORTS_Q,
      ctx({ decisions: [{ question: 'how should the exports reach customers', answer: 'Email a CSV link', where: 'route eng-490' }] }),
      { rung: 'context', option: 1, where: 'an earlier decision (route eng-490)', reason: "Resolved from an earlier decision (route eng-490): 'how should the exports reach customers' → B) Email a CSV link" },
    ],
    [
      'one spec section names one option’s distinctive words on the question’s topic, and no other option’s',
      EXPORTS_Q,
      ctx({ sources: [{ name: 'SPEC.md', text: SPEC }] }),
      { rung: 'context', option: 1, where: 'SPEC.md § Exports', reason: "Resolved from SPEC.md § Exports: 'Exports are emailed as a CSV link that expires after seven days.' → B) Email a CSV link" },
    ],
    [
      'ambiguous: two paragraphs on the topic name different options → not resolved; irreversible with an on-call → escalate',
      EXPORTS_Q,
      ctx({ sources: [{ name: 'SPEC.md', text: SPEC }, { name: 'README.md', text: 'Customer exports: attach the file to the message.\n' }] }),
      { rung: 'escalate', to: '@dana', reason: 'irreversible: escalated to on-call @dana' },
    ],
    [
      'a paragraph off the topic does not count (billing names "attached … file" but not exports)',
      { ...EXPORTS_Q, reversible: true },
      ctx({ sources: [{ name: 'SPEC.md', text: '## Billing\n\nInvoices are attached as a PDF file.\n' }] }),
      { rung: 'decided', option: 0, reason: "reversible, low risk: took the agent's first option" },
    ],
    ['reversible and low risk → the agent’s first option', { ...EXPORTS_Q, reversible: true }, ctx(), { rung: 'decided', option: 0, reason: "reversible, low risk: took the agent's first option" }],
    ['reversible but high risk → escalate', { ...EXPORTS_Q, reversible: true, risk: 'high' }, ctx(), { rung: 'escalate', to: '@dana', reason: 'high risk: escalated to on-call @dana' }],
    ['irreversible and high risk → escalate, saying both', { ...EXPORTS_Q, risk: 'high' }, ctx(), { rung: 'escalate', to: '@dana', reason: 'irreversible, high risk: escalated to on-call @dana' }],
    ['irreversible → escalate to the on-call', EXPORTS_Q, ctx({ onCall: '#eng' }), { rung: 'escalate', to: '#eng', reason: 'irreversible: escalated to on-call #eng' }],
    ['no on-call in the policy → park at once', EXPORTS_Q, ctx({ onCall: null }), { rung: 'park', reason: 'irreversible, and the overnight policy names no on_call: parked for a person (sleds needs)' }],
    ['not an overnight job → park at once', EXPORTS_Q, ctx({ overnight: false }), { rung: 'park', reason: 'irreversible, and not an overnight job: parked for a person (sleds needs)' }],
  ])('%s', (_name, q, c, want) => {
    expect(climb(q, c)).toEqual(want);
  });

  it('earlier decisions that disagree resolve nothing, and say so', () => {
    const r = resolveFromContext(EXPORTS_Q, {
      sources: [],
      decisions: [
        { question: EXPORTS_Q.question, answer: 'Email a CSV link', where: 'route eng-490' },
        { question: EXPORTS_Q.question, answer: 'Attach the file to the email', where: 'route eng-503' },
      ],
    });
    expect(r).toEqual({ ok: false, why: 'earlier decisions on this question disagree (B and A)' });
  });

  it.each<[string, string, boolean]>([
    ['How should exports reach the customer?', 'how should the exports reach customers', true],
    ['How should exports reach the customer?', 'How should invoices reach the customer?', false],
    ['Which database?', '', false],
  ])('sameQuestion(%j, %j) = %s', (a, b, want) => expect(sameQuestion(a, b)).toBe(want));

  it.each<[string, number | null]>([
    ['Email a CSV link', 1],
    ['Email a CSV link — and keep it seven days', 1],
    ['attach the file to the email', 0],
    ['print it', null],
  ])('optionOfAnswer(%j) = %s', (answer, want) => expect(optionOfAnswer(answer, EXPORTS_Q.options)).toBe(want));

  it.each<[number | null, number, boolean]>([
    [1_000, 999, true],
    [1_000, 1_000, false],
    [null, 0, false],
  ])('an escalation until %s holds its slot at %s: %s', (until, now, want) => expect(holdsSlot(until, now)).toBe(want));
});
