import { EXIT_ORDER, type ExitKind } from '../exits/types.js';
import { z } from 'zod';
import { parseDuration } from './duration.js';
import { parseMoney } from './money.js';
import { isValidTimeZone } from '../zoned-time.js';
import { parseRepoSlug } from '../github/remote.js';

/**
 * The workspace policy (`.sleds/policy.yml`), as a zod schema of what the file may say and the normalized `Policy`
 * the rest of sleds reads: spans in ms, money in micro-dollars, levels in order. Pure; the YAML and the line
 * numbers live in musher/policy/.
 */

/** The exits a rule can choose: the same six as `/sled 1` … `/sled 6`. */
export const EXIT_KINDS = EXIT_ORDER;
export type { ExitKind };
export const RULE_ACTIONS = [...EXIT_KINDS, 'ask'] as const;
export type RuleAction = ExitKind | 'ask';

export const POLICY_SECTIONS = ['amber_at', 'worth', 'allowance', 'overnight', 'cheaper', 'rules', 'worth_values', 'handoff', 'tracker', 'engine'] as const;
export type PolicySection = (typeof POLICY_SECTIONS)[number];
export const CONDITION_KEYS = ['reset_within', 'worth', 'worth_at_least', 'allowance_left', 'owner_idle', 'keeps_until_morning', 'window'] as const;

// ---- the normalized policy ----

export interface WorthLevel {
  name: string;
  /** How long the work keeps its worth: done later than this, it is worth less than it cost. */
  keepsMs: number;
}

/** A cap of null is no cap; a cap of 0 means the platform key is not allowed. */
export interface AllowanceCaps {
  perDayMicros: number | null;
  perWeekMicros: number | null;
}

/** A seat's override: a cap it does not name is the default's. */
export interface SeatAllowance {
  perDayMicros?: number | null;
  perWeekMicros?: number | null;
}

export interface OvernightWindow {
  from: string;
  to: string;
  fromMinute: number;
  toMinute: number;
  /** Null: the zone of whoever evaluates it (musher's). */
  timeZone: string | null;
  /** What one overnight job may spend (`cap: $12`; a job's own `cap:` overrides it), micro-dollars. */
  capMicros: number;
  /** Overnight jobs at work at once. */
  concurrency: number;
  /**
   * Who the ladder escalates an irreversible question to (issue 15 § 5): a roster handle (`dana`), a Slack user id
   * (`U…`) or a channel (`#eng`, `C…`); null: nobody, the question parks at once.
   */
  onCall: string | null;
  /** How long an escalated question holds its job before it parks and the queue goes on (30 minutes). */
  escalateAfterMs: number;
  /** The morning digest (issue 15 § 7): its time of day (`08:00`, the window's zone) and its Slack channel. */
  digest: { at: string; minute: number; channel: string } | null;
}

/** An overnight job's cap and how many run at once, when the policy's `overnight:` says neither. */
export const OVERNIGHT_DEFAULTS = { capMicros: 10_000_000, concurrency: 1, escalateAfterMs: 30 * 60_000 } as const;

export interface CheaperStep {
  /** A model id, or a prefix ending in `*`. */
  pattern: string;
  /** Null: no cheaper step for this model. */
  model: string | null;
}

export interface RuleConditions {
  resetWithinMs?: number;
  worth?: string[];
  worthAtLeast?: string;
  /** true/false: some allowance left or none; a number: at least that many micro-dollars left today and this week. */
  allowanceLeft?: boolean | number;
  ownerIdleMs?: number;
  keepsUntilMorning?: boolean;
  /** Window names, each exact or a prefix ending in `*`. */
  window?: string[];
}

export interface PolicyRule {
  /** 0-based position in `rules`. */
  index: number;
  name: string;
  when: RuleConditions;
  then: RuleAction;
  /** The rule's line in the file it came from; null for the built-in defaults. */
  line: number | null;
}

/** Where tracker intake looks (`tracker:`): GitHub issues with a label in some repositories, every so often. */
export interface TrackerPolicy {
  github: { repos: string[]; label: string; everyMs: number } | null;
}

/** Tracker rounds: every 2 minutes unless the file says otherwise, never more than once a minute (search: 30/min). */
export const TRACKER_DEFAULT_EVERY_MS = 120_000;
export const TRACKER_MIN_EVERY_MS = 60_000;
export const TRACKER_DEFAULT_LABEL = 'sleds';

