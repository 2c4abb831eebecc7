/**
 * A hand-off asked for mid-work, with no wall: `/sled handoff dana` typed at the prompt, and the MCP `handoff` tool.
 * Two seats (sam, dana) with their own musher and keys, a bare git repository as the shared remote, the real seal and
 * transport; the teammate's `sleds pickup` gets the uncommitted work and the conversation.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureClaudeBinary } from '../e2e/harness/claude-binary.js';
import { CLI, disposeWorld, makeWorld, sleds, startMusher, waitFor, type SledsWorld } from '../support/sleds-env.js';
import { writeSledsConfig, type TestSledsConfig } from '../support/sleds-config.js';
import { limitAhead } from '../support/limit-ahead.js';
import { git, writeTranscript, type HookOut } from '../support/handoff-team.js';

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function prompt(w: SledsWorld, sessionId: string, cwd: string, text: string, transcriptPath: string): Promise<HookOut> {
  const r = await sleds(w, ['hook', 'UserPromptSubmit'], JSON.stringify({ session_id: sessionId, prompt: text, cwd, transcript_path: transcriptPath, hook_event_name: 'UserPromptSubmit' }));
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim() === '' ? {} : (JSON.parse(r.stdout) as HookOut);
}

/** `sleds <args>` on a real pseudo-terminal (python's pty), with `input` typed into it. */
function sledsOnTty(w: SledsWorld, args: string[], input: string, cwd: string): Promise<{ code: number; stdout: string }> {
  const spawnPty = 'import pty, sys; sys.exit(pty.spawn(sys.argv[1:]) >> 8)';
  return new Promise((resolve) => {
    const child = execFile('python3', ['-c', spawnPty, process.execPath, ...CLI, ...args], { env: w.env, cwd, timeout: 60_000 }, (err, stdout) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout });
    });
    child.stdin!.end(input);
  });
}

async function handoffs(w: SledsWorld): Promise<Array<{ id: string; state: string; direction: string; peer: string; wallId: string | null; sessionId: string }>> {
  return JSON.parse((await sleds(w, ['handoffs', '--json'])).stdout).handoffs;
}

/** The MCP server's handoff tool, called as `sessionId` would call it (`sleds mcp` over stdio, the SDK's client). */
async function handoffTool(w: SledsWorld, sessionId: string, cwd: string): Promise<(args: Record<string, unknown>) => Promise<{ text: string; isError: boolean }>> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [...CLI, 'mcp'], env: { ...(w.env as Record<string, string>), CLAUDE_CODE_SESSION_ID: sessionId }, cwd, stderr: 'pipe' });
  const client = new Client({ name: 'sleds-test', version: '0.0.0' });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return async (args) => {
    const r = (await client.callTool({ name: 'handoff', arguments: args })) as { content: Array<{ text?: string }>; isError?: boolean };
    return { text: r.content.map((c) => c.text ?? '').join('\n'), isError: r.isError === true };
  };
}

/** Sam and dana: keys, a roster naming dana as the owner of *.ts, clones of one bare remote, a musher each. */
async function team(danaEnv: NodeJS.ProcessEnv = {}, danaConfig: TestSledsConfig = {}, opts: { danaPinsSam?: boolean } = {}) {
  const root = mkdtempSync(join(tmpdir(), 'sl-mid-'));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const remote = join(root, 'shop.git');
  git(root, 'init', '-q', '--bare', remote);
  const a = join(root, 'sam-shop');
  const b = join(root, 'dana-shop');
  git(root, 'clone', '-q', remote, a);
  writeFileSync(join(a, 'cart.ts'), 'export const total = 1;\n');
  git(a, 'add', '.');
  git(a, 'commit', '-q', '-m', 'cart');
  git(a, 'push', '-q', 'origin', 'HEAD:main');

  const seat = async (handle: string, name: string, env: NodeJS.ProcessEnv = {}, config: TestSledsConfig = {}) => {
    const w = makeWorld({ SLEDS_SEAT: handle, SLEDS_KEYRING: 'file', ...env });
    cleanups.push(() => disposeWorld(w));
    writeSledsConfig(w, config);
    const keys = await sleds(w, ['keys', 'init', '--name', name, '--json']);
    expect(keys.code, `${keys.stdout}${keys.stderr}`).toBe(0); // with --json its error is on stdout
    return { w, entry: JSON.parse(keys.stdout).entry as Record<string, unknown> };
  };
  const sam = await seat('sam', 'Sam');
  const dana = await seat('dana', 'Dana', danaEnv, danaConfig);
  mkdirSync(join(a, '.sleds'));
  writeFileSync(join(a, '.sleds', 'roster.yml'), JSON.stringify({ teammates: [sam.entry, { ...dana.entry, areas: ['*.ts'] }] }, null, 2));
  git(a, 'add', '.sleds');
  git(a, 'commit', '-q', '-m', 'roster');
  git(a, 'push', '-q', 'origin', 'HEAD:main');
  git(root, 'clone', '-q', remote, b);
  // Dana checked sam's fingerprints with him and pinned his keys (her first hand-off from him).
  if (opts.danaPinsSam ?? true) {
    const trusted = await sleds(dana.w, ['keys', 'trust', 'sam', '--yes', '--json'], undefined, {}, b);
    expect(trusted.code, trusted.stderr).toBe(0);
  }
  await startMusher(sam.w);
  await startMusher(dana.w);
  return { root, remote, a, b, sam: sam.w, dana: dana.w };
}

