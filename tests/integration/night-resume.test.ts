/**
 * `sleds resume` / `/sled resume` (issue 15 § 6) on real parts: an overnight job the engine delivered (real git, the
 * plain agent, a fake GitHub) pulled into the checkout a person is in — the engine's own repository, where its
 * branch is already, or another clone, where it is fetched from origin beside their work — with what it did and decided.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nightResume } from '../../musher/engine/night-resume.js';
import { LifecycleEvents } from '../../musher/store/lifecycle-events.js';
import { git } from '../support/route-repo.js';
import { useEngineWorlds } from '../support/engine-world.js';

const { world, cleanups } = useEngineWorlds();
const HOUR = 3_600_000;
const night = (now: number) => ({ startMs: now - HOUR, endMs: now + 7 * HOUR, capMicros: 12_000_000, concurrency: 1 });

describe('resuming a delivered overnight job', { timeout: 60_000 }, () => {
  it('names its branch, PR, checks, receipt, summary and decisions; fetches the branch into another clone; refuses a job not delivered, saying what it is', async () => {
    const w = await world({
      night,
      mintBatchToken: async () => ({ ok: true, token: 'sleds_gw_t', baseUrl: 'http://127.0.0.1:4999', openaiBaseUrl: 'http://127.0.0.1:4999/v1' }),
      checks: { test: 'node check.mjs export.txt:csv' },
      route: `title: Exports
nodes:
  - id: job
    title: Export as CSV
    overnight: true
    band: { low_usd: 1, high_usd: 2, low_min: 5, high_min: 10, confidence: 0.5 }
    brief: "@write export.txt csv link"
  - id: later
    overnight: true
    depends_on: [job]
    brief: "@write later.txt later"
`,
    });
    await w.until(() => w.state('job') === 'AWAITING_MERGE', 'the overnight job delivered', 40);
    w.store.addDecision({ routeKey: 'eng-503', nodeId: 'job', question: 'A file or a link?', options: ['A file', 'A link'], answer: 'A link', answeredBy: 'dana', answeredAt: w.clock.now(), source: 'slack' });
    w.store.addDecision({ routeKey: 'eng-503', nodeId: 'job', question: 'Gzip the CSV?', options: ['Yes', 'No'], answer: 'Yes', answeredBy: 'sleds', answeredAt: w.clock.now() + 1, source: 'ladder', rung: 'decided', reason: "reversible, low risk: took the agent's first option" });
    const resume = nightResume({ routes: w.store, events: new LifecycleEvents(w.db), formatTime: (ms) => new Date(ms).toISOString().slice(11, 16) });
    const node = w.store.node('eng-503', 'job')!;

    // In the engine's own repository: the branch is there already.
    const here = await resume.resume({ job: 'eng-503/job', cwd: w.repo });
    expect(here.status).toBe(200);
    const body = here.body as { job: string; branch: string; branchHere: string; text: string; context: string };
    expect(body).toMatchObject({ job: 'eng-503/job', branch: 'sleds/eng-503/job', branchHere: 'local' });
    expect(body.text.split('\n')).toEqual(
      expect.arrayContaining([
        `Overnight job eng-503/job · Export as CSV — delivered: PR #${node.prNumber} ${node.prUrl}`,
        'Branch sleds/eng-503/job (in this repository: git switch sleds/eng-503/job)',
        expect.stringMatching(/^Receipt: \$0\.00 actual at ½ price/),
        'Checks: test ✓',
        'Decided overnight:',
        '  - A file or a link? → A link (dana, 09:00)',
        "  - Gzip the CSV? → Yes (decided: reversible, low risk: took the agent's first option)",
      ]),
    );
    expect(body.text).toContain('Changed: export.txt');
    expect(body.context).toContain('While you were away, sleds ran an overnight job');
    expect(body.context).toContain(body.text);
    // Without a job: the latest delivered in the repository the person is in.
    expect((await resume.resume({ cwd: w.repo })).body).toMatchObject({ job: 'eng-503/job' });

    // Another clone of the same origin: fetched as origin/<branch>, beside the person's work, nothing checked out.
    const other = mkdtempSync(join(tmpdir(), 'sl-resume-clone-'));
    cleanups.push(() => rmSync(other, { recursive: true, force: true }));
    execFileSync('git', ['clone', '--quiet', w.bare, join(other, 'shop')]);
    const clone = join(other, 'shop');
    const before = git(clone, 'rev-parse', 'HEAD');
    const fetched = await resume.resume({ job: 'eng-503/job', cwd: clone });
    expect(fetched.body).toMatchObject({ branchHere: 'fetched' });
    expect(git(clone, 'rev-parse', 'refs/remotes/origin/sleds/eng-503/job')).toBe(git(w.bare, 'rev-parse', 'sleds/eng-503/job'));
    expect(git(clone, 'rev-parse', 'HEAD')).toBe(before);
    expect((fetched.body as { text: string }).text).toContain('Branch sleds/eng-503/job fetched from origin (git switch sleds/eng-503/job)');
    // A clone of a repository no job was delivered to has nothing to resume.
    expect((await resume.resume({ cwd: other })).status).toBe(404);

    // Not delivered: refused with its state; an id that is not one is refused before it reaches git.
    expect(await resume.resume({ job: 'eng-503/later', cwd: w.repo })).toEqual({ status: 409, body: { error: 'eng-503/later is not delivered yet: it is QUEUED — sleds queue says what it waits for' } });
    expect((await resume.resume({ job: '--upload-pack=x', cwd: w.repo })).status).toBe(400);
    expect((await resume.resume({ job: 'eng-503', cwd: w.repo })).body).toEqual({ error: 'eng-503 has 2 overnight jobs: say which, e.g. eng-503/job' });
  });
});