/** A command from the policy as argv: the text split on whitespace, never given to a shell. */
export type CommandArgv = string[];

/** `engine:` (issue 14): how `sleds engine` runs a route's nodes. */
export interface EnginePolicy {
  /** A route's mode when its file names none. */
  mode: 'approve' | 'auto';
  /** Nodes run at once by one engine. */
  concurrency: number;
  leaseMs: number;
  /** The repository's checks, run in the node's worktree before its PR; null: not checked. */
  verify: { test: CommandArgv | null; types: CommandArgv | null; lint: CommandArgv | null; build: CommandArgv | null };
  /** Failed verifications sent back to the agent before the node is RECOVERY_REQUIRED. */
  maxVerifyAttempts: number;
  /** Run once in a new worktree (`npm ci`); null: none. */
  setup: CommandArgv | null;
  /** Untracked files copied into each worktree (`.env`). */
  include: string[];
  /** Free ports per worktree, from SLEDS_PORT_BASE. */
  portBlock: number;
  /** The harness a node runs in when its route file names none; null: the node must name one (sleds never picks). */
  harness: string | null;
  /** What a node does when its harness hits its wall (issue 14 § 11): as a session's wall, the policy decides. */
  atLimit: AtLimitPolicy;
}

/**
 * A node at its harness's limit: `wait` for the reset (the default), `switch` to another harness or model now (its
 * work so far stays in the worktree), or `ask` a person (wait, or switch) with a parked question.
 */
export interface AtLimitPolicy {
  then: 'wait' | 'switch' | 'ask';
  /** Where `switch` (and ask's second answer) goes: a harness id, a model, or both. */
  harness: string | null;
  model: string | null;
}

/**
 * The engine's defaults, each key filled on its own (a file's `engine: {concurrency: 3}` keeps the rest). No checks
 * and no setup by default: a command that fits one repository (`npm test`) fails every node of another, so the
 * repository names its own in `.sleds/policy.yml`.
 */
export const ENGINE_DEFAULTS: EnginePolicy = {
  mode: 'approve',
  concurrency: 2,
  leaseMs: 120_000,
  verify: { test: null, types: null, lint: null, build: null },
  maxVerifyAttempts: 3,
  setup: null,
  include: [],
  portBlock: 10,
  harness: null,
  atLimit: { then: 'wait', harness: null, model: null },
};

export interface Policy {
  amberAt: number;
  worth: { levels: WorthLevel[]; default: string | null };
  allowance: { default: AllowanceCaps; seats: Record<string, SeatAllowance> };
  overnight: OvernightWindow | null;
  cheaper: CheaperStep[];
  rules: PolicyRule[];
  /**
   * Hand-offs: a shared folder to carry them instead of the repository's remote (absolute, or `~/…`); null: the
   * remote. `allowUntracked`: globs of untracked files that look like secrets (`.env.test`) but may travel sealed.
   */
  handoff: { folder: string | null; allowUntracked: string[] };
  /**
   * What finishing a task of each worth level is worth, in micro-dollars (`worth_values: {high: $200}`): the picker
   * gates a seat by worth ÷ cost. A level without a value is not gated by cost.
   */
  worthValues: Record<string, number>;
  tracker: TrackerPolicy;
  engine: EnginePolicy;
  /** Which file the rules came from ("defaults" for the built-in ones). */
  rulesSource: string;
}

// ---- the file ----

function fromText<T>(parse: (v: unknown) => { ok: true; value: T } | { ok: false; error: string }) {
  return z.unknown().transform((v, ctx) => {
    const r = parse(v);
    if (!r.ok) {
      ctx.addIssue({ code: 'custom', message: r.error });
      return z.NEVER;
    }
    return r.value;
  });
}

const Span = fromText((v) => {
  if (v === undefined) return { ok: false, error: 'missing: a span like 45m, 4h or 7d' };
  const r = parseDuration(v);
  return r.ok ? { ok: true, value: r.ms } : r;
});

