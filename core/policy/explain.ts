import type { PolicyDecision } from './decision.js';

/**
 * `sleds policy explain <wall>`: the evaluation as a readable block: each rule in order, matched or why not, then
 * the choice and who made it. Plain text, no colour. Pure.
 */

export interface ExplanationOptions {
  /** Named in the heading. */
  wallId?: string | null;
  /** How many rules the policy had, to say how many the first match left unread. */
  ruleCount?: number | null;
}

function where(source: string | null | undefined, line: number | null): string {
  if (line === null) return source === 'defaults' ? ' (built-in)' : '';
  return source && source !== 'defaults' ? ` (${source}:${line})` : ` (line ${line})`;
}

export function renderPolicyExplanation(decision: PolicyDecision, opts: ExplanationOptions = {}): string {
  const source = decision.rulesSource ?? null;
  const lines: string[] = [];
  const head = opts.wallId ? `Policy at wall ${opts.wallId}` : 'Policy evaluation';
  lines.push(`${head}${source ? ` — rules from ${source === 'defaults' ? 'the built-in defaults' : source}` : ''}`);
  if (decision.trace.length === 0) lines.push('  (no rules)');
  for (const t of decision.trace) {
    const verdict = t.matched ? `matched → ${decision.choice}` : 'no';
    lines.push(`  ${t.index + 1}. ${t.name}${where(source, t.line)}: ${verdict}`);
    for (const r of t.reasons) lines.push(`       ${t.matched ? '✓' : '✗'} ${r}`);
  }
  const evaluated = decision.trace.length;
  if (decision.rule !== null && opts.ruleCount != null && opts.ruleCount > evaluated) {
    const rest = opts.ruleCount - evaluated;
    lines.push(`  (${rest} later rule${rest === 1 ? '' : 's'} not reached: the first match wins)`);
  }
  if (decision.rule === null) {
    lines.push('  otherwise: ask');
    lines.push('Asked: no rule chose an exit, so the card asked you to choose.');
  } else if (decision.choice === 'ask') {
    lines.push(`Asked: rule ${decision.rule.index + 1} ("${decision.rule.name}") says to ask, so the card asked you to choose.`);
  } else {
    lines.push(`Chose ${decision.choice}: the policy chose it (rule ${decision.rule.index + 1}, "${decision.rule.name}"${where(source, decision.rule.line).replace(/^ \(/, ', ').replace(/\)$/, '')}).`);
  }
  return `${lines.join('\n')}\n`;
}
