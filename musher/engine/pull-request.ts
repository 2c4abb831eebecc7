import { z } from 'zod';
import { oneLine } from '../../core/format.js';
import { withReceiptBlock } from '../../core/receipt/pr-block.js';
import { formatUsd } from '../../core/format.js';
import type { Clock } from '../clock.js';
import type { GithubClient } from '../github/client.js';
import { PullRequests } from '../github/wire.js';

/**
 * A node's pull request: opened once through GitHub's REST API (an open PR for the branch is found, not
 * duplicated), its body carrying the brief, the decisions and the receipt; then followed with ONE GraphQL query per
 * round for every open PR of a repository (aliases `pr0: pullRequest(number: …)`), its rate limits honoured —
 * `retryAfterMs` tells the engine when to ask again. sleds never merges: nothing here calls a merge endpoint or
 * the mergePullRequest / enablePullRequestAutoMerge mutations; a person (or their rule on GitHub) merges.
 */

export interface OpenPullRequest {
  owner: string;
  repo: string;
  /** The node's branch, pushed to `owner/repo`. */
  head: string;
  base: string;
  title: string;
  body: string;
}

export class PullRequestError extends Error {
  override readonly name = 'PullRequestError';
}

const SLUG_PART = /^[A-Za-z0-9_.-]{1,100}$/;
function slug(owner: string, repo: string): string {
  if (!SLUG_PART.test(owner) || !SLUG_PART.test(repo)) throw new PullRequestError(`${owner}/${repo} is not a GitHub repository name`);
  return `${owner}/${repo}`;
}

const Created = z.object({ number: z.number().int().positive(), html_url: z.string() });
const Whatever = z.unknown();

/** The open PR whose head is `owner:head`, or null. */
async function openPullFor(gh: GithubClient, owner: string, repo: string, head: string): Promise<{ number: number; url: string } | null> {
  const r = await gh.request('GET', `/repos/${slug(owner, repo)}/pulls`, { query: { head: `${owner}:${head}`, state: 'open', per_page: 10 }, schema: PullRequests, what: `looking for the open PR of ${head} on ${owner}/${repo}` });
  if (!r.ok) throw new PullRequestError(r.error);
  const found = r.data.find((p) => p.head.ref === head);
  return found ? { number: found.number, url: found.html_url } : null;
}

export async function openPullRequest(gh: GithubClient, p: OpenPullRequest): Promise<{ number: number; url: string }> {
  const existing = await openPullFor(gh, p.owner, p.repo, p.head);
  if (existing) return existing;
  const r = await gh.request('POST', `/repos/${slug(p.owner, p.repo)}/pulls`, {
    body: { title: p.title, head: p.head, base: p.base, body: p.body, draft: false },
    schema: Created,
    what: `opening the PR of ${p.head} on ${p.owner}/${p.repo}`,
  });
  if (r.ok) return { number: r.data.number, url: r.data.html_url };
  // Opened meanwhile (another engine, a retry after a lost answer): GitHub says so with a 422; that one is ours.
  if (r.status === 422 && /already exists/i.test(r.error)) {
    const again = await openPullFor(gh, p.owner, p.repo, p.head);
    if (again) return again;
  }
  throw new PullRequestError(r.error);
}

export async function updatePullRequestBody(gh: GithubClient, p: { owner: string; repo: string; number: number; body: string }): Promise<void> {
  const r = await gh.request('PATCH', `/repos/${slug(p.owner, p.repo)}/pulls/${p.number}`, { body: { body: p.body }, schema: Whatever, what: `updating the body of ${p.owner}/${p.repo}#${p.number}` });
  if (!r.ok) throw new PullRequestError(r.error);
}

// ---- following ----

export interface PrStatus {
  number: number;
  state: 'OPEN' | 'MERGED' | 'CLOSED';
  mergeable: 'MERGEABLE' | 'CONFLICTING' | 'UNKNOWN';
  reviewDecision: 'APPROVED' | 'CHANGES_REQUESTED' | 'REVIEW_REQUIRED' | null;
  checks: 'SUCCESS' | 'FAILURE' | 'PENDING' | null;
  failing: Array<{ name: string; summary: string }>;
  reviewComments: string[];
  mergedAt: number | null;
}

export interface FollowRound {
  statuses: PrStatus[];
  /** When to ask again at the earliest (rate-limited), or null: the engine's own pace. */
  retryAfterMs: number | null;
  /** One line when the round could not read the PRs (besides a rate limit), else null. */
  error: string | null;
}

