/**
 * The morning digest (issue 15 § 7) through a real musher composed as the daemon composes it (musher/compose.ts), on a
 * test clock, over real SQLite, answering the real CLI on its socket, posting to a fake Slack Web API on 127.0.0.1:
 * at the policy's 08:00 exactly one message in #eng (one job delivered with its PR, one waiting for an answer); a
 * restarted musher after 08:00 sends no second one; `sleds digest --json` gives the same groups, and `sleds queue`
 * tells each job's night in words.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { escapeMrkdwn } from '../../core/notify/messages.js';
import { resolvePaths } from '../../core/paths.js';
import { nodeReceiptBody } from '../../core/routes/node-receipt.js';
import { compose, type House } from '../../musher/compose.js';
import type { Log } from '../../musher/log.js';
import { DIGEST_KIND } from '../../musher/notify/digest-post.js';
import { startServer, type MusherServer } from '../../musher/server.js';
import { startFakeSlack, type FakeSlack } from '../support/fake-slack.js';
import { writeSledsConfig } from '../support/sleds-config.js';
import { sleds, waitFor, type SledsWorld } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';

const BOT = 'xoxb-1234-5678-SECRET-bot';
const H = 3_600_000;
const M = 60_000;
/** Dec 2 2026, 00:00 UTC: the night runs 22:00 Dec 2 to 06:00 Dec 3; its digest is due 08:00 Dec 3. */
const DAY = Date.UTC(2026, 11, 2);
const at = (h: number, m = 0) => DAY + h * H + m * M;

const ROUTE = `title: Nightly chores
nodes:
  - id: deps
    overnight: true
    cap: $4
    brief: Bump the dependencies.
    band: { low_usd: 2, high_usd: 6, low_min: 10, high_min: 30, confidence: 0.8 }
  - id: docs
    overnight: true
    brief: Refresh the docs.
    band: { low_usd: 1, high_usd: 3, low_min: 5, high_min: 15, confidence: 0.6 }
`;

const newWorld = useWorlds({ SLEDS_NO_AUTOSTART: '1', SLEDS_SEAT: 'dana', SLEDS_KEYRING: 'file' });
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** musher in this process: composed with the test clock, listening on the world's socket. */
async function startHouse(w: SledsWorld, clock: { now(): number }, logs: string[]): Promise<{ house: House; stop(): Promise<void> }> {
  const paths = resolvePaths(w.env, w.home);
  for (const dir of [paths.configDir, paths.dataDir, paths.runtimeDir, paths.stateDir, paths.spoolDir]) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const log: Log = { info: (m) => logs.push(m), warn: (m) => logs.push(m), error: (m) => logs.push(m) };
  // The secret store is chosen from the process's environment (the daemon's own): the world's file store.
  const keyring = process.env.SLEDS_KEYRING;
  process.env.SLEDS_KEYRING = 'file';
  const house = compose({ paths, env: w.env, homeDir: w.home, clock, timeZone: 'UTC', log });
  if (keyring === undefined) delete process.env.SLEDS_KEYRING;
  else process.env.SLEDS_KEYRING = keyring;
  const server: MusherServer = await startServer(house.services, paths.socketFile, log, () => undefined);
  await house.start();
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await server.close();
    await house.stop();
  };
  cleanups.push(stop);
  return { house, stop };
}

function repoWith(w: SledsWorld, policy: string): string {
  const repo = join(w.home, 'repo');
  mkdirSync(join(repo, '.sleds', 'routes'), { recursive: true });
  execFileSync('git', ['init', '-q', repo]);
  writeFileSync(join(repo, '.sleds', 'routes', 'chores.yml'), ROUTE);
  writeFileSync(join(repo, '.sleds', 'policy.yml'), policy);
  return repo;
}

const POLICY = 'overnight: { from: "22:00", to: "06:00", cap: $8, digest: { at: "08:00", channel: "#eng" } }\n';

