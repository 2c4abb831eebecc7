import { formatClock, formatUsd } from '../format.js';
import { formatDuration } from './duration.js';
import type { PolicyDecision, PolicyTraceEntry } from './decision.js';
import { matchesPattern, nextOvernightWindow } from './queries.js';
import type { ExitKind, Policy, PolicyRule, RuleConditions, WorthLevel } from './schema.js';

export { allowanceFor, amberAt, cheaperModel, isWorthLevel, nextOvernightWindow, worthLevels } from './queries.js';
export type { PolicyDecision } from './decision.js';

/**
 * The policy at a wall: the first rule whose conditions all hold and whose exit can apply chooses; a rule whose exit
 * cannot apply (no key, no teammate…) is passed over with the reason; when none chooses, the implicit last rule
 * asks. Pure: the time, the zone and every fact come in the context.
 */

export interface PolicyContext {
  nowMs: number;
  /** IANA zone for the overnight window (musher's), unless the policy names one. */
  timeZone: string;
  /** The binding bar's window, e.g. 'five_hour'. */
  window: string | null;
  /** Its reset. */
  resetAtMs: number | null;
  /** The task's worth level; null = none set, and the policy's default applies. */
  worth: string | null;
  /** Left of the seat's allowance, null per cap when uncapped; null altogether when no platform key is configured. */
  allowanceLeft: { dayMicros: number | null; weekMicros: number | null } | null;
  /** The area's owner; null when nobody is known to own it. */
  owner: { handle: string; idleMs: number | null } | null;
  /** Which exits can apply at all, with why not. */
  available: Record<ExitKind, { ok: boolean; why?: string }>;
}

interface Check {
  held: boolean;
  reason: string;
}

interface Facts {
  policy: Policy;
  ctx: PolicyContext;
  /** The evaluated worth: the task's own, else the default; null when none or not a level of this policy. */
  worth: WorthLevel | null;
  worthNote: string;
}

function list(names: string[]): string {
  return names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
}

function worthFacts(policy: Policy, ctx: PolicyContext): Pick<Facts, 'worth' | 'worthNote'> {
  const name = ctx.worth ?? policy.worth.default;
  if (name === null) return { worth: null, worthNote: 'no worth set (and the policy has no default)' };
  const level = policy.worth.levels.find((l) => l.name === name) ?? null;
  if (!level) return { worth: null, worthNote: `worth '${name}' is not a level of this policy` };
  return { worth: level, worthNote: ctx.worth === null ? `worth ${name} (the default)` : `worth ${name}` };
}

function allowanceText(left: { dayMicros: number | null; weekMicros: number | null }): string {
  const day = left.dayMicros === null ? 'no daily cap' : `${formatUsd(left.dayMicros)} today`;
  const week = left.weekMicros === null ? 'no weekly cap' : `${formatUsd(left.weekMicros)} this week`;
  return `allowance left ${day}, ${week}`;
}

