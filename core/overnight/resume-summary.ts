import { oneLine } from '../format.js';

/**
 * `/sled resume` and `sleds resume <job>` (issue 15 § 6), the pure half: what a delivered overnight job did and
 * decided, as the morning reads it — one block for the person, and the same as context for the agent of the session
 * it is pulled into, so the work goes on from the branch, not from memory. Pure.
 */

export interface ResumeDecision {
  question: string;
  answer: string;
  answeredBy: string;
  answeredAt: number;
  /** The ladder's rung (context, decided, on-call, person), when the ladder took it. */
  rung?: string | null;
  reason?: string | null;
}

export interface ResumeInput {
  job: string;
  title: string;
  state: string;
  branch: string;
  prNumber: number | null;
  prUrl: string | null;
  /** What the agent said it did and what it changed. */
  summary: string | null;
  /** The checks' summary at its verification ("test ✓ (340/340 tests)"). */
  checks: string | null;
  receiptLine: string | null;
  decisions: readonly ResumeDecision[];
  /** How the branch came into this checkout. */
  branchHere: 'local' | 'fetched' | 'elsewhere';
  /** `00:41` in the reader's zone. */
  formatTime(ms: number): string;
}


export function resumeSummary(i: ResumeInput): { text: string; context: string } {
  const pr = i.prNumber !== null ? `PR #${i.prNumber}${i.prUrl ? ` ${i.prUrl}` : ''}` : 'its PR not opened yet';
  const branchLine =
    i.branchHere === 'local'
      ? `Branch ${i.branch} (in this repository: git switch ${i.branch})`
      : i.branchHere === 'fetched'
        ? `Branch ${i.branch} fetched from origin (git switch ${i.branch})`
        : `Branch ${i.branch} (not in this checkout: run this from the job's repository, or git fetch origin ${i.branch})`;
  const lines = [`Overnight job ${i.job} · ${i.title} — ${i.state === 'COMPLETED' ? 'merged' : 'delivered'}: ${pr}`, branchLine];
  if (i.receiptLine) lines.push(`Receipt: ${i.receiptLine}`);
  if (i.checks) lines.push(`Checks: ${i.checks}`);
  if (i.summary) lines.push('What was done:', ...i.summary.trim().split('\n').map((l) => `  ${l}`));
  if (i.decisions.length > 0) {
    lines.push('Decided overnight:');
    for (const d of [...i.decisions].sort((a, b) => a.answeredAt - b.answeredAt)) {
      const how = d.rung ? `${d.rung}${d.reason ? `: ${oneLine(d.reason, 160)}` : ''}` : `${d.answeredBy}, ${i.formatTime(d.answeredAt)}`;
      lines.push(`  - ${oneLine(d.question, 300)} → ${oneLine(d.answer, 300)} (${how})`);
    }
  } else lines.push('Decided overnight: nothing was asked.');
  const text = lines.join('\n');
  const context = [
    `While you were away, sleds ran an overnight job for this work and delivered it. What it did and decided:`,
    '',
    text,
    '',
    `Build on that branch's changes (git diff against its base) rather than redoing them; its decisions stand unless the person says otherwise.`,
  ].join('\n');
  return { text, context };
}
