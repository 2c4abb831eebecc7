import { composeDigest, lastNight, type Digest, type DigestJob, type Span } from '../../core/overnight/digest.js';
import { clock24 } from '../../core/overnight/timeline.js';
import { RUN_CYCLE } from '../../core/lifecycle/run.js';
import { receiptLineOf } from '../../core/routes/node-receipt.js';
import { nightQueue, type NightQueueDeps, type QueueJob } from './night-queue.js';
import { runId, type NodeRow } from './route-store.js';

/**
 * The morning digest's facts (issue 15 § 7): for each repository with overnight jobs, its last night (the window in
 * progress, else the one that ended last) and the jobs of that night — those that moved since it began, and those
 * still waiting for something — composed by core/overnight/digest.ts. `sleds digest` shows it; the digest job posts it.
 */

export interface DigestSettings {
  /** The zone the window's times are told in (its own, else musher's). */
  zone: string;
  /** The policy's digest (its time of day and channel); null: none is posted. */
  digest: { at: string; minute: number; channel: string } | null;
}

export interface NightDigestDeps extends Omit<NightQueueDeps, 'wallJobs' | 'cancelWallJob' | 'seat' | 'timeIn'> {
  settingsOf(repoRoot: string): DigestSettings;
}

export interface RepoDigest extends Digest {
  repoRoot: string;
  channel: string | null;
  night: Span;
}

const TERMINAL: ReadonlySet<string> = new Set(RUN_CYCLE.terminal);

export function nightDigest(d: NightDigestDeps) {
  const queue = nightQueue({
    ...d,
    timeIn: (repo) => (ms) => clock24(ms, d.settingsOf(repo).zone),
    wallJobs: () => [],
    cancelWallJob: () => ({ status: 404, body: {} }),
    seat: () => 'musher',
  });
  /** Of the night: it moved since the night began, or it still waits for something (an answer, a reset, a person). */
  const ofNight = (n: NodeRow, night: Span): boolean => !TERMINAL.has(n.run.state) || d.events.forEntity('run', runId(n.routeKey, n.nodeId)).some((e) => e.at >= night.startMs);
  const jobOf = (n: NodeRow, q: QueueJob | undefined): DigestJob => ({
    job: runId(n.routeKey, n.nodeId),
    title: n.title,
    state: n.run.state,
    prNumber: n.prNumber,
    prUrl: n.prUrl,
    receiptLine: receiptLineOf(n.receipt),
    question: n.run.questionId ? (d.routes.question(n.run.questionId)?.question ?? null) : null,
    note: n.run.state === 'QUEUED' ? (q?.note ?? null) : null,
    problem: n.run.problem ?? n.run.reason,
    lastError: n.lastError,
    capMicros: q?.capMicros ?? n.capMicros,
    spentMicros: q?.spentMicros ?? 0,
  });
  return {
    /** Each repository's digest of its night at `now` (`repoRoot`: that one alone), as `sleds digest` and Slack get it. */
    digests(now: number, repoRoot?: string): RepoDigest[] {
      const listed = new Map(((queue.list().body as { jobs: QueueJob[] }).jobs ?? []).map((j) => [j.job, j]));
      const byRepo = new Map<string, NodeRow[]>();
      for (const r of d.routes.routes()) {
        if (repoRoot !== undefined && r.repoRoot !== repoRoot) continue;
        const nights = d.routes.nodes(r.key).filter((n) => n.overnight);
        if (nights.length > 0) byRepo.set(r.repoRoot, [...(byRepo.get(r.repoRoot) ?? []), ...nights]);
      }
      const out: RepoDigest[] = [];
      for (const [repo, nodes] of byRepo) {
        const night = lastNight((ms) => d.nightOf(repo, ms), now);
        if (!night) continue; // no window in its policy: its overnight jobs never ran
        const s = d.settingsOf(repo);
        const jobs = nodes.filter((n) => ofNight(n, night)).map((n) => jobOf(n, listed.get(runId(n.routeKey, n.nodeId))));
        const digest = composeDigest(jobs, s.digest?.at ?? clock24(now, s.zone), s.digest?.channel ?? null);
        out.push({ repoRoot: repo, channel: s.digest?.channel ?? null, night: { startMs: night.startMs, endMs: night.endMs }, ...digest });
      }
      return out;
    },
  };
}

export type NightDigest = ReturnType<typeof nightDigest>;