/** One check per condition the rule names, in a fixed order. */
function checks(when: RuleConditions, f: Facts): Check[] {
  const { ctx } = f;
  const out: Check[] = [];

  if (when.resetWithinMs !== undefined) {
    const within = formatDuration(when.resetWithinMs);
    if (ctx.resetAtMs === null) out.push({ held: false, reason: 'reset time unknown' });
    else {
      const left = ctx.resetAtMs - ctx.nowMs;
      const at = formatClock(ctx.resetAtMs, ctx.timeZone);
      if (left <= 0) out.push({ held: true, reason: `reset already due (${at})` });
      else if (left <= when.resetWithinMs) out.push({ held: true, reason: `reset in ${formatDuration(left)} (${at}), within ${within}` });
      else out.push({ held: false, reason: `reset in ${formatDuration(left)} (${at}), not within ${within}` });
    }
  }

  if (when.worth !== undefined) {
    if (!f.worth) out.push({ held: false, reason: f.worthNote });
    else if (when.worth.includes(f.worth.name)) out.push({ held: true, reason: `${f.worthNote} is ${when.worth.length > 1 ? 'one of ' : ''}${list(when.worth)}` });
    else out.push({ held: false, reason: `${f.worthNote}, not ${list(when.worth)}` });
  }

  if (when.worthAtLeast !== undefined) {
    const levels = f.policy.worth.levels.map((l) => l.name);
    if (!f.worth) out.push({ held: false, reason: f.worthNote });
    else if (levels.indexOf(f.worth.name) <= levels.indexOf(when.worthAtLeast)) out.push({ held: true, reason: `${f.worthNote} is at least ${when.worthAtLeast}` });
    else out.push({ held: false, reason: `${f.worthNote} is below ${when.worthAtLeast}` });
  }

  if (when.allowanceLeft !== undefined) {
    const want = when.allowanceLeft;
    const left = ctx.allowanceLeft;
    if (left === null) {
      out.push({ held: want === false, reason: 'no platform key configured' });
    } else {
      const enough = (cap: number | null, min: number): boolean => cap === null || (min === 0 ? cap > 0 : cap >= min);
      const min = typeof want === 'number' ? want : 0;
      const has = enough(left.dayMicros, min) && enough(left.weekMicros, min);
      const text = allowanceText(left);
      if (want === false) out.push({ held: !has, reason: has ? `${text}: not spent` : `${text}: spent` });
      else if (typeof want === 'number') out.push({ held: has, reason: `${text}${has ? ', at least ' : ', less than '}${formatUsd(want)}` });
      else out.push({ held: has, reason: has ? text : `${text}: spent` });
    }
  }

  if (when.ownerIdleMs !== undefined) {
    const need = formatDuration(when.ownerIdleMs);
    const owner = ctx.owner;
    if (owner === null) out.push({ held: false, reason: "the area's owner is unknown" });
    else if (owner.idleMs === null) out.push({ held: false, reason: `owner ${owner.handle}: idle time unknown` });
    else if (owner.idleMs >= when.ownerIdleMs) out.push({ held: true, reason: `owner ${owner.handle} idle ${formatDuration(owner.idleMs)}, at least ${need}` });
    else out.push({ held: false, reason: `owner ${owner.handle} idle ${formatDuration(owner.idleMs)}, less than ${need}` });
  }

  if (when.keepsUntilMorning !== undefined) {
    const night = nextOvernightWindow(f.policy, ctx.nowMs, ctx.timeZone);
    const zone = f.policy.overnight?.timeZone ?? ctx.timeZone;
    if (night === null) out.push({ held: false, reason: 'the policy has no overnight window' });
    else if (!f.worth) out.push({ held: false, reason: f.worthNote });
    else {
      const keeps = ctx.nowMs + f.worth.keepsMs >= night.endMs;
      const ends = formatClock(night.endMs, zone);
      const reason = keeps
        ? `${f.worthNote} keeps ${formatDuration(f.worth.keepsMs)}, past the overnight window's end (${ends})`
        : `${f.worthNote} keeps ${formatDuration(f.worth.keepsMs)}, only until ${formatClock(ctx.nowMs + f.worth.keepsMs, zone)}; the overnight window ends ${ends}`;
      out.push({ held: keeps === when.keepsUntilMorning, reason });
    }
  }

  if (when.window !== undefined) {
    if (ctx.window === null) out.push({ held: false, reason: 'binding window unknown' });
    else if (when.window.some((p) => matchesPattern(p, ctx.window!))) out.push({ held: true, reason: `binding window ${ctx.window}` });
    else out.push({ held: false, reason: `binding window ${ctx.window}, not ${list(when.window)}` });
  }

  return out;
}

function entry(rule: PolicyRule, matched: boolean, reasons: string[]): PolicyTraceEntry {
  return { index: rule.index, name: rule.name, line: rule.line, matched, reasons };
}

export function evaluatePolicy(policy: Policy, ctx: PolicyContext): PolicyDecision {
  const facts: Facts = { policy, ctx, ...worthFacts(policy, ctx) };
  const trace: PolicyTraceEntry[] = [];
  const base = { rulesSource: policy.rulesSource, worth: facts.worth?.name ?? null };
  for (const rule of policy.rules) {
    const results = checks(rule.when, facts);
    const failing = results.filter((c) => !c.held);
    if (failing.length > 0) {
      trace.push(entry(rule, false, failing.map((c) => c.reason)));
      continue;
    }
    const held = results.length > 0 ? results.map((c) => c.reason) : ['no conditions'];
    if (rule.then !== 'ask') {
      const exit = ctx.available[rule.then];
      if (!exit?.ok) {
        trace.push(entry(rule, false, [...held, `but ${rule.then} cannot apply: ${exit?.why ?? 'no offer for it'}`]));
        continue;
      }
    }
    trace.push(entry(rule, true, held));
    return { choice: rule.then, rule: { index: rule.index, name: rule.name, line: rule.line }, trace, ...base };
  }
  return { choice: 'ask', rule: null, trace, ...base };
}
