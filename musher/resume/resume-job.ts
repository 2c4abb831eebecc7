import { planResume, ResumeJob, ResumePlanError, type ResumeRequest } from '../../harnesses/resume-plan.js';
import { builtInHarness, type HarnessId } from '../../harnesses/registry.js';
import type { Log } from '../log.js';
import type { Job, JobResult } from '../scheduler/job.js';
import type { JobHandler } from '../scheduler/scheduler.js';
import { findLiveSessions } from './find-pane.js';
import type { HeadlessHandle, ResumeOutcome, ResumeRunner } from './runner.js';

/**
 * The job handler that resumes a session (kinds 'hold', 'defer', 'resume'): at run time it looks whether the session
 * still has a live tmux pane (Claude Code only: Codex keeps no such record), builds the plan with the binaries found
 * then and the environment made then (`envFor`: the gateway's URL and a fresh local token, which the jobs table never
 * holds), runs it, and keeps the outcome as the job's result.
 */

/** The binaries musher runs, by name: each harness's (its adapter's binary name, as config.yml's binaries keys) and tmux. */
export type Binaries = Readonly<Record<string, string | null>> & { readonly tmux: string | null };

/** The binary found for a harness (by the adapter's binary name), or null. */
export function harnessBinary(bins: Binaries, harness: HarnessId): string | null {
  return bins[builtInHarness(harness).binary.name] ?? null;
}

export interface ResumeJobDeps {
  runner: ResumeRunner;
  log: Log;
  claudeConfigDir: string;
  /** Looked up when a job runs (an upgrade between scheduling and running is picked up). */
  binaries: () => Binaries;
  /** Extra environment for the resumed harness (the lead: ANTHROPIC_BASE_URL + token of the gateway). */
  envFor?: (job: Job, target: ResumeJob) => Record<string, string> | Promise<Record<string, string>>;
}

export function resumeJobHandler(deps: ResumeJobDeps): JobHandler {
  return {
    async run(job, ctx) {
      const parsed = ResumeJob.safeParse(job.payload);
      if (!parsed.success) return { ok: false, summary: `the job's payload is not a resume: ${parsed.error.issues[0]?.message ?? 'invalid'}` };
      const target = parsed.data;
      const bins = deps.binaries();
      const live =
        target.where === 'pane-else-headless' && builtInHarness(target.harness).resumesInPane
          ? (findLiveSessions(deps.claudeConfigDir, target.sessionId).find((s) => s.pane !== null) ?? null)
          : null;
      const mode = live ? 'tmux' : 'headless';
      const needed = [[builtInHarness(target.harness).binary.name, harnessBinary(bins, target.harness)] as const, ...(live ? [['tmux', bins.tmux] as const] : [])];
      const missing = needed.find(([, bin]) => !bin);
      if (missing) return { ok: false, summary: `no ${missing[0]} binary found — install it or set binaries.${missing[0]} in config.yml` };
      const req: ResumeRequest = {
        harness: target.harness,
        sessionId: target.sessionId,
        cwd: target.cwd,
        model: target.model ?? null,
        prompt: target.prompt,
        permissionMode: target.permissionMode ?? null,
        env: {
          ...(live?.claudeConfigDirEnv ? { CLAUDE_CONFIG_DIR: live.claudeConfigDirEnv } : {}),
          ...(deps.envFor ? await deps.envFor(job, target) : {}),
        },
        mode,
        tmuxPane: live?.pane ?? undefined,
        tmuxSocket: live?.tmuxSocket ?? null,
        // The pane's variables travel in a 0600 file its wrapper reads, never as tmux's `-e` (an argv).
        paneLauncher: live ? deps.runner.paneLauncher() : undefined,
        claudeBin: bins.claude ?? '',
        codexBin: bins.codex ?? '',
        tmuxBin: bins.tmux ?? '',
      };
      let plan;
      try {
        plan = planResume(req);
      } catch (e) {
        if (e instanceof ResumePlanError) return { ok: false, summary: e.message };
        throw e;
      }
      const outcome = await deps.runner.run(plan, { name: `job-${job.id}`, onStarted: (h) => ctx.setHandle({ ...h }) });
      return resultOf(outcome);
    },

    recover(job) {
      const h = job.handle as Partial<HeadlessHandle> | null;
      if (!h || typeof h.pid !== 'number' || !h.logFile || !h.errFile || !h.harness || !h.sessionId) return null;
      return deps.runner
        .watch({
          pid: h.pid,
          procStart: h.procStart ?? null,
          harness: h.harness,
          sessionId: h.sessionId,
          logFile: h.logFile,
          errFile: h.errFile,
          startedAt: h.startedAt ?? job.startedAt ?? 0,
        })
        .then(resultOf);
    },
  };
}

/** The job's result from a resume outcome: one line, and the details `sleds jobs --json` and the next prompt show. */
export function resultOf(o: ResumeOutcome): JobResult {
  const where = o.mode === 'tmux' ? 'in its tmux pane' : 'headless';
  let summary: string;
  if (o.ok && o.mode === 'tmux') summary = `resumed ${where}`;
  else if (o.ok) summary = `ran ${where}: ${clip(o.result ?? '(no text)')}`;
  else summary = o.error ?? `failed ${where}`;
  return {
    ok: o.ok,
    summary,
    detail: {
      mode: o.mode,
      harness: o.harness,
      sessionId: o.sessionId,
      exitCode: o.exitCode,
      result: o.result,
      isError: o.isError,
      costUsd: o.costUsd,
      logFile: o.logFile,
      errFile: o.errFile,
      startedAt: o.startedAt,
      finishedAt: o.finishedAt,
    },
  };
}

function clip(s: string): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > 120 ? `${one.slice(0, 119)}…` : one;
}
