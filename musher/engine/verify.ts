import { spawn } from 'node:child_process';
import type { Clock } from '../clock.js';
import { asUser } from '../user-umask.js';
import { testCountOf } from './test-count.js';

/**
 * The repository's own checks (the policy's `verify:` test, types, lint, build), run in a node's worktree when its
 * agent says it is done, before any PR. Each is an argv (no shell), run one after the other, every one of them, so a
 * failure goes back to the agent with all that failed at once; each failure carries the tail of its log.
 */

export interface Check {
  name: string;
  argv: string[];
}

export interface CheckResult {
  name: string;
  ok: boolean;
  /** null when the check was killed (its time ran out) or could not be started. */
  exitCode: number | null;
  durationMs: number;
  logTail: string;
}

export interface Verification {
  ok: boolean;
  results: CheckResult[];
  /** One line for the PR body and the run: "test ✓ (340/340 tests) · types ✓". */
  summary: string;
}

export const CHECK_TIMEOUT_MS = 30 * 60_000;
/** How much of a log is kept: the end of it, where runners print what failed and the totals. */
export const LOG_TAIL_CHARS = 4000;
const KEEP_BYTES = 256 * 1024;

/** Shell syntax that would mean something else without a shell; such a command is refused, not run half-way. */
const SHELL_ONLY = /^(?:&&|\|\||\||;|>|>>|<|2>|2>&1|&)$|`|\$\(|\$\{?\w/;
/** `FOO=1 npm test`: an assignment only a shell understands, when it comes first. */
const ASSIGNMENT = /^[A-Za-z_]\w*=/;

/** A policy command line split into argv: whitespace separates, '…' and "…" quote; no shell is involved. */
export function splitCommand(line: string): string[] {
  const argv: string[] = [];
  let cur = '';
  let quote: '"' | "'" | null = null;
  let has = false;
  for (const ch of line) {
    if (quote) {
      if (ch === quote) quote = null;
      else cur += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      has = true;
    } else if (/\s/.test(ch)) {
      if (has || cur) argv.push(cur);
      cur = '';
      has = false;
    } else {
      cur += ch;
      has = true;
    }
  }
  if (quote) throw new Error(`the command ${JSON.stringify(line)} has an unclosed ${quote} — close it`);
  if (has || cur) argv.push(cur);
  return argv;
}

export function checksFromPolicy(verify: Record<string, string>): Check[] {
  const checks: Check[] = [];
  for (const [name, line] of Object.entries(verify)) {
    if (line.trim() === '') continue;
    const argv = splitCommand(line);
    const shelly = argv.find((a, i) => SHELL_ONLY.test(a) || (i === 0 && ASSIGNMENT.test(a)));
    if (shelly !== undefined) {
      throw new Error(`verify.${name} (${JSON.stringify(line)}) uses ${JSON.stringify(shelly)}, which needs a shell — sleds runs checks without one: put it in a package script and name that`);
    }
    checks.push({ name, argv });
  }
  return checks;
}

/** The last `LOG_TAIL_CHARS` of a log, cut at a line start when one is near. */
export function tailOf(log: string, max = LOG_TAIL_CHARS): string {
  const text = log.replace(/\s+$/, '');
  if (text.length <= max) return text;
  const cut = text.slice(text.length - max);
  const nl = cut.indexOf('\n');
  return nl >= 0 && nl < 200 ? cut.slice(nl + 1) : cut;
}

function runOne(worktree: string, check: Check, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ exitCode: number | null; log: string }> {
  return new Promise((done) => {
    const [cmd, ...args] = check.argv;
    if (!cmd) return done({ exitCode: null, log: `verify.${check.name} is empty` });
    let log = '';
    const keep = (c: Buffer): void => {
      log += c.toString('utf8');
      if (log.length > KEEP_BYTES) log = log.slice(log.length - KEEP_BYTES);
    };
    const child = asUser(() => spawn(cmd, args, { cwd: worktree, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true }));
    const timer = setTimeout(() => {
      // The whole group: a test runner's workers go too.
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The group is gone already (or was never made): the child itself, then.
        child.kill('SIGKILL');
      }
    }, timeoutMs);
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      done({ exitCode: null, log: e.code === 'ENOENT' ? `${cmd}: not found on PATH` : `${cmd}: ${e.message}` });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      done({ exitCode: signal ? null : code, log: signal ? `${log.replace(/\s+$/, '')}\n(killed after ${timeoutMs / 1000} s)` : log });
    });
  });
}

export async function runChecks(worktree: string, checks: Check[], env: NodeJS.ProcessEnv, clock: Clock, opts: { timeoutMs?: number } = {}): Promise<Verification> {
  const results: CheckResult[] = [];
  const parts: string[] = [];
  for (const check of checks) {
    const started = clock.now();
    const { exitCode, log } = await runOne(worktree, check, env, opts.timeoutMs ?? CHECK_TIMEOUT_MS);
    const ok = exitCode === 0;
    results.push({ name: check.name, ok, exitCode, durationMs: Math.max(0, clock.now() - started), logTail: tailOf(log) });
    const count = testCountOf(log);
    parts.push(`${check.name} ${ok ? '✓' : '✗'}${count ? ` (${count.passed}/${count.total} tests)` : ''}`);
  }
  return { ok: results.every((r) => r.ok), results, summary: parts.length > 0 ? parts.join(' · ') : 'no checks' };
}

/** What goes back to the agent after a failed verification (the pack's feedback text): each failed check, its exit and its log's tail. */
export function failureReport(v: Verification): string {
  const failed = v.results.filter((r) => !r.ok);
  if (failed.length === 0) return '';
  return [
    `Checks: ${v.summary}`,
    ...failed.map((r) => `\n### ${r.name} failed (${r.exitCode === null ? 'killed or not started' : `exit ${r.exitCode}`})\n\n\`\`\`\n${r.logTail}\n\`\`\``),
  ].join('\n');
}