/** At most this many PRs in one query: GitHub's node limit and point cost stay small. */
export const MAX_PRS_PER_QUERY = 50;
const CONTEXTS = 50;
const REVIEWS = 20;
const REVIEW_COMMENTS = 20;

/** The one query for a round: every PR by an alias, the fields the engine acts on, and the cost. */
export function followQuery(numbers: number[]): string {
  // The head commit's rollup (the form `gh pr view` asks for), and each reviewer's latest approval or request for
  // changes (a later plain comment does not hide a request for changes).
  const fields = `number state mergeable reviewDecision mergedAt
      commits(last: 1) { nodes { commit { oid statusCheckRollup { state contexts(first: ${CONTEXTS}) { nodes { __typename
        ... on CheckRun { name status conclusion title summary }
        ... on StatusContext { context state description } } } } } } }
      latestOpinionatedReviews(first: ${REVIEWS}) { nodes { state body author { login } comments(first: ${REVIEW_COMMENTS}) { nodes { path body } } } }`;
  const prs = numbers.map((n, i) => `    pr${i}: pullRequest(number: ${Math.trunc(n)}) { ${fields} }`).join('\n');
  return `query($owner: String!, $name: String!) {\n  repository(owner: $owner, name: $name) {\n${prs}\n  }\n  rateLimit { cost remaining resetAt }\n}`;
}

const CheckRunNode = z.object({ __typename: z.literal('CheckRun'), name: z.string(), status: z.string().nullish(), conclusion: z.string().nullish(), title: z.string().nullish(), summary: z.string().nullish() });
const StatusContextNode = z.object({ __typename: z.literal('StatusContext'), context: z.string(), state: z.string(), description: z.string().nullish() });
const ContextNode = z.union([CheckRunNode, StatusContextNode, z.object({ __typename: z.string() })]);
const PrNode = z.object({
  number: z.number().int(),
  state: z.enum(['OPEN', 'MERGED', 'CLOSED']),
  mergeable: z.enum(['MERGEABLE', 'CONFLICTING', 'UNKNOWN']),
  reviewDecision: z.enum(['APPROVED', 'CHANGES_REQUESTED', 'REVIEW_REQUIRED']).nullish(),
  mergedAt: z.string().nullish(),
  commits: z.object({
    nodes: z.array(z.object({ commit: z.object({ oid: z.string(), statusCheckRollup: z.object({ state: z.string(), contexts: z.object({ nodes: z.array(ContextNode.nullable()) }).nullish() }).nullish() }) }).nullable()),
  }),
  latestOpinionatedReviews: z
    .object({ nodes: z.array(z.object({ state: z.string(), body: z.string().nullish(), author: z.object({ login: z.string() }).nullish(), comments: z.object({ nodes: z.array(z.object({ path: z.string().nullish(), body: z.string() }).nullable()) }).nullish() }).nullable()) })
    .nullish(),
});
const FollowAnswer = z.object({
  data: z
    .object({
      repository: z.record(z.string(), PrNode.nullable()).nullable(),
      rateLimit: z.object({ cost: z.number(), remaining: z.number(), resetAt: z.string() }).nullish(),
    })
    .nullish(),
  errors: z.array(z.object({ type: z.string().optional(), message: z.string(), path: z.array(z.union([z.string(), z.number()])).optional() })).optional(),
});

const FAILED_RUN = new Set(['FAILURE', 'TIMED_OUT', 'CANCELLED', 'STARTUP_FAILURE', 'ACTION_REQUIRED']);

function checksOf(rollup: string | undefined): PrStatus['checks'] {
  if (rollup === undefined) return null;
  if (rollup === 'SUCCESS') return 'SUCCESS';
  if (rollup === 'FAILURE' || rollup === 'ERROR') return 'FAILURE';
  return 'PENDING'; // PENDING, EXPECTED
}