describe('a hand-off asked for from the session: /sled handoff and the MCP tool', { timeout: 120_000 }, () => {
  it('/sled handoff with no name goes to the owner of the changed files; dana picks up the uncommitted work and the conversation', async () => {
    const t = await team();
    const sessionId = '5a1d0c3e-7b2f-4e9a-8c61-0d2f3a4b5c6d';
    const tx = join(t.sam.claudeDir, 'projects', t.a.replace(/[^A-Za-z0-9]/g, '-'), `${sessionId}.jsonl`);
    writeTranscript(tx, sessionId, t.a, 'remember the word PELICAN and fix the cart total');
    expect(await prompt(t.sam, sessionId, t.a, 'remember the word PELICAN and fix the cart total', tx)).not.toHaveProperty('decision');
    writeFileSync(join(t.a, 'cart.ts'), 'export const total = 2; // half done\n');

    const answer = await prompt(t.sam, sessionId, t.a, '/sled handoff', tx);
    expect(answer.decision).toBe('block'); // answered at the prompt: no model call
    const id = /^sled: Handed off to Dana\. Dana picks it up in Claude Code with \/sled pickup ([2-9a-km-np-z]{12}) — the session resumes there\./.exec(answer.reason ?? '')?.[1];
    expect(id, answer.reason).toBeDefined();
    const sent = await waitFor('the push', async () => (await handoffs(t.sam)).find((h) => h.id === id && h.state === 'sent'), 30_000);
    expect(sent).toMatchObject({ direction: 'sent', peer: 'dana', wallId: null, sessionId });
    expect(git(t.remote, 'for-each-ref', '--format=%(refname)')).toContain(`refs/sleds/handoffs/${id}`);
    expect(git(t.a, 'status', '--porcelain')).toContain(' M cart.ts'); // sam's checkout is left as it was

    const picked = await sleds(t.dana, ['pickup', id!, '--json'], undefined, {}, t.b);
    expect(picked.code, picked.stderr).toBe(0);
    const got = JSON.parse(picked.stdout) as { peer: string; dir: string; sessionId: string };
    expect(got).toMatchObject({ peer: 'sam', sessionId });
    expect(readFileSync(join(got.dir, 'cart.ts'), 'utf8')).toBe('export const total = 2; // half done\n');
    // Checked out as dana's own git would, not with musher's private umask (077).
    const mask = process.umask();
    expect(statSync(join(got.dir, 'cart.ts')).mode & 0o777).toBe(0o666 & ~mask);
    expect(statSync(got.dir).mode & 0o777).toBe(0o777 & ~mask);
    // Under the worktree's own project folder: `claude --resume=<id>` and `claude --continue` there both find it.
    const installed = join(t.dana.claudeDir, 'projects', got.dir.replace(/[^A-Za-z0-9]/g, '-'), `${sessionId}.jsonl`);
    expect(readFileSync(installed, 'utf8')).toContain('remember the word PELICAN');
    // Again in a terminal: nothing installed or started, the line says where the work is and the command to paste.
    const again = await sleds(t.dana, ['pickup', id!], undefined, {}, t.b);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toBe(`sleds: you picked up ${id} from sam before: the work is in ${got.dir} (branch sleds/handoff/${id}). To resume it: cd ${got.dir} && claude --resume=${sessionId}\n`);
  });

  it("from a sender dana has not pinned: refused with his fingerprints; on a terminal `sleds pickup` asks, pins and picks up", async () => {
    const t = await team({}, {}, { danaPinsSam: false });
    const sessionId = '9e5a4b7c-1f6d-4c3e-8a05-4b6c7d8e9f0a';
    const tx = join(t.sam.claudeDir, 'projects', t.a.replace(/[^A-Za-z0-9]/g, '-'), `${sessionId}.jsonl`);
    writeTranscript(tx, sessionId, t.a, 'port the cart to decimals');
    await prompt(t.sam, sessionId, t.a, 'port the cart to decimals', tx);
    writeFileSync(join(t.a, 'cart.ts'), 'export const total = 4;\n');
    const id = /\/sled pickup ([2-9a-km-np-z]{12})/.exec((await prompt(t.sam, sessionId, t.a, '/sled handoff dana', tx)).reason ?? '')?.[1];
    await waitFor('the push', async () => (await handoffs(t.sam)).find((h) => h.id === id && h.state === 'sent'), 30_000);

    const refused = await sleds(t.dana, ['pickup', id!, '--json'], undefined, {}, t.b);
    expect(refused.code).toBe(1);
    const body = JSON.parse(refused.stdout) as { error: string; kind: string; handle: string };
    expect(body).toMatchObject({ kind: 'untrusted-sender', handle: 'sam' });
    expect(body.error).toMatch(new RegExp(`^hand-off ${id} comes from 'sam', whose keys are not pinned on this seat \\(roster ed25519 [0-9a-f ]{19}, x25519 [0-9a-f ]{19}\\) — nothing was written`));
    expect(existsSync(`${t.b}-handoff-${id}`)).toBe(false);

    // On a terminal the same command shows the fingerprints, asks, pins sam and goes on with the pickup.
    const onTty = await sledsOnTty(t.dana, ['pickup', id!, '--headless'], 'y\n', t.b);
    expect(onTty.stdout).toContain('Trust these keys? [y/N]');
    expect(onTty.stdout).toMatch(/Pinned sam's keys/);
    expect(readFileSync(join(`${t.b}-handoff-${id}`, 'cart.ts'), 'utf8')).toBe('export const total = 4;\n');
    expect((await handoffs(t.dana)).find((h) => h.id === id)).toMatchObject({ direction: 'received', state: 'received', peer: 'sam' });
  });

  it('the MCP handoff tool sends this session to the teammate named and says so once it is pushed; an unknown name is refused in one line', async () => {
    const t = await team();
    const sessionId = '6b2e1d4f-8c3a-4f0b-9d72-1e3f4a5b6c7d';
    const tx = join(t.sam.claudeDir, 'projects', t.a.replace(/[^A-Za-z0-9]/g, '-'), `${sessionId}.jsonl`);
    writeTranscript(tx, sessionId, t.a, 'tidy the cart module');
    await prompt(t.sam, sessionId, t.a, 'tidy the cart module', tx);
    writeFileSync(join(t.a, 'notes.md'), 'left: the discount\n');

    const call = await handoffTool(t.sam, sessionId, t.a);

    const unknown = await call({ to: 'zed' });
    expect(unknown).toEqual({ isError: true, text: "sleds: hand-off not sent: 'zed' is not in .sleds/roster.yml — pull the latest roster, or hand off to a teammate it names" });
    expect(await handoffs(t.sam)).toEqual([]);

    const done = await call({ to: '@Dana' });
    expect(done.isError, done.text).toBe(false);
    const id = /\/sled pickup ([2-9a-km-np-z]{12})/.exec(done.text)?.[1];
    expect(done.text).toMatch(/^Handed off to Dana\. .* This session's work is theirs now: stop here and tell the person\.$/);
    // The tool answers after the push: the hand-off is on the remote already.
    expect((await handoffs(t.sam)).find((h) => h.id === id)).toMatchObject({ state: 'sent', peer: 'dana', sessionId });
    // Only the sealed bundle is on the remote: no branch carries the work in the clear.
    expect(git(t.remote, 'for-each-ref', '--format=%(refname)').split('\n').filter((r) => r.includes(id!))).toEqual([`refs/sleds/handoffs/${id}`]);
    const listed = await call({});
    expect(listed.text).toContain(`${id} to dana (sent)`);
  });

  it('at a wall the tool takes exit 5: the wall records the hand-off, and the tool says the hand-off\'s own sentence', async () => {
    const t = await team();
    const sessionId = '8d4f3a6b-0e5c-4b2d-9f94-3a5b6c7d8e9f';
    const tx = join(t.sam.claudeDir, 'projects', t.a.replace(/[^A-Za-z0-9]/g, '-'), `${sessionId}.jsonl`);
    writeTranscript(tx, sessionId, t.a, 'speed up the cart');
    await prompt(t.sam, sessionId, t.a, 'speed up the cart', tx);
    writeFileSync(join(t.a, 'cart.ts'), 'export const total = 3;\n');
    const stop = { session_id: sessionId, cwd: t.a, transcript_path: tx, hook_event_name: 'StopFailure', error: 'rate_limit', last_assistant_message: limitAhead().message };
    expect((await sleds(t.sam, ['hook', 'StopFailure'], JSON.stringify(stop))).code).toBe(0);
    const wall = await waitFor('the wall and its snapshot', async () => (JSON.parse((await sleds(t.sam, ['status', '--json'])).stdout) as { wallBook: Array<{ wallId: string; sessionId: string; snapshotId: string | null }> }).wallBook.find((w) => w.sessionId === sessionId && w.snapshotId), 30_000);

    const call = await handoffTool(t.sam, sessionId, t.a);
    const done = await call({ to: 'dana' });
    expect(done.isError, done.text).toBe(false);
    expect(done.text).toMatch(/^Handed off to Dana\. Dana picks it up in Claude Code with \/sled pickup [2-9a-km-np-z]{12} — the session resumes there\./);
    const id = /\/sled pickup ([2-9a-km-np-z]{12})/.exec(done.text)![1];
    expect((await handoffs(t.sam)).find((h) => h.id === id)).toMatchObject({ state: 'sent', wallId: wall.wallId });
    const after = (JSON.parse((await sleds(t.sam, ['status', '--json'])).stdout) as { wallBook: Array<{ wallId: string; choice: string | null; chosenBy: string | null }> }).wallBook.find((w) => w.wallId === wall.wallId);
    expect(after).toMatchObject({ choice: 'handoff', chosenBy: 'user' });
  });
});

describe('/sled pickup typed in Claude Code inside tmux', { timeout: 600_000 }, () => {
  it("resumes sam's session in a new tmux window beside dana's, in the worktree, and leaves her pane as it was", async () => {
    const claude = await ensureClaudeBinary();
    const t = await team({ CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' }, { binaries: { claude } });
    const sessionId = '7c3f2e5a-9d4b-4a1c-8e83-2f4a5b6c7d8e';
    const tx = join(t.sam.claudeDir, 'projects', t.a.replace(/[^A-Za-z0-9]/g, '-'), `${sessionId}.jsonl`);
    writeTranscript(tx, sessionId, t.a, 'rename the cart total');
    await prompt(t.sam, sessionId, t.a, 'rename the cart total', tx);
    writeFileSync(join(t.a, 'cart.ts'), 'export const sum = 1;\n');
    const id = /\/sled pickup ([2-9a-km-np-z]{12})/.exec((await prompt(t.sam, sessionId, t.a, '/sled handoff dana', tx)).reason ?? '')?.[1];
    await waitFor('the push', async () => (await handoffs(t.sam)).find((h) => h.id === id && h.state === 'sent'), 30_000);

    // Dana's own tmux server, with her Claude Code in its one pane (a long sleep stands in for it).
    const socket = join(t.root, 'tmux.sock');
    const tmux = (...args: string[]) => execFileSync('tmux', ['-S', socket, ...args], { encoding: 'utf8', env: t.dana.env }).trim();
    tmux('new-session', '-d', '-s', 'work', '-x', '120', '-y', '30', 'sleep 600');
    cleanups.push(() => execFileSync('tmux', ['-S', socket, 'kill-server'], { stdio: 'ignore' }));
    tmux('set-option', '-g', 'remain-on-exit', 'on'); // a window stays to be looked at, whatever claude does in it
    const pane = tmux('list-panes', '-t', 'work', '-F', '#{pane_id}');
    const pid = tmux('display-message', '-p', '#{pid}');
    const danaSession = 'd0d0d0d0-1111-4222-8333-444455556666';
    const r = await sleds(t.dana, ['hook', 'UserPromptSubmit'], JSON.stringify({ session_id: danaSession, prompt: `/sled pickup ${id}`, cwd: t.b, hook_event_name: 'UserPromptSubmit' }), { TMUX: `${socket},${pid},0`, TMUX_PANE: pane });
    const answer = JSON.parse(r.stdout) as HookOut;
    expect(answer.decision).toBe('block');
    expect(answer.reason).toMatch(new RegExp(`sam's session resumed in a new tmux window, sled-${id} \\(work:1\\), next to this one`));

    const windows = tmux('list-windows', '-t', 'work', '-F', '#{window_index}|#{window_name}|#{pane_current_path}|#{pane_start_command}').split('\n');
    expect(windows).toHaveLength(2);
    expect(windows[0]).toMatch(/^0\|[^|]*\|[^|]*\|"?sleep 600"?$/); // hers, first and unchanged
    const [index, name, cwd, command] = windows[1]!.split('|');
    expect([index, name]).toEqual(['1', `sled-${id}`]);
    const dir = (JSON.parse((await sleds(t.dana, ['handoffs', '--json'])).stdout).handoffs as Array<{ id: string; note: string }>).find((h) => h.id === id)!;
    expect(cwd).toBe(JSON.parse(dir.note).dir);
    expect(readFileSync(join(cwd!, 'cart.ts'), 'utf8')).toBe('export const sum = 1;\n');
    expect(command).toContain(claude);
    expect(command).toContain(`--resume=${sessionId}`);
    expect(tmux('display-message', '-p', '-t', pane, '#{pane_dead}')).toBe('0'); // dana's own pane was not touched
  });
});
