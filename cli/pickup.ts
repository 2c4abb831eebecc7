import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { askMusher, reportRefusal } from './musher-call.js';
import { findHarnessBinary } from '../musher/config/cli-settings.js';
import { resumeArgv } from '../harnesses/resume-plan.js';
import { sessionHarnesses, storedHarness } from '../harnesses/registry.js';
import { cdAndRun } from '../core/shell-quote.js';
import { seatHandle } from '../musher/handoff/keys.js';
import { runKeysTrust } from './keys-trust.js';
import { fail } from './fail.js';

/** A received hand-off as musher's API sends it. */
interface Received {
  id: string;
  peer: string;
  sessionId: string | null;
  harness: string | null;
  branch: string | null;
  note: string | null;
}

function flag(args: string[], name: string): string | null {
  const i = args.indexOf(name);
  return i >= 0 ? (args[i + 1] ?? null) : null;
}

/**
 * `sleds pickup <id> [--harness <binary>] [--headless] [--json]`: picks a teammate's hand-off up into a worktree of
 * the repository you are in, then starts the session there — resumed by id in the same harness, or in another one
 * (named by its binary) with the brief as its first prompt. `--headless` runs it without a terminal UI and prints the
 * result.
 */
export async function runPickup(args: string[], json: boolean): Promise<number> {
  const id = args.find((a, i) => !a.startsWith('-') && args[i - 1] !== '--harness');
  const headless = args.includes('--headless');
  if (!id) {
    return fail('which hand-off? e.g. sleds pickup jd7k2m9qa45p (the id is in the message you got)', 2);
  }
  const want = flag(args, '--harness');
  // --harness names a harness by its binary, as a person runs it.
  const wanted = want === null ? null : (sessionHarnesses().find((a) => a.binary.name === want) ?? null);
  if (want !== null && !wanted) {
    return fail(`--harness takes ${sessionHarnesses().map((a) => a.binary.name).join(' or ')}, not '${want}'`, 2);
  }
  // A pickup fetches from the remote and checks out a worktree: give it time.
  const ask = () => askMusher('pickup', { body: { id: id.toLowerCase(), cwd: process.cwd() } }, 120_000);
  let res = await ask();
  if (!res) return 1;
  // From a teammate whose keys this seat has not pinned: on a terminal, show their fingerprints, ask, and go on.
  if (!res.ok && res.status === 409 && res.body.kind === 'untrusted-sender' && typeof res.body.handle === 'string' && !json && process.stdin.isTTY) {
    process.stderr.write(`sleds: ${res.error}\n`);
    if ((await runKeysTrust('trust', [res.body.handle], false, seatHandle())) !== 0) return 1;
    res = await ask();
    if (!res) return 1;
  }
  if (!res.ok) return reportRefusal(res, json);
  if (!res.body.received) return reportRefusal({ ok: false, kind: 'refused', status: res.status, error: `musher answered HTTP ${res.status}`, body: res.body }, json);
  const r: Received = res.body.received;
  const note = JSON.parse(r.note ?? '{}') as { dir?: string; briefFile?: string };
  const again = res.body.again === true;
  if (json) {
    process.stdout.write(`${JSON.stringify({ ...r, dir: note.dir ?? null, again }, null, 2)}\n`);
    return 0;
  }
  // The harness it was handed off from: one sleds does not know is said, never taken for another.
  const sent = storedHarness(r.harness);
  if (!sent.ok) return fail(`hand-off ${r.id}: ${sent.error}`);
  if (again && note.dir && r.sessionId) {
    // Picked up before: nothing is installed or started again (a second harness on one transcript would interleave it).
    const resume = cdAndRun(note.dir, sent.adapter.resumeWords(r.sessionId));
    process.stderr.write(`sleds: you picked up ${r.id} from ${r.peer} before: the work is in ${note.dir} (branch ${r.branch ?? '?'}). To resume it: ${resume}\n`);
    return 0;
  }
  if (!note.dir || !r.sessionId) {
    return fail(`hand-off ${r.id} has no worktree on record`);
  }
  const from = sent.adapter;
  const to = wanted ?? from;
  process.stderr.write(`sleds: picked up ${r.id} from ${r.peer} into ${note.dir} (branch ${r.branch ?? '?'})\n`);
  let argv: string[];
  const file = findHarnessBinary(process.env, homedir(), to.binary.name).bin;
  const go = `Picked up from ${r.peer} with sleds: continue this work.`;
  if (to === from) {
    // The id came in a bundle from another machine: a session id (a UUID) glued to --resume= or after --, or nothing.
    try {
      argv = resumeArgv({ harness: sent.id, bin: to.binary.name, sessionId: r.sessionId, headless, structured: false, prompt: headless ? go : null }).slice(1);
    } catch (e) {
      return fail(`hand-off ${r.id}: ${(e as Error).message.replace(/^resume: /, '')}`);
    }
  } else {
    // The other harness cannot read this one's transcript: it starts afresh with the pack as its first prompt.
    const pack = note.briefFile ? readFileSync(note.briefFile, 'utf8') : '';
    const brief = `${r.peer} handed this work off to you with sleds, from ${from.displayName}. You are in a checkout holding their uncommitted changes. Read the brief below, then continue the work.\n\n${pack}`.trimEnd();
    if (!to.startWithPrompt) return fail(`${to.displayName} cannot be started with a brief — pick it up with --harness ${from.binary.name}`);
    argv = to.startWithPrompt(brief, headless);
  }
  if (!file) {
    const name = to.binary.name;
    const then = to === from ? `; then: ${cdAndRun(note.dir, [name, ...argv])}` : '';
    return fail(`no ${name} binary found — install it, or set SLEDS_${name.toUpperCase()}_BIN${then}`);
  }
  const bin = file;
  return new Promise((resolve) => {
    // Headless runs read no terminal: codex exec would wait for stdin to close.
    const child = spawn(bin, argv, { cwd: note.dir, stdio: headless ? ['ignore', 'inherit', 'inherit'] : 'inherit' });
    child.on('error', (e) => {
      process.stderr.write(`sleds: could not start ${bin}: ${e.message}\n`);
      resolve(1);
    });
    child.on('exit', (code) => resolve(code ?? 1));
  });
}