/** The night: deps runs and is delivered with PR #41; docs asks a question nobody has answered by morning. */
function runTheNight(house: House, clock: { t: number }): void {
  const routes = house.musher.routes;
  const drive = (id: string, steps: Array<[number, Parameters<typeof routes.step>[3], Parameters<typeof routes.step>[5]?]>) => {
    clock.t = at(23, 2);
    const token = routes.claim('chores', id, 'engine-test', clock.t, 10 * M);
    if (token === null) throw new Error(`chores/${id} was not claimed`);
    for (const [t, event, patch] of steps) {
      clock.t = t;
      const r = routes.step('chores', id, token, event, t, patch ?? {});
      if (!r.ok) throw new Error(r.error);
    }
  };
  const body = nodeReceiptBody({
    id: 'r-deps',
    routeKey: 'chores',
    nodeId: 'deps',
    title: 'Bump the dependencies',
    repo: 'acme/app',
    seat: 'dana',
    harness: 'claude-code',
    promptChars: 40,
    filesTouched: 3,
    turns: 2,
    band: { lowUsd: 2, highUsd: 6, lowMin: 10, highMin: 30, confidence: 0.8 },
    startedAt: at(23, 2),
    endedAt: at(29, 12),
    priced: { costMicros: 3_000_000, models: ['claude-sonnet-4-5'], unpriced: [] },
    runtimeMs: 25 * M,
  });
  drive('deps', [
    [at(23, 2), { type: 'claimed' }],
    [at(23, 3), { type: 'prepared' }],
    [at(29), { type: 'turn-completed', sessionId: 'night-session-1' }],
    [at(29, 12), { type: 'verified' }, { prNumber: 41, prUrl: 'https://github.com/acme/app/pull/41', receipt: { body, signature: null, signer: null, host: 'h', unpriced: [] } }],
  ]);
  clock.t = at(24, 41);
  routes.addQuestion({ id: 'q-docs-1', routeKey: 'chores', nodeId: 'docs', question: 'Which export format: CSV & <!here>?', options: ['CSV: the band stays', 'Parquet: the band grows'], askedAt: at(24, 41) });
  drive('docs', [
    [at(23, 4), { type: 'claimed' }],
    [at(23, 5), { type: 'prepared' }],
    [at(24, 41), { type: 'question', questionId: 'q-docs-1' }],
  ]);
}

type DigestJson = { digests: Array<{ repoRoot: string; channel: string | null; header: string; delivered: Array<{ job: string; link: string | null }>; waiting: Array<{ job: string; line: string }>; atAWall: unknown[]; text: string }> };