const NO_CAP = new Set(['none', 'unlimited', 'uncapped']);
const Cap = fromText<number | null>((v) => {
  if (v === null || (typeof v === 'string' && NO_CAP.has(v.trim().toLowerCase()))) return { ok: true, value: null };
  const r = parseMoney(v);
  return r.ok ? { ok: true, value: r.micros } : r;
});

function parseClock(v: unknown): { ok: true; value: number } | { ok: false; error: string } {
  const m = typeof v === 'string' ? /^\s*(\d{1,2}):(\d{2})\s*$/.exec(v) : null;
  if (!m || Number(m[1]) > 24 || Number(m[2]) > 59 || (Number(m[1]) === 24 && Number(m[2]) !== 0)) {
    return { ok: false, error: `expected a time of day like "22:00" or "6:30", got ${JSON.stringify(v ?? null)}` };
  }
  return { ok: true, value: (Number(m[1]) * 60 + Number(m[2])) % 1440 };
}

const NAME = /^[a-z][a-z0-9_-]*$/i;
const GLOB = /^[A-Za-z0-9._:/@[\]-]*\*?$/;

function nameList(what: string) {
  return fromText<string[]>((v) => {
    const list = Array.isArray(v) ? v : [v];
    if (list.length === 0 || !list.every((x) => typeof x === 'string' && x.trim().length > 0)) {
      return { ok: false, error: `expected ${what} or a list of them` };
    }
    return { ok: true, value: list.map((x) => (x as string).trim()) };
  });
}

const Conditions = z.strictObject({
  reset_within: Span.optional(),
  worth: nameList('a worth level').optional(),
  worth_at_least: z.string().trim().min(1).optional(),
  allowance_left: fromText<boolean | number>((v) => {
    if (typeof v === 'boolean') return { ok: true, value: v };
    const r = parseMoney(v);
    return r.ok ? { ok: true, value: r.micros } : { ok: false, error: `expected true, false or an amount like $5 (${r.error})` };
  }).optional(),
  owner_idle: Span.optional(),
  keeps_until_morning: z.boolean().optional(),
  window: nameList('a window name like five_hour').optional(),
});

const Rule = z.strictObject({
  name: z.string().trim().min(1).optional(),
  when: z.preprocess((v) => (v === null ? {} : v), Conditions).optional(),
  then: z.enum(RULE_ACTIONS, { error: `expected one of ${RULE_ACTIONS.join('|')}` }),
});

const Caps = z.strictObject({ per_day: Cap.optional(), per_week: Cap.optional() });

/** `high: 4h` is short for `high: {keeps: 4h}`. */
const Worth = z.preprocess(
  (v) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = k !== 'default' && (typeof x === 'string' || typeof x === 'number') ? { keeps: x } : x;
    return out;
  },
  z.object({ default: z.string().trim().nullish() }).catchall(z.strictObject({ keeps: Span })),
);

const Overnight = z.preprocess(
  (v) => (v === false || (typeof v === 'string' && v.trim().toLowerCase() === 'none') ? null : v),
  z
    .strictObject({
      from: fromText(parseClock),
      to: fromText(parseClock),
      time_zone: z.string().trim().min(1).optional(),
      cap: fromText((v) => {
        const r = parseMoney(v);
        return r.ok ? { ok: true, value: r.micros } : r;
      }).optional(),
      concurrency: z.number().int().min(1).max(16).optional(),
      on_call: z.string().trim().min(1).max(80).optional(),
      escalate_after: Span.optional(),
      digest: z.strictObject({ at: fromText(parseClock), channel: z.string().trim().min(1).max(80) }).optional(),
    })
    .nullable(),
);

const Tracker = z.strictObject({
  github: z
    .strictObject({
      repos: nameList('a repository like owner/name'),
      label: z.string().trim().min(1).max(50).optional(),
      every: Span.optional(),
    })
    .nullable()
    .optional(),
});

/** "npm test" → ['npm', 'test']: whitespace-split, no shell, so no quoting, pipes or variables. */
export function commandArgv(text: string): CommandArgv {
  return text.trim().split(/\s+/).filter((w) => w.length > 0);
}