export function statusOf(n: z.infer<typeof PrNode>): PrStatus {
  const failing: PrStatus['failing'] = [];
  const rollup = n.commits.nodes.at(-1)?.commit.statusCheckRollup;
  for (const c of rollup?.contexts?.nodes ?? []) {
    if (!c) continue;
    const run = CheckRunNode.safeParse(c);
    if (run.success && run.data.conclusion && FAILED_RUN.has(run.data.conclusion)) {
      failing.push({ name: run.data.name, summary: oneLine([run.data.title, run.data.summary].filter(Boolean).join(' — ') || run.data.conclusion.toLowerCase(), 500) });
      continue;
    }
    const status = StatusContextNode.safeParse(c);
    if (status.success && (status.data.state === 'FAILURE' || status.data.state === 'ERROR')) {
      failing.push({ name: status.data.context, summary: oneLine(status.data.description || status.data.state.toLowerCase(), 500) });
    }
  }
  const reviewComments: string[] = [];
  for (const r of n.latestOpinionatedReviews?.nodes ?? []) {
    if (!r || r.state !== 'CHANGES_REQUESTED') continue;
    const who = r.author?.login ?? 'a reviewer';
    if (r.body?.trim()) reviewComments.push(`${who}: ${r.body.trim()}`);
    for (const c of r.comments?.nodes ?? []) if (c?.body.trim()) reviewComments.push(`${who} on ${c.path ?? 'the PR'}: ${c.body.trim()}`);
  }
  const merged = n.mergedAt ? Date.parse(n.mergedAt) : NaN;
  return {
    number: n.number,
    state: n.state,
    mergeable: n.mergeable,
    reviewDecision: n.reviewDecision ?? null,
    checks: checksOf(rollup?.state),
    failing,
    reviewComments,
    mergedAt: Number.isFinite(merged) ? merged : null,
  };
}

/** GitHub's secondary-limit advice when it gives no time: at least a minute. */
const FALLBACK_WAIT_MS = 60_000;

/**
 * One round: every PR of a repository in one GraphQL query (up to MAX_PRS_PER_QUERY; a repository with more takes
 * one query per that many, and a rate limit stops the round where it is, with what was read).
 */
export async function followPullRequests(gh: GithubClient, owner: string, repo: string, numbers: number[], clock: Clock): Promise<FollowRound> {
  const wanted = [...new Set(numbers.filter((n) => Number.isInteger(n) && n > 0))];
  if (wanted.length === 0) return { statuses: [], retryAfterMs: null, error: null };
  slug(owner, repo);
  const statuses: PrStatus[] = [];
  const errors: string[] = [];
  let retryAfterMs: number | null = null;
  for (let at = 0; at < wanted.length; at += MAX_PRS_PER_QUERY) {
    const part = await followOnce(gh, owner, repo, wanted.slice(at, at + MAX_PRS_PER_QUERY), clock);
    statuses.push(...part.statuses);
    if (part.error) errors.push(part.error);
    if (part.retryAfterMs !== null) {
      retryAfterMs = part.retryAfterMs;
      break;
    }
  }
  return { statuses, retryAfterMs, error: errors.length > 0 ? errors.join('; ') : null };
}