describe('the morning digest', { timeout: 60_000 }, () => {
  it('at 08:00 posts one message to #eng (1 delivered · 1 waiting · 0 at a wall), not again after a restart; sleds digest and sleds queue tell the same night', async () => {
    const w = newWorld();
    const slack: FakeSlack = await startFakeSlack({ token: BOT, known: ['#eng'] });
    cleanups.push(() => slack.close());
    writeSledsConfig(w, { upstreams: { slack: slack.apiUrl } });
    expect((await sleds(w, ['slack', 'set-token'], `${BOT}\n`)).code).toBe(0);
    const repo = repoWith(w, POLICY);
    const clock = { t: at(21), now: () => clock.t };
    const logs: string[] = [];
    const first = await startHouse(w, clock, logs);
    const loaded = await sleds(w, ['route', 'load', '--json'], undefined, {}, repo);
    expect(loaded.code, loaded.stderr).toBe(0);
    // Loading a repository's overnight jobs plans its digest: one job, due at 08:00 in the window's zone.
    expect(first.house.musher.scheduler.list().filter((j) => j.kind === DIGEST_KIND).map((j) => [j.state, new Date(j.runAt).toISOString()])).toEqual([['scheduled', '2026-12-03T08:00:00.000Z']]);

    runTheNight(first.house, clock);

    // sleds queue: each job's night in words, times in the window's zone.
    const queue = await sleds(w, ['queue']);
    expect(queue.code, queue.stderr).toBe(0);
    expect(queue.stdout).toContain('  23:02 start · job chores/deps · batch tier · cap $4\n');
    expect(queue.stdout).toContain('  05:12 delivered · PR #41 · 25 min · $3.00 · in band · seat dana · claude-code · claude-sonnet-4-5 · unsigned');
    expect(queue.stdout).toContain('  00:41 question: Which export format: CSV & <!here>? → no reply yet · parked\n');
    expect(queue.stdout).not.toMatch(/CLAIMING|\(claimed\)|\(prepared\)/);

    const scheduler = first.house.musher.scheduler;
    clock.t = at(31, 59);
    await scheduler.tick(clock.now());
    await scheduler.idle();
    expect(slack.messages).toEqual([]);

    clock.t = at(32);
    await scheduler.tick(clock.now());
    await waitFor('the digest in #eng', () => slack.messages.length > 0);
    await scheduler.idle();
    expect(slack.messages).toHaveLength(1);
    const posted = slack.messages[0]!;
    expect(posted.channel).toBe('#eng');
    expect(posted.text.split('\n')).toEqual([
      '08:00 digest → #eng · 1 delivered · 1 waiting · 0 at a wall',
      'delivered · chores/deps · PR #41 https://github.com/acme/app/pull/41 · 25 min · $3.00 · in band · seat dana · claude-code · claude-sonnet-4-5 · unsigned — run sleds keys init',
      // The agent's words are escaped: no mention, no link of its own making.
      'waiting · chores/docs · asks: Which export format: CSV &amp; &lt;!here&gt;?',
    ]);
    expect(slack.requests.at(-1)!.headers.authorization).toBe(`Bearer ${BOT}`);

    clock.t = at(32, 1);
    await scheduler.tick(clock.now());
    await scheduler.idle();
    expect(slack.messages).toHaveLength(1);

    // sleds digest --json: the same groups, the same words.
    const digest = await sleds(w, ['digest', '--json']);
    expect(digest.code, digest.stderr).toBe(0);
    const d = JSON.parse(digest.stdout) as DigestJson;
    expect(d.digests).toHaveLength(1);
    expect(d.digests[0]!.header).toBe('08:00 digest → #eng · 1 delivered · 1 waiting · 0 at a wall');
    expect(d.digests[0]!.delivered.map((e) => [e.job, e.link])).toEqual([['chores/deps', 'https://github.com/acme/app/pull/41']]);
    expect(d.digests[0]!.waiting.map((e) => [e.job, e.line])).toEqual([['chores/docs', 'asks: Which export format: CSV & <!here>?']]);
    expect(d.digests[0]!.atAWall).toEqual([]);
    expect(escapeMrkdwn(d.digests[0]!.text)).toBe(posted.text);
    expect((await sleds(w, ['digest'])).stdout).toBe(`${d.digests[0]!.text}\n`);

    // A restart after 08:00: the night is told already; no second message.
    await first.stop();
    clock.t = at(32, 30);
    const second = await startHouse(w, clock, logs);
    await second.house.musher.scheduler.tick(clock.now());
    await second.house.musher.scheduler.idle();
    expect(slack.messages).toHaveLength(1);
    // The next night's digest is planned, once.
    expect(second.house.musher.scheduler.list().filter((j) => j.kind === DIGEST_KIND).map((j) => [j.state, new Date(j.runAt).toISOString()])).toEqual([
      ['scheduled', '2026-12-04T08:00:00.000Z'],
      ['done', '2026-12-03T08:00:00.000Z'],
    ]);
    expect(digest.stdout + logs.join('\n')).not.toContain(BOT);
  });

  it('no digest in the policy: nothing is planned or posted; Slack not set up: one log line, once', async () => {
    const w = newWorld();
    const slack = await startFakeSlack({ token: BOT, known: ['#eng'] });
    cleanups.push(() => slack.close());
    writeSledsConfig(w, { upstreams: { slack: slack.apiUrl } });
    const repo = repoWith(w, 'overnight: { from: "22:00", to: "06:00", cap: $8 }\n');
    const clock = { t: at(21), now: () => clock.t };
    const logs: string[] = [];
    const { house } = await startHouse(w, clock, logs);
    expect((await sleds(w, ['route', 'load', '--json'], undefined, {}, repo)).code).toBe(0);
    runTheNight(house, clock);
    clock.t = at(32);
    await house.musher.scheduler.tick(clock.now());
    await house.musher.scheduler.idle();
    expect(house.musher.scheduler.list().filter((j) => j.kind === DIGEST_KIND)).toEqual([]);
    // sleds digest still tells the night, with no channel.
    const d = JSON.parse((await sleds(w, ['digest', '--json'])).stdout) as DigestJson;
    expect(d.digests.map((x) => [x.channel, x.header])).toEqual([[null, '08:00 digest · 1 delivered · 1 waiting · 0 at a wall']]);

    // A digest in the policy, but no bot token: one line in the log, and the night counts as told.
    writeFileSync(join(repo, '.sleds', 'policy.yml'), POLICY);
    house.musher.planDigests(clock.now());
    await house.musher.scheduler.tick(clock.now());
    await house.musher.scheduler.idle();
    house.musher.planDigests(clock.now());
    await house.musher.scheduler.tick(clock.now() + M);
    await house.musher.scheduler.idle();
    expect(slack.messages).toEqual([]);
    expect(logs.filter((l) => l.startsWith('digest:'))).toEqual(['digest: 08:00 digest → #eng · 1 delivered · 1 waiting · 0 at a wall — not posted, Slack is not set up (sleds slack set-token); sleds digest shows it']);
  });
});