const Command = fromText<CommandArgv | null>((v) => {
  if (v === null || v === false) return { ok: true, value: null };
  if (typeof v !== 'string' || commandArgv(v).length === 0) return { ok: false, error: `expected a command like "npm test" (split on spaces, never run by a shell), got ${JSON.stringify(v ?? null)}` };
  if (/[|&;<>`$]/.test(v)) return { ok: false, error: `'${v}' needs a shell (| & ; < > \` $): sleds runs commands without one — put it in a script and name the script` };
  return { ok: true, value: commandArgv(v) };
});

const AT_LIMIT_THEN = ['wait', 'switch', 'ask'] as const;

const Engine = z.strictObject({
  mode: z.enum(['approve', 'auto'], { error: 'expected approve or auto' }).optional(),
  concurrency: z.number().int().min(1).max(32).optional(),
  lease: Span.optional(),
  verify: z.strictObject({ test: Command.optional(), types: Command.optional(), lint: Command.optional(), build: Command.optional() }).nullable().optional(),
  max_verify_attempts: z.number().int().min(1).max(20).optional(),
  setup: Command.optional(),
  include: z.array(z.string().trim().min(1)).optional(),
  port_block: z.number().int().min(1).max(1000).optional(),
  // The seat's harness for nodes whose route file names none (checked against the registry where it is used).
  harness: z.string().trim().regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'expected a harness id (lowercase letters, digits and -, as `sleds doctor` names them)').optional(),
  // `wait`, or {then: switch|ask, harness?, model?}.
  at_limit: z
    .union(
      [
        z.enum(AT_LIMIT_THEN),
        z.strictObject({
          then: z.enum(AT_LIMIT_THEN, { error: `expected ${AT_LIMIT_THEN.join(', ')}` }),
          harness: z.string().trim().regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'expected a harness id').optional(),
          model: z.string().trim().min(1).max(100).optional(),
        }),
      ],
      { error: `expected ${AT_LIMIT_THEN.join(', ')}, or {then, harness, model}` },
    )
    .optional(),
});

const Cheaper = z.record(z.string(), z.string().trim().min(1).nullable());

export const PolicyFileSchema = z.strictObject({
  amber_at: z.preprocess(
    (v) => (typeof v === 'string' && /^\s*\d+(\.\d+)?\s*%\s*$/.test(v) ? Number(v.replace('%', '')) : v),
    z.number().min(1).max(100),
  ).optional(),
  worth: Worth.optional(),
  allowance: z.strictObject({ default: Caps.optional(), seats: z.record(z.string(), Caps.nullable()).optional() }).optional(),
  overnight: Overnight.optional(),
  cheaper: Cheaper.optional(),
  rules: z.array(Rule).optional(),
  handoff: z
    .strictObject({
      folder: z
        .string()
        .trim()
        .refine((f) => f.startsWith('/') || f.startsWith('~/'), 'a shared folder is an absolute path or ~/… (e.g. /mnt/team/sleds-handoffs)')
        .nullable()
        .optional(),
      allow_untracked: z.array(z.string().trim().min(1)).optional(),
    })
    .optional(),
  worth_values: z.record(z.string(), fromText((v) => {
    const r = parseMoney(v);
    return r.ok ? { ok: true, value: r.micros } : r;
  })).optional(),
  tracker: Tracker.optional(),
  engine: Engine.optional(),
});
export type PolicyFile = z.output<typeof PolicyFileSchema>;

// ---- checking ----

export type IssuePath = Array<string | number>;
export interface PolicyIssue {
  path: IssuePath;
  message: string;
}

/** `rules[2].when.worth`, `allowance.seats.dana.per_day`. */
export function formatIssuePath(path: IssuePath): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out.length === 0 ? p : `.${p}`;
  return out;
}

const TYPE_WORDS: Record<string, string> = {
  object: 'a mapping',
  record: 'a mapping',
  array: 'a list',
  string: 'text',
  number: 'a number',
  boolean: 'true or false',
};