async function followOnce(gh: GithubClient, owner: string, repo: string, wanted: number[], clock: Clock): Promise<FollowRound> {
  const r = await gh.request('POST', '/graphql', {
    body: { query: followQuery(wanted), variables: { owner, name: repo } },
    schema: FollowAnswer,
    what: `following ${wanted.length} PR${wanted.length === 1 ? '' : 's'} on ${owner}/${repo}`,
  });
  const now = clock.now();
  if (!r.ok) {
    if (r.retryAt !== undefined) return { statuses: [], retryAfterMs: Math.max(0, r.retryAt - now), error: null };
    return { statuses: [], retryAfterMs: null, error: r.error };
  }
  const errors = r.data.errors ?? [];
  // GraphQL's primary limit is a 200 with RATE_LIMITED (and x-ratelimit-remaining 0, which the client has noted).
  if (errors.some((e) => e.type === 'RATE_LIMITED')) {
    const until = gh.blockedUntil('graphql');
    return { statuses: [], retryAfterMs: until !== null ? until - now : FALLBACK_WAIT_MS, error: null };
  }
  const repoData = r.data.data?.repository;
  if (!repoData) return { statuses: [], retryAfterMs: null, error: `GitHub has no repository ${owner}/${repo} for this token${errors[0] ? `: ${oneLine(errors[0].message, 200)}` : ''}` };
  const statuses: PrStatus[] = [];
  for (let i = 0; i < wanted.length; i++) {
    const node = repoData[`pr${i}`];
    if (node) statuses.push(statusOf(node));
  }
  const missing = wanted.filter((n) => !statuses.some((s) => s.number === n));
  const rate = r.data.data?.rateLimit;
  let retryAfterMs: number | null = null;
  if (rate && rate.remaining <= 0) {
    const reset = Date.parse(rate.resetAt);
    retryAfterMs = Number.isFinite(reset) ? Math.max(0, reset - now) : FALLBACK_WAIT_MS;
  }
  return { statuses, retryAfterMs, error: missing.length > 0 ? `GitHub has no PR ${missing.map((n) => `#${n}`).join(', ')} on ${owner}/${repo}` : null };
}

// ---- the body ----

export interface PrBodyInput {
  brief: string;
  /** What the agent said it did and what it changed; null when it said nothing. */
  summary?: string | null;
  /** With the ladder's rung and reason (issue 15 § 5) when it took them; none: a person answered a parked question. */
  decisions: Array<{ question: string; answer: string; answeredBy: string; at: number; rung?: string | null; reason?: string | null }>;
  /** The signed receipt's line, or null before the node has one. */
  receipt: string | null;
  route: { key: string; title: string; nodeId: string; tracker: string | null };
  /** runChecks' summary: "test ✓ (340/340 tests) · types ✓". */
  verification: string;
  /** An overnight job: its cap and what the gateway metered for it on the half-price tier (micro-dollars). */
  night?: { capMicros: number; spentMicros: number } | null;
}

/**
 * One decision in the PR, with the rung that took it and why: "Decided (reversible, low risk): …", "Resolved from
 * SPEC.md § Exports: '…' — …", "On-call @dana answered at 00:52 UTC: …"; a person's answer to a parked question as
 * it always read (who, when).
 */
export function decisionLine(d: PrBodyInput['decisions'][number]): string {
  const asked = `${oneLine(d.question, 500)} → **${oneLine(d.answer, 500)}**`;
  const reason = d.reason ? oneLine(d.reason, 500) : '';
  if (d.rung === 'decided') {
    const [why, what] = reason.split(/:\s*/, 2);
    return `- Decided (${why || 'reversible, low risk'}): ${asked}${what ? ` — ${what}` : ''}`;
  }
  if (d.rung === 'context') return `- ${reason.split(' → ')[0] || 'Resolved from context'} — ${asked}`;
  if (d.rung === 'on-call') {
    const who = /^[a-z0-9][a-z0-9._-]*$/i.test(d.answeredBy) ? `@${d.answeredBy}` : d.answeredBy;
    return `- On-call ${who} answered at ${new Date(d.at).toISOString().slice(11, 16)} UTC: ${asked}${reason ? ` (${reason})` : ''}`;
  }
  return `- ${asked} (${d.answeredBy}, ${new Date(d.at).toISOString().slice(0, 16).replace('T', ' ')}Z)`;
}

export function prBody(i: PrBodyInput): string {
  const lines = [
    `Node \`${i.route.nodeId}\` of route **${i.route.key}** (${i.route.title})${i.route.tracker ? ` · ${i.route.tracker}` : ''}.`,
    '',
    '### Brief',
    '',
    i.brief.trim(),
    '',
  ];
  if (i.summary) lines.push('### What was done', '', i.summary.trim(), '');
  if (i.decisions.length > 0) {
    lines.push('### Decisions', '');
    for (const d of [...i.decisions].sort((a, b) => a.at - b.at)) lines.push(decisionLine(d));
    lines.push('');
  }
  if (i.night) lines.push('### Overnight', '', `Ran in the overnight window on the half-price tier, under a cap of ${formatUsd(i.night.capMicros)}: ${formatUsd(i.night.spentMicros)} metered at batch prices.`, '');
  lines.push('### Verified before this PR', '', i.verification, '', '_Opened by `sleds engine`. sleds never merges: a person does._');
  const body = lines.join('\n');
  return i.receipt ? withReceiptBlock(body, i.receipt) : body;
}

/**
 * What a PR's status sends back to its node, as the pack's feedback (pure): a conflict first (nothing else can land
 * before it is resolved), then failing checks, then a request for changes; null when nothing is asked of the agent
 * (open and waiting, merged, closed — the engine handles those).
 */
export function prFeedback(s: PrStatus): { kind: 'checks-failed' | 'changes-requested' | 'conflict'; text: string } | null {
  if (s.state !== 'OPEN') return null;
  if (s.mergeable === 'CONFLICTING') return { kind: 'conflict', text: `PR #${s.number} conflicts with its base branch: merge the base into this branch, resolve the conflicts, commit.` };
  if (s.checks === 'FAILURE') {
    const lines = s.failing.length > 0 ? s.failing.map((f) => `- ${f.name}: ${f.summary}`) : ['- a check failed (GitHub names none)'];
    return { kind: 'checks-failed', text: `PR #${s.number}'s checks failed:\n${lines.join('\n')}` };
  }
  if (s.reviewDecision === 'CHANGES_REQUESTED') {
    const lines = s.reviewComments.length > 0 ? s.reviewComments.map((c) => `- ${c}`) : ['- (the reviewer left no comment; ask on the PR)'];
    return { kind: 'changes-requested', text: `Changes were requested on PR #${s.number}:\n${lines.join('\n')}` };
  }
  return null;
}
