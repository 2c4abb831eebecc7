import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { ApiAnswer } from '../scheduler/api.js';
import type { LifecycleEvents } from '../store/lifecycle-events.js';
import { ROUTE_ID } from '../../core/routes/route-file.js';
import { receiptLineOf } from '../../core/routes/node-receipt.js';
import { resumeSummary } from '../../core/overnight/resume-summary.js';
import { runId, type NodeRow, type RouteStore } from './route-store.js';

/**
 * `sleds resume [<job>]` and `/sled resume [<job>]` (issue 15 § 6): a delivered overnight job — its branch brought
 * into the checkout the person is in (fetched from origin when it is another clone; never checked out over their
 * work) and what it did and decided, for them and, at the prompt, for their session's agent. Without a job: the
 * latest delivered in the repository the person is in.
 */

export interface NightResumeDeps {
  routes: RouteStore;
  events: LifecycleEvents;
  /** `00:41` in the person's zone. */
  formatTime(ms: number): string;
  git?: (args: string[], cwd: string) => Promise<{ ok: boolean; out: string }>;
}

const DELIVERED = new Set(['AWAITING_MERGE', 'COMPLETED']);
/** Only sleds' own branches are fetched: the name reaches git's argv. */
const NODE_BRANCH = /^sleds\/[a-z0-9][a-z0-9-]{0,39}\/[a-z0-9][a-z0-9-]{0,39}$/;

const realGit = async (args: string[], cwd: string) => {
  try {
    const r = await promisify(execFile)('git', args, { cwd, encoding: 'utf8' });
    return { ok: true, out: r.stdout.trim() };
  } catch {
    // not a repository, no such ref, no remote: the caller says what that means here
    return { ok: false, out: '' };
  }
};

export function nightResume(d: NightResumeDeps) {
  const git = d.git ?? realGit;
  const verifiedAt = (n: NodeRow) => {
    const e = d.events.forEntity('run', runId(n.routeKey, n.nodeId)).filter((x) => x.eventType === 'verified').at(-1);
    return e ? { at: e.at, checks: typeof e.payload.checks === 'string' ? e.payload.checks : null } : null;
  };

  /** The job a person names: `<route>/<node>`, or a route key whose route has one node (a queued job's). */
  const named = (job: string): NodeRow | { status: number; error: string } => {
    const [key, id, ...more] = job.split('/');
    if (more.length > 0 || !key || !ROUTE_ID.test(key) || (id !== undefined && !ROUTE_ID.test(id))) return { status: 400, error: `'${job.slice(0, 80)}' is not a job id like night-4f2a or eng-503/mailer — sleds queue lists them` };
    const nodes = d.routes.nodes(key).filter((n) => n.overnight);
    const n = id !== undefined ? nodes.find((x) => x.nodeId === id) : nodes.length === 1 ? nodes[0] : undefined;
    if (!n) return { status: 404, error: id === undefined && nodes.length > 1 ? `${key} has ${nodes.length} overnight jobs: say which, e.g. ${key}/${nodes[0]!.nodeId}` : `no overnight job '${job}' — sleds queue lists them` };
    return n;
  };

  return {
    async resume(req: { job?: string | undefined; cwd: string }): Promise<ApiAnswer> {
      const top = await git(['rev-parse', '--show-toplevel'], req.cwd);
      const here = top.ok ? top.out : null;
      let node: NodeRow;
      if (req.job) {
        const found = named(req.job);
        if ('error' in found) return { status: found.status, body: { error: found.error } };
        node = found;
      } else {
        const delivered = d.routes
          .routes()
          .filter((r) => here !== null && r.repoRoot === here)
          .flatMap((r) => d.routes.nodes(r.key))
          .filter((n) => n.overnight && DELIVERED.has(n.run.state) && n.branch !== null)
          .map((n) => ({ n, at: verifiedAt(n)?.at ?? 0 }))
          .sort((a, b) => b.at - a.at);
        if (delivered.length === 0) return { status: 404, body: { error: `no overnight job was delivered${here ? ` in ${here}` : ' here'} — sleds queue shows what is queued, waiting or at a wall` } };
        node = delivered[0]!.n;
      }
      const job = runId(node.routeKey, node.nodeId);
      if (!DELIVERED.has(node.run.state) || !node.branch) {
        const why = node.run.problem ?? node.run.reason ?? node.lastError;
        return { status: 409, body: { error: `${job} is not delivered yet: it is ${node.run.state}${why ? ` (${why})` : ''} — sleds queue says what it waits for` } };
      }
      const route = d.routes.route(node.routeKey)!;
      let branchHere: 'local' | 'fetched' | 'elsewhere' = 'elsewhere';
      if (here !== null && NODE_BRANCH.test(node.branch)) {
        const local = await git(['rev-parse', '--verify', '--quiet', `refs/heads/${node.branch}`], here);
        if (local.ok) branchHere = 'local';
        else {
          // Another clone of the repository: the branch comes from origin beside the person's work, never over it.
          const fetched = await git(['fetch', '--quiet', '--no-tags', 'origin', `+refs/heads/${node.branch}:refs/remotes/origin/${node.branch}`], here);
          if (fetched.ok) branchHere = 'fetched';
        }
      }
      const verified = verifiedAt(node);
      const decisions = d.routes.decisions(node.routeKey).filter((x) => x.nodeId === node.nodeId);
      const { text, context } = resumeSummary({
        job,
        title: node.title,
        state: node.run.state,
        branch: node.branch,
        prNumber: node.prNumber,
        prUrl: node.prUrl,
        summary: node.summary,
        checks: verified?.checks ?? null,
        receiptLine: receiptLineOf(node.receipt),
        decisions,
        branchHere,
        formatTime: d.formatTime,
      });
      return { status: 200, body: { job, repoRoot: route.repoRoot, branch: node.branch, branchHere, prUrl: node.prUrl, text, context } };
    },
  };
}