/** zod's words, made into the file's words: "expected a mapping, got a list". */
function issueMessage(issue: z.core.$ZodIssue, input: unknown): string {
  let v: unknown = input;
  for (const p of issue.path) v = v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[p] : undefined;
  const got = v === null ? 'nothing' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'a mapping' : JSON.stringify(v);
  if (v === undefined && issue.code !== 'custom') return issue.code === 'invalid_type' ? 'missing' : `missing: ${issue.message}`;
  switch (issue.code) {
    case 'invalid_type':
      return `expected ${TYPE_WORDS[issue.expected] ?? issue.expected}, got ${got}`;
    case 'too_small':
      return issue.origin === 'string' ? 'must not be empty' : `must be at least ${String(issue.minimum)}`;
    case 'too_big':
      return `must be at most ${String(issue.maximum)}`;
    default:
      return issue.message;
  }
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function deleteAt(root: unknown, path: PropertyKey[], key: string): void {
  let v: unknown = root;
  for (const p of path) v = v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[p] : undefined;
  if (isMapping(v)) delete v[key];
}

export interface PolicyFileCheck {
  file: PolicyFile | null;
  errors: PolicyIssue[];
  /** Unknown keys: named, ignored, not a failure. */
  warnings: PolicyIssue[];
}

/**
 * The shape of one policy file (or of the merged layers): errors, and warnings for keys nobody reads. An unknown
 * key under a rule's `when` is an error, not a warning: ignoring a misspelt condition would make the rule match
 * more than its author meant.
 */
export function checkPolicyFile(input: unknown): PolicyFileCheck {
  if (input === null || input === undefined) input = {};
  if (!isMapping(input)) {
    return { file: null, errors: [{ path: [], message: `expected a mapping of ${POLICY_SECTIONS.join(', ')}; got ${Array.isArray(input) ? 'a list' : JSON.stringify(input)}` }], warnings: [] };
  }
  const clone = structuredClone(input);
  const errors: PolicyIssue[] = [];
  const warnings: PolicyIssue[] = [];
  let parsed = PolicyFileSchema.safeParse(clone);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      if (issue.code === 'unrecognized_keys') {
        const inWhen = issue.path.length >= 3 && issue.path[0] === 'rules' && issue.path[issue.path.length - 1] === 'when';
        for (const key of issue.keys) {
          const path = [...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p)), key];
          if (inWhen) errors.push({ path, message: `unknown condition — known: ${CONDITION_KEYS.join(', ')}` });
          else warnings.push({ path, message: 'unknown key, ignored' });
          deleteAt(clone, issue.path, key);
        }
      } else {
        errors.push({ path: issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p)), message: issueMessage(issue, input) });
      }
    }
    if (errors.length > 0) return { file: null, errors, warnings };
    parsed = PolicyFileSchema.safeParse(clone);
    if (!parsed.success) return { file: null, errors: parsed.error.issues.map((i) => ({ path: i.path.map(String), message: issueMessage(i, input) })), warnings };
  }
  const file = parsed.data;
  errors.push(...shapeProblems(file));
  return errors.length > 0 ? { file: null, errors, warnings } : { file, errors, warnings };
}

/** What a single file can get wrong beyond types: names, globs, time zones. */
function shapeProblems(file: PolicyFile): PolicyIssue[] {
  const out: PolicyIssue[] = [];
  for (const name of Object.keys(file.worth ?? {})) {
    if (name === 'default') continue;
    if (!NAME.test(name) || name.toLowerCase() === 'none') out.push({ path: ['worth', name], message: `'${name}' cannot name a worth level: use a word like high, normal, low` });
  }
  const tz = file.overnight?.time_zone;
  if (tz !== undefined && !isValidTimeZone(tz)) out.push({ path: ['overnight', 'time_zone'], message: `'${tz}' is not an IANA time zone (e.g. America/New_York, Europe/Berlin, UTC)` });
  if (file.overnight && file.overnight.from === file.overnight.to) out.push({ path: ['overnight', 'to'], message: 'the window is empty: from and to are the same time' });
  for (const pattern of Object.keys(file.cheaper ?? {})) {
    if (!GLOB.test(pattern)) out.push({ path: ['cheaper', pattern], message: `'${pattern}' is not a model id or a prefix ending in * (a * goes only at the end)` });
  }
  const gh = file.tracker?.github;
  gh?.repos.forEach((r, i) => {
    if (!parseRepoSlug(r)) out.push({ path: ['tracker', 'github', 'repos', i], message: `'${r}' is not a GitHub repository like owner/name` });
  });
  const atLimit = file.engine?.at_limit;
  if (atLimit !== undefined && (typeof atLimit === 'string' ? atLimit !== 'wait' : atLimit.then !== 'wait' && !atLimit.harness && !atLimit.model)) {
    out.push({ path: ['engine', 'at_limit'], message: 'switch and ask need somewhere to switch to: {then: switch, harness: codex} or {then: ask, model: claude-sonnet-5}' });
  }
  if (file.engine?.lease !== undefined && file.engine.lease < 10_000) out.push({ path: ['engine', 'lease'], message: 'a lease under 10s would expire between renewals: use 30s or more' });
  for (const [i, f] of (file.engine?.include ?? []).entries()) {
    if (f.startsWith('/') || f.split('/').includes('..')) out.push({ path: ['engine', 'include', i], message: `'${f}' is not a path inside the repository` });
  }
  if (gh?.every !== undefined && gh.every < TRACKER_MIN_EVERY_MS) out.push({ path: ['tracker', 'github', 'every'], message: 'at most one round a minute (GitHub allows 30 searches a minute): use 1m or more' });
  (file.rules ?? []).forEach((rule, i) => {
    for (const w of rule.when?.window ?? []) {
      if (!/^[a-z0-9_]*\*?$/.test(w) || w === '') out.push({ path: ['rules', i, 'when', 'window'], message: `'${w}' is not a window name like five_hour, seven_day or seven_day_*` });
    }
  });
  return out;
}

