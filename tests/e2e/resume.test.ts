/**
 * Resuming sessions with the REAL harnesses (claude 2.1.328, codex 0.169.0) against the fake model APIs: musher runs
 * a scheduled job headless (`claude -p --resume`, `codex exec resume`) or restarts the session in its own tmux pane,
 * and the fake API sees the same session id with the earlier conversation.
 */
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { runClaudePrint } from './harness/claude-env.js';
import { conversationText, lastUserPrompt, type FakeAnthropic } from './harness/fake-anthropic.js';
import { runCodexExec } from './harness/codex-env.js';
import { inputMessages, lastUserInput } from './harness/fake-openai.js';
import { useE2eFixture } from './harness/fixture.js';
import { TMUX_BIN } from './harness/tmux.js';
import { requestMusher } from '../../hooks/musher-client.js';
import type { Job } from '../../musher/scheduler/job.js';
import { sleds, startMusher, stopMusher, waitFor, type SledsWorld } from '../support/sleds-env.js';

describe('resuming a session with the real harnesses', { timeout: 120_000 }, () => {
  const fx = useE2eFixture({ claude: true, codex: true });

  async function schedule(world: SledsWorld, body: unknown): Promise<Job> {
    const res = await requestMusher(world.socket, 'POST', '/v1/jobs', JSON.stringify(body), { 'content-type': 'application/json' }, 5000);
    expect(res.status, res.body).toBe(201);
    return (JSON.parse(res.body) as { job: Job }).job;
  }

  function jobNow(world: SledsWorld, id: string, done: (j: Job) => boolean, what: string): Promise<Job> {
    return waitFor(
      what,
      async () => {
        const r = await sleds(world, ['jobs', '--json']);
        const job = (JSON.parse(r.stdout) as { jobs: Job[] }).jobs.find((j) => j.id === id);
        return job && done(job) ? job : null;
      },
      60_000,
    );
  }

  /** A Claude home whose musher runs the resumes: SLEDS_HOME inside it, the pinned claude and tmux in its config.yml. */
  async function claudeWorld(baseUrl: string) {
    const { home, world } = await fx.claudeWithSleds({ mode: 'apiKey', fakeUrl: baseUrl, sledsEnv: { TZ: 'UTC' }, sledsConfig: { binaries: { claude: fx.claudeBin, tmux: TMUX_BIN } } });
    return { home, world, cwd: home.cwd };
  }

  async function firstTurn(fake: FakeAnthropic, env: Record<string, string>, cwd: string): Promise<string> {
    const first = await runClaudePrint(fx.claudeBin, ['-p', '--output-format', 'json', 'ALPHA-7 remember the word marmalade'], { env, cwd, timeoutMs: 30_000 });
    expect(first.code, first.stderr).toBe(0);
    expect(fake.messageRequests()).toHaveLength(1);
    return (JSON.parse(first.stdout) as { session_id: string }).session_id;
  }

  it('a deferred Claude Code session runs headless at its time: same session id, the earlier conversation, the result kept', async () => {
    const fake = await fx.fakeAnthropic({ reply: (r) => (lastUserPrompt(r).includes('RESUME-9') ? 'Picked up where we left off: marmalade.' : 'Noted.') });
    const { home, world, cwd } = await claudeWorld(fake.url);
    const sessionId = await firstTurn(fake, home.env, cwd);
    await startMusher(world);

    const job = await schedule(world, {
      kind: 'defer',
      runAt: Date.now(),
      payload: { harness: 'claude-code', sessionId, cwd, where: 'headless', prompt: 'RESUME-9 carry on "as planned"' },
    });
    const done = await jobNow(world, job.id, (j) => j.state === 'done' || j.state === 'failed', 'the deferred run to finish');
    expect(done.state, JSON.stringify(done.result)).toBe('done');

    const requests = fake.messageRequests();
    expect(requests).toHaveLength(2);
    const resumed = requests[1]!;
    expect(resumed.headers['x-claude-code-session-id']).toBe(sessionId);
    expect(conversationText(resumed)).toContain('ALPHA-7 remember the word marmalade');
    expect(conversationText(resumed)).toContain('Noted.');
    expect(lastUserPrompt(resumed)).toBe('RESUME-9 carry on "as planned"');

    expect(done.result).toMatchObject({
      ok: true,
      summary: 'ran headless: Picked up where we left off: marmalade.',
      detail: { mode: 'headless', exitCode: 0, isError: false, result: 'Picked up where we left off: marmalade.', sessionId },
    });
    const logFile = String(done.result!.detail!.logFile);
    expect(logFile).toBe(join(world.sledsHome, 'state', 'resume', `job-${job.id}.out`));
    expect(JSON.parse(readFileSync(logFile, 'utf8'))).toMatchObject({ session_id: sessionId, is_error: false });
    const listed = await sleds(world, ['jobs']);
    expect(listed.stdout).toMatch(new RegExp(`^${job.id}  defer claude ${sessionId.slice(0, 8)} .* done\\s+ran headless: Picked up where we left off: marmalade\\.$`, 'm'));
  });

  it('a headless run outlives a musher restart: the next musher follows it to its end and records it once', async () => {
    const fake = await fx.fakeAnthropic({ reply: (r) => (lastUserPrompt(r).includes('RESUME-9') ? 'Finished while musher restarted.' : 'Noted.') });
    // A gate in front of the fake holds the resumed request until musher has restarted.
    const gate = await gatedProxy(fake.url);
    fx.later(() => gate.close());
    const { home, world, cwd } = await claudeWorld(gate.url);
    const sessionId = await firstTurn(fake, home.env, cwd);
    gate.hold();
    await startMusher(world);
    const job = await schedule(world, { kind: 'defer', runAt: Date.now(), payload: { harness: 'claude-code', sessionId, cwd, where: 'headless', prompt: 'RESUME-9 go' } });
    await waitFor('claude to ask the (held) fake', () => gate.waiting() > 0, 30_000);
    const running = await jobNow(world, job.id, (j) => j.state === 'running' && j.handle !== null, 'the job to be running with a handle');
    const pid = Number(running.handle!.pid);

    await stopMusher(world);
    const db = new Database(join(world.sledsHome, 'data', 'sleds.db'), { readonly: true });
    expect(db.prepare('SELECT state FROM jobs WHERE id = ?').get(job.id)).toEqual({ state: 'running' });
    db.close();
    expect(() => process.kill(pid, 0)).not.toThrow(); // claude lives on without musher

    await startMusher(world);
    gate.release();
    const done = await jobNow(world, job.id, (j) => j.state !== 'running', 'the next musher to record the run');
    expect(done.result).toMatchObject({ ok: true, summary: 'ran headless: Finished while musher restarted.', detail: { exitCode: null, isError: false } });
    expect(fake.messageRequests().filter((r) => lastUserPrompt(r).includes('RESUME-9'))).toHaveLength(1);
    expect(readFileSync(world.logFile, 'utf8')).toContain(`job ${job.id}: following the run a previous musher started`);
  });

  it('a held Claude Code session in tmux is restarted in its own pane with the prompt, same session, full history', async () => {
    const fake = await fx.fakeAnthropic({ reply: (r) => (lastUserPrompt(r).includes('PANE-RESUME') ? 'Back in the same pane.' : 'First answer in the pane.') });
    const { home, world, cwd } = await claudeWorld(fake.url);
    const tmux = await fx.claudeInTmux(home, [], 30_000);
    await tmux.sendText('ALPHA-7 remember the word marmalade');
    await tmux.sendKeys('Enter');
    await tmux.waitForText('First answer in the pane.', 30_000);
    const sessionId = String(fake.messageRequests()[0]!.headers['x-claude-code-session-id']);
    const paneBefore = (await tmuxDisplay(tmux.socket, tmux.target, '#{pane_id} #{pane_pid}')).split(' ');

    await startMusher(world);
    const job = await schedule(world, { kind: 'hold', runAt: Date.now(), payload: { harness: 'claude-code', sessionId, cwd, prompt: 'PANE-RESUME continue please' } });
    const done = await jobNow(world, job.id, (j) => j.state === 'done' || j.state === 'failed', 'the hold to run');
    expect(done.result).toMatchObject({ ok: true, summary: 'resumed in its tmux pane', detail: { mode: 'tmux', exitCode: 0 } });

    await tmux.waitForText('Back in the same pane.', 30_000);
    const resumed = fake.messageRequests().find((r) => lastUserPrompt(r).includes('PANE-RESUME'))!;
    expect(resumed.headers['x-claude-code-session-id']).toBe(sessionId);
    expect(conversationText(resumed)).toContain('ALPHA-7 remember the word marmalade');
    expect(conversationText(resumed)).toContain('First answer in the pane.');
    const paneAfter = (await tmuxDisplay(tmux.socket, tmux.target, '#{pane_id} #{pane_pid}')).split(' ');
    expect(paneAfter[0]).toBe(paneBefore[0]);
    expect(paneAfter[1]).not.toBe(paneBefore[1]);
    expect(existsSync(join(world.sledsHome, 'state', 'resume', `job-${job.id}.out`))).toBe(false); // not headless
  });

  it('a deferred Codex session runs headless with codex exec resume: same thread, the earlier input, the last agent message kept', async () => {
    const fake = await fx.fakeOpenAI({ reply: (r) => (lastUserInput(r).includes('RESUME-9') ? 'Codex carried on.' : 'Codex noted.') });
    const { home, env, world } = await fx.codexWithSleds({ fakeUrl: fake.url });

    const first = await runCodexExec(fx.codexBin, ['exec', '--skip-git-repo-check', '--json', 'ALPHA-7 remember the word marmalade'], { env, cwd: home.cwd });
    expect(first.code, first.stderr).toBe(0);
    const threadId = (JSON.parse(first.stdout.split('\n')[0]!) as { thread_id: string }).thread_id;
    await startMusher(world);
    const job = await schedule(world, { kind: 'defer', runAt: Date.now(), payload: { harness: 'codex', sessionId: threadId, cwd: home.cwd, prompt: 'RESUME-9 -x go on' } });
    const done = await jobNow(world, job.id, (j) => j.state === 'done' || j.state === 'failed', 'the codex run to finish');
    expect(done.result).toMatchObject({ ok: true, summary: 'ran headless: Codex carried on.', detail: { mode: 'headless', exitCode: 0, result: 'Codex carried on.' } });

    const resumed = fake.requests.filter((r) => r.pathname === '/v1/responses').at(-1)!;
    expect(resumed.headers['session-id']).toBe(threadId);
    expect(lastUserInput(resumed)).toBe('RESUME-9 -x go on');
    expect(inputMessages(resumed).map((m) => m.text).join('\n')).toContain('ALPHA-7 remember the word marmalade');
  });
});

async function tmuxDisplay(socket: string, target: string, format: string): Promise<string> {
  const { execFile } = await import('node:child_process');
  return new Promise((resolve, reject) =>
    execFile(TMUX_BIN, ['-L', socket, 'display-message', '-p', '-t', target, format], (err, stdout) => (err ? reject(err) : resolve(stdout.trim()))),
  );
}

/** An HTTP pass-through to the fake API that can hold requests until released (to stop musher mid-run). */
async function gatedProxy(target: string) {
  let held = false;
  const waiting: Array<() => void> = [];
  const server = http.createServer((req, res) => {
    const forward = () => {
      const url = new URL(req.url ?? '/', target);
      const up = http.request(url, { method: req.method, headers: req.headers }, (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      });
      up.on('error', () => res.destroy());
      req.pipe(up);
    };
    if (held && req.method === 'POST') waiting.push(forward);
    else forward();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hold: () => void (held = true),
    waiting: () => waiting.length,
    release: () => {
      held = false;
      for (const f of waiting.splice(0)) f();
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
