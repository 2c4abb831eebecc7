import { formatUsd } from '../format.js';
import { formatDuration } from './duration.js';
import type { AllowanceCaps, Policy, PolicyRule, SeatAllowance } from './schema.js';

/** The policy in words, one line per part, for `sleds policy show`. Pure. */

function cap(micros: number | null | undefined, per: string): string {
  if (micros === null || micros === undefined) return `no ${per === 'day' ? 'daily' : 'weekly'} cap`;
  if (micros === 0) return `$0/${per} (key not allowed)`;
  return `${formatUsd(micros)}/${per}`;
}

function caps(c: AllowanceCaps | SeatAllowance, onlyNamed: boolean): string {
  const parts: string[] = [];
  if (!onlyNamed || c.perDayMicros !== undefined) parts.push(cap(c.perDayMicros, 'day'));
  if (!onlyNamed || c.perWeekMicros !== undefined) parts.push(cap(c.perWeekMicros, 'week'));
  return parts.join(', ');
}

/** "owner_idle 30m, worth high or normal, allowance_left $5" */
export function describeConditions(rule: PolicyRule): string {
  const w = rule.when;
  const out: string[] = [];
  if (w.resetWithinMs !== undefined) out.push(`reset_within ${formatDuration(w.resetWithinMs)}`);
  if (w.worth !== undefined) out.push(`worth ${w.worth.join(' or ')}`);
  if (w.worthAtLeast !== undefined) out.push(`worth_at_least ${w.worthAtLeast}`);
  if (w.allowanceLeft !== undefined) out.push(`allowance_left ${typeof w.allowanceLeft === 'number' ? formatUsd(w.allowanceLeft) : String(w.allowanceLeft)}`);
  if (w.ownerIdleMs !== undefined) out.push(`owner_idle ${formatDuration(w.ownerIdleMs)}`);
  if (w.keepsUntilMorning !== undefined) out.push(`keeps_until_morning ${String(w.keepsUntilMorning)}`);
  if (w.window !== undefined) out.push(`window ${w.window.join(' or ')}`);
  return out.length > 0 ? out.join(', ') : 'always';
}

export interface PolicyPartLine {
  key: string;
  text: string;
}

export function describePolicy(policy: Policy): { parts: PolicyPartLine[]; rules: string[] } {
  const worth = [
    ...policy.worth.levels.map((l) => `${l.name} keeps ${formatDuration(l.keepsMs)}${policy.worthValues[l.name] !== undefined ? `, worth ${formatUsd(policy.worthValues[l.name]!)}` : ''}`),
    `default ${policy.worth.default ?? 'none'}`,
  ].join(' · ');
  const seats = Object.entries(policy.allowance.seats).map(([handle, s]) => `${handle} ${caps(s, true)}`);
  const allowance = [caps(policy.allowance.default, false), ...seats].join(' · ');
  const o = policy.overnight;
  const overnight = o
    ? [
        `${o.from}–${o.to} ${o.timeZone ?? '(local time)'} · cap ${formatUsd(o.capMicros)} a job · ${o.concurrency} at a time`,
        o.onCall ? `on-call ${o.onCall} (parks after ${Math.round(o.escalateAfterMs / 60_000)} min)` : null,
        o.digest ? `digest ${o.digest.at} → ${o.digest.channel}` : null,
      ]
        .filter(Boolean)
        .join(' · ')
    : 'none';
  const cheaper = policy.cheaper.map((s) => `${s.pattern} → ${s.model ?? 'none'}`).join(' · ') || 'none';
  const rules = policy.rules.map((r) => {
    const where = r.line !== null ? `  (line ${r.line})` : '';
    return `${r.index + 1}. ${r.name}: ${describeConditions(r)} → ${r.then}${where}`;
  });
  const last = policy.rules[policy.rules.length - 1];
  const endsAlways = last !== undefined && describeConditions(last) === 'always';
  if (!endsAlways) rules.push(`${policy.rules.length + 1}. otherwise → ask`);
  return {
    parts: [
      { key: 'amber_at', text: `${policy.amberAt}%` },
      { key: 'worth', text: worth },
      { key: 'allowance', text: allowance },
      { key: 'overnight', text: overnight },
      { key: 'cheaper', text: cheaper },
    ],
    rules,
  };
}
