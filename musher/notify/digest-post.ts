import { digestTime, lastNight, type Span } from '../../core/overnight/digest.js';
import { escapeMrkdwn } from '../../core/notify/messages.js';
import type { Log } from '../log.js';
import type { Job, JobResult, NewJob } from '../scheduler/job.js';
import type { JobHandler } from '../scheduler/scheduler.js';
import type { DigestSettings, NightDigest } from '../engine/night-digest.js';
import type { SlackMessageBody, SlackPostResult } from './slack.js';

/**
 * Posts the morning digest (issue 15 § 7) once per night per repository: each digest is a scheduler job (kind
 * `overnight-digest`, its repository and night in its payload) due at the policy's digest time after the night's
 * end. The scheduler keeps jobs in the store and runs each at most once, across restarts too; `plan` schedules a
 * night's digest only when no job for that repository and night exists yet, in any state. No digest in the policy:
 * nothing is planned. Slack not set up: one log line, and the night counts as told.
 */

export const DIGEST_KIND = 'overnight-digest';
/** A digest more than this late (musher was off all morning) is not posted any more: `sleds digest` still shows it. */
export const DIGEST_STALE_MS = 12 * 3_600_000;
const SECTION_MAX = 2_900;

export interface DigestPostDeps {
  digest: NightDigest;
  /** The repositories with overnight jobs. */
  repos(): string[];
  settingsOf(repoRoot: string): DigestSettings;
  /** The repository's window in progress at a time, else its next (null: no window). */
  windowAt(repoRoot: string, ms: number): Span | null;
  jobs: { list(limit?: number): Job[]; schedule(job: NewJob): Job };
  /** chat.postMessage; null: Slack is not set up on this musher. */
  post(): ((channel: string, message: SlackMessageBody) => Promise<SlackPostResult>) | null;
  log: Log;
}

const planned = (j: Job, repoRoot: string, nightEndMs: number) => j.kind === DIGEST_KIND && j.payload.repoRoot === repoRoot && j.payload.nightEndMs === nightEndMs;

export function digestPoster(d: DigestPostDeps) {
  /** The nights whose digest is due now or next: the last one ended (unless long past its time), and the coming one. */
  const nightsOf = (repo: string, now: number): Span[] => {
    const out: Span[] = [];
    const last = lastNight((ms) => d.windowAt(repo, ms), now);
    if (last) out.push(last);
    const next = d.windowAt(repo, last ? last.endMs : now);
    if (next && next.endMs !== last?.endMs) out.push(next);
    return out;
  };
  const plan = (now: number): void => {
    const known = d.jobs.list(1000).filter((j) => j.kind === DIGEST_KIND);
    for (const repo of d.repos()) {
      const s = d.settingsOf(repo);
      if (!s.digest) continue;
      for (const night of nightsOf(repo, now)) {
        const at = digestTime(night, s.digest.minute, s.zone);
        if (now - at > DIGEST_STALE_MS) continue;
        if (known.some((j) => planned(j, repo, night.endMs))) continue;
        d.jobs.schedule({ kind: DIGEST_KIND, runAt: at, payload: { repoRoot: repo, nightEndMs: night.endMs } });
      }
    }
  };
  const run = async (job: Job, now: number): Promise<JobResult> => {
    const repo = String(job.payload.repoRoot);
    const digest = d.digest.digests(now, repo).find((x) => x.night.endMs === job.payload.nightEndMs);
    if (!digest) return { ok: true, summary: `no digest for ${repo}: its night is not the last one any more` };
    const s = d.settingsOf(repo);
    if (!s.digest) return { ok: true, summary: `no digest for ${repo}: its policy has none now` };
    if (digest.delivered.length + digest.waiting.length + digest.atAWall.length + digest.atWork.length === 0) return { ok: true, summary: `no digest for ${repo}: no overnight job ran last night` };
    const post = d.post();
    const notSetUp = () => {
      d.log.info(`digest: ${digest.header} — not posted, Slack is not set up (sleds slack set-token); sleds digest shows it`);
      return { ok: false, summary: 'not posted: Slack is not set up' };
    };
    if (!post) return notSetUp();
    // Titles and questions come from route files and agents: escaped, so none of them is a mention (<!channel>) or a link.
    const text = escapeMrkdwn(digest.text);
    // A section's text holds 3000 characters; the fallback text carries the whole digest.
    const shown = text.length > SECTION_MAX ? `${text.slice(0, SECTION_MAX - 1)}…` : text;
    const r = await post(s.digest.channel, { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text: shown } }] });
    if (!r.ok && r.code === 'no_token') return notSetUp();
    if (!r.ok) {
      d.log.warn(`digest: ${digest.header} — not posted: ${r.error}`);
      return { ok: false, summary: `not posted: ${r.error}` };
    }
    d.log.info(`digest: ${digest.header} posted`);
    return { ok: true, summary: digest.header, detail: { channel: r.channel, ts: r.ts } };
  };
  return {
    plan,
    handler(clock: { now(): number }): JobHandler {
      return {
        run: async (job) => {
          try {
            return await run(job, clock.now());
          } finally {
            plan(clock.now()); // the next night's
          }
        },
      };
    },
  };
}