/** A complete file (the merged layers) made into the policy; problems that need the whole picture are errors here. */
export function buildPolicy(file: PolicyFile, rulesSource: string): { policy: Policy; errors: PolicyIssue[] } {
  const errors: PolicyIssue[] = [];
  const levels: WorthLevel[] = Object.entries(file.worth ?? {})
    .filter(([k]) => k !== 'default')
    .map(([name, v]) => ({ name, keepsMs: (v as { keeps: number }).keeps }));
  const known = new Set(levels.map((l) => l.name));
  const levelNames = levels.length > 0 ? levels.map((l) => l.name).join(', ') : 'none defined';
  const rawDefault = file.worth?.default ?? 'none';
  const worthDefault = rawDefault.toLowerCase() === 'none' ? null : rawDefault;
  if (worthDefault !== null && !known.has(worthDefault)) errors.push({ path: ['worth', 'default'], message: `'${worthDefault}' is not a worth level (levels: ${levelNames}; or none)` });

  const caps = (c: { per_day?: number | null; per_week?: number | null } | null | undefined): AllowanceCaps => ({
    perDayMicros: c?.per_day ?? null,
    perWeekMicros: c?.per_week ?? null,
  });
  const seats: Record<string, SeatAllowance> = {};
  for (const [handle, c] of Object.entries(file.allowance?.seats ?? {})) {
    const s: SeatAllowance = {};
    if (c && c.per_day !== undefined) s.perDayMicros = c.per_day;
    if (c && c.per_week !== undefined) s.perWeekMicros = c.per_week;
    seats[handle.toLowerCase()] = s;
  }

  const o = file.overnight;
  const overnight: OvernightWindow | null = o
    ? {
        from: minuteText(o.from),
        to: minuteText(o.to),
        fromMinute: o.from,
        toMinute: o.to,
        timeZone: o.time_zone ?? null,
        capMicros: o.cap ?? OVERNIGHT_DEFAULTS.capMicros,
        concurrency: o.concurrency ?? OVERNIGHT_DEFAULTS.concurrency,
        onCall: o.on_call ?? null,
        escalateAfterMs: o.escalate_after ?? OVERNIGHT_DEFAULTS.escalateAfterMs,
        digest: o.digest ? { at: minuteText(o.digest.at), minute: o.digest.at, channel: o.digest.channel } : null,
      }
    : null;

  const cheaper: CheaperStep[] = Object.entries(file.cheaper ?? {}).map(([pattern, model]) => ({
    pattern,
    model: model === null || model.toLowerCase() === 'none' ? null : model,
  }));

  // The built-in rules name the built-in levels: a file that renames the levels must bring rules of its own, and
  // is told so at its worth section rather than at rules it never wrote.
  const missingForDefaults = new Set<string>();
  const unknownLevel = (level: string, path: IssuePath): void => {
    if (rulesSource === 'defaults') missingForDefaults.add(level);
    else errors.push({ path, message: `'${level}' is not a worth level (levels: ${levelNames})` });
  };
  const rules: PolicyRule[] = (file.rules ?? []).map((r, index) => {
    const w = r.when ?? {};
    const when: RuleConditions = {};
    if (w.reset_within !== undefined) when.resetWithinMs = w.reset_within;
    if (w.worth !== undefined) when.worth = w.worth;
    if (w.worth_at_least !== undefined) when.worthAtLeast = w.worth_at_least;
    if (w.allowance_left !== undefined) when.allowanceLeft = w.allowance_left;
    if (w.owner_idle !== undefined) when.ownerIdleMs = w.owner_idle;
    if (w.keeps_until_morning !== undefined) when.keepsUntilMorning = w.keeps_until_morning;
    if (w.window !== undefined) when.window = w.window;
    for (const level of when.worth ?? []) {
      if (!known.has(level)) unknownLevel(level, ['rules', index, 'when', 'worth']);
    }
    if (when.worthAtLeast !== undefined && !known.has(when.worthAtLeast)) unknownLevel(when.worthAtLeast, ['rules', index, 'when', 'worth_at_least']);
    return { index, name: r.name ?? defaultRuleName(r.then, when), when, then: r.then, line: null };
  });

  if (missingForDefaults.size > 0) {
    const names = [...missingForDefaults].map((n) => `'${n}'`).join(', ');
    errors.push({ path: ['worth'], message: `the built-in rules use the worth level ${names}: define it, or write rules of your own` });
  }
  return {
    policy: {
      amberAt: file.amber_at ?? 90,
      worth: { levels, default: worthDefault },
      allowance: { default: caps(file.allowance?.default), seats },
      overnight,
      cheaper,
      rules,
      handoff: { folder: file.handoff?.folder ?? null, allowUntracked: file.handoff?.allow_untracked ?? [] },
      worthValues: Object.fromEntries(Object.entries(file.worth_values ?? {}).filter(([name]) => known.has(name))),
      tracker: {
        github: file.tracker?.github
          ? { repos: file.tracker.github.repos, label: file.tracker.github.label ?? TRACKER_DEFAULT_LABEL, everyMs: file.tracker.github.every ?? TRACKER_DEFAULT_EVERY_MS }
          : null,
      },
      engine: enginePolicy(file.engine),
      rulesSource,
    },
    errors,
  };
}

