import { describe, expect, it } from 'vitest';
import { prFeedback, type PrStatus } from '../../musher/engine/pull-request.js';
import { failureReport } from '../../musher/engine/verify.js';

const OPEN: PrStatus = { number: 7, state: 'OPEN', mergeable: 'MERGEABLE', reviewDecision: null, checks: 'SUCCESS', failing: [], reviewComments: [], mergedAt: null };

describe("what a PR's status sends back to its node", () => {
  it.each([
    ['open, green, no review', {}, null],
    ['merged', { state: 'MERGED', mergedAt: 1 }, null],
    ['closed', { state: 'CLOSED', checks: 'FAILURE' }, null],
    ['checks pending', { checks: 'PENDING' }, null],
    ['mergeable unknown (GitHub still computing)', { mergeable: 'UNKNOWN' }, null],
    ['a conflict, before failing checks', { mergeable: 'CONFLICTING', checks: 'FAILURE' }, { kind: 'conflict', text: 'PR #7 conflicts with its base branch: merge the base into this branch, resolve the conflicts, commit.' }],
    ['failing checks, named', { checks: 'FAILURE', failing: [{ name: 'ci / test', summary: '2 tests failed' }], reviewDecision: 'CHANGES_REQUESTED' }, { kind: 'checks-failed', text: "PR #7's checks failed:\n- ci / test: 2 tests failed" }],
    ['failing checks without names', { checks: 'FAILURE' }, { kind: 'checks-failed', text: "PR #7's checks failed:\n- a check failed (GitHub names none)" }],
    ['changes requested', { reviewDecision: 'CHANGES_REQUESTED', reviewComments: ['li: Paginate the rows.'] }, { kind: 'changes-requested', text: 'Changes were requested on PR #7:\n- li: Paginate the rows.' }],
    ['approved', { reviewDecision: 'APPROVED' }, null],
  ] as const)('%s', (_name, over, want) => {
    expect(prFeedback({ ...OPEN, ...(over as Partial<PrStatus>) })).toEqual(want);
  });
});

describe('what a failed verification sends back', () => {
  it('names each failed check with its exit and log tail; nothing for a pass', () => {
    const report = failureReport({
      ok: false,
      summary: 'test ✗ (1/2 tests) · types ✓ · lint ✗',
      results: [
        { name: 'test', ok: false, exitCode: 1, durationMs: 10, logTail: 'AssertionError: expected 3 rows, got 0' },
        { name: 'types', ok: true, exitCode: 0, durationMs: 10, logTail: 'fine' },
        { name: 'lint', ok: false, exitCode: null, durationMs: 10, logTail: 'eslint: not found on PATH' },
      ],
    });
    expect(report).toBe('Checks: test ✗ (1/2 tests) · types ✓ · lint ✗\n\n### test failed (exit 1)\n\n```\nAssertionError: expected 3 rows, got 0\n```\n\n### lint failed (killed or not started)\n\n```\neslint: not found on PATH\n```');
    expect(report).not.toContain('fine');
    expect(failureReport({ ok: true, summary: 'test ✓', results: [{ name: 'test', ok: true, exitCode: 0, durationMs: 1, logTail: '' }] })).toBe('');
  });
});