function enginePolicy(e: PolicyFile['engine']): EnginePolicy {
  const d = ENGINE_DEFAULTS;
  return {
    mode: e?.mode ?? d.mode,
    concurrency: e?.concurrency ?? d.concurrency,
    leaseMs: e?.lease ?? d.leaseMs,
    verify: { test: e?.verify?.test ?? null, types: e?.verify?.types ?? null, lint: e?.verify?.lint ?? null, build: e?.verify?.build ?? null },
    maxVerifyAttempts: e?.max_verify_attempts ?? d.maxVerifyAttempts,
    setup: e?.setup ?? d.setup,
    include: e?.include ?? d.include,
    portBlock: e?.port_block ?? d.portBlock,
    harness: e?.harness ?? d.harness,
    atLimit: atLimitPolicy(e?.at_limit),
  };
}

function atLimitPolicy(a: NonNullable<PolicyFile['engine']>['at_limit']): AtLimitPolicy {
  if (a === undefined) return ENGINE_DEFAULTS.atLimit;
  if (typeof a === 'string') return { then: a, harness: null, model: null };
  return { then: a.then, harness: a.harness ?? null, model: a.model ?? null };
}

function minuteText(minute: number): string {
  return `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;
}

/** "hold when reset_within", "always ask": a name for a rule its author did not name. */
function defaultRuleName(then: RuleAction, when: RuleConditions): string {
  const keys: string[] = [];
  if (when.resetWithinMs !== undefined) keys.push('reset_within');
  if (when.worth !== undefined) keys.push('worth');
  if (when.worthAtLeast !== undefined) keys.push('worth_at_least');
  if (when.allowanceLeft !== undefined) keys.push('allowance_left');
  if (when.ownerIdleMs !== undefined) keys.push('owner_idle');
  if (when.keepsUntilMorning !== undefined) keys.push('keeps_until_morning');
  if (when.window !== undefined) keys.push('window');
  return keys.length === 0 ? `always ${then}` : `${then} when ${keys.join(' + ')}`;
}
