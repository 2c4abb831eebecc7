/**
 * Throwaway HOME + CODEX_HOME + clean environment for running the real Codex CLI against the fake OpenAI API
 * (fake-openai.ts), and a helper to run `codex exec …`.
 *
 * The config (shared/facts/codex-cli.md §0) uses a custom provider with `wire_api = "responses"`: plain
 * POST /v1/responses + SSE, the API key from an env var, no retries. The built-in `openai` provider would first try
 * Responses over WebSocket and needs `codex login`; ChatGPT auth needs a fake JWT and the /backend-api routes.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { cleanEnv, makeRealTempDir, runToEnd, type RunOptions, type RunResult } from './child.js';

/** The fake API key (sent as `authorization: Bearer …`). */
export const TEST_OPENAI_KEY = 'sk-test-codex-0123456789abcdefghijklmnopqrstuvwxyz';
/** The env var the fake provider reads its key from. */
export const FAKE_KEY_ENV = 'FAKE_OPENAI_KEY';
/**
 * The model name written to config.toml. Codex 0.169 has no metadata for it under a custom provider either
 * (stderr: "warning: Model metadata for `gpt-5.1-codex` not found"); harmless.
 */
export const TEST_MODEL = 'gpt-5.1-codex';

export interface MakeCodexHomeOptions {
  /** Base URL of the fake API including /v1 (FakeOpenAI.url). */
  fakeUrl: string;
  /** Project directory codex will run in; it is marked as trusted in config.toml. */
  cwd: string;
  /** Extra TOML appended to config.toml (tables only: it lands after the harness's own tables). */
  extraConfigToml?: string;
  /** `[features]` flags, over the default `{ plugins: false }`. */
  features?: Record<string, boolean>;
  /** Written to $CODEX_HOME/hooks.json when given. */
  hooks?: { hooks: Record<string, CodexHookGroup[]> };
  /** With `hooks`: also write the trust entries that make Codex run them (default true). */
  trustHooks?: boolean;
  /** Extra environment variables (applied last, so they can override). */
  extraEnv?: Record<string, string>;
}

export interface CodexHome {
  /** The temp HOME directory. */
  home: string;
  /** $CODEX_HOME (<home>/.codex). */
  codexHome: string;
  /** $CODEX_HOME/config.toml */
  configPath: string;
  /** $CODEX_HOME/hooks.json (may not exist) */
  hooksPath: string;
  /** $CODEX_HOME/sessions (the rollouts: sessions/YYYY/MM/DD/rollout-…-<thread>.jsonl) */
  sessionsDir: string;
  /** $TMPDIR of the codex process (<home>/tmp). */
  tmpDir: string;
  /** The realpath of the project dir, as written into config.toml. */
  cwd: string;
  /** Clean environment for the codex process. */
  env: Record<string, string>;
  /** Every rollout file under sessionsDir, sorted. */
  rollouts(): Promise<string[]>;
  /** Removes the temp HOME. */
  cleanup(): Promise<void>;
}

/** Prefixes of inherited variables that must never reach the codex under test. */
const SCRUBBED_PREFIXES = ['CODEX', 'OPENAI', 'SLEDS', 'CLAUDE', 'ANTHROPIC'];

/** The base environment (child.ts), never with any CODEX* / OPENAI* variable the test runner itself may have. */
export function cleanCodexBaseEnv(home: string): Record<string, string> {
  return cleanEnv(home, SCRUBBED_PREFIXES);
}

/** A TOML basic string. */
export function tomlString(s: string): string {
  return JSON.stringify(s); // JSON string escapes are valid TOML basic-string escapes for what we write
}

/** The config.toml the fake needs (no trailing tables the caller could accidentally extend). */
export function fakeProviderConfigToml(fakeUrl: string, cwd: string, features: Record<string, boolean> = {}): string {
  const flags = { plugins: false, ...features };
  return [
    `model = ${tomlString(TEST_MODEL)}`,
    'model_provider = "fake"',
    // exec never asks anyway; the TUI would otherwise ask before every shell command.
    'approval_policy = "never"',
    'sandbox_mode = "danger-full-access"',
    // No "update available" probe of the npm registry / GitHub.
    'check_for_update_on_startup = false',
    '',
    '[model_providers.fake]',
    'name = "fake"',
    `base_url = ${tomlString(fakeUrl)}`,
    `env_key = ${tomlString(FAKE_KEY_ENV)}`,
    'wire_api = "responses"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[feedback]',
    'enabled = false',
    '',
    // The plugin machinery syncs marketplaces at start-up: DNS look-ups of api.github.com and chatgpt.com
    // (seen with strace), which must not leave a test. Hooks in $CODEX_HOME/hooks.json do not need it.
    '[features]',
    ...Object.entries(flags).map(([k, v]) => `${k} = ${v ? 'true' : 'false'}`),
    '',
    `[projects.${tomlString(cwd)}]`,
    'trust_level = "trusted"',
    '',
  ].join('\n');
}

export async function makeCodexHome(opts: MakeCodexHomeOptions): Promise<CodexHome> {
  // Under the temp dir, Codex declines to make its PATH helper aliases and says so on stderr (harmless).
  const home = await realpath(await mkdtemp(path.join(os.tmpdir(), 'sleds-codex-home-')));
  const codexHome = path.join(home, '.codex');
  await mkdir(codexHome, { recursive: true });
  const tmpDir = path.join(home, 'tmp');
  await mkdir(tmpDir);
  const cwd = await realpath(opts.cwd);

  const configPath = path.join(codexHome, 'config.toml');
  const hooksPath = path.join(codexHome, 'hooks.json');
  let config = fakeProviderConfigToml(opts.fakeUrl, cwd, opts.features);
  if (opts.extraConfigToml) config += `\n${opts.extraConfigToml}\n`;
  if (opts.hooks) {
    await writeFile(hooksPath, `${JSON.stringify(opts.hooks, null, 2)}\n`);
    if (opts.trustHooks !== false) config += `\n${codexHookTrustToml(hooksPath, opts.hooks)}`;
  }
  await writeFile(configPath, config);

  const env: Record<string, string> = {
    ...cleanCodexBaseEnv(home),
    TMPDIR: tmpDir,
    CODEX_HOME: codexHome,
    [FAKE_KEY_ENV]: TEST_OPENAI_KEY,
    ...(opts.extraEnv ?? {}),
  };
  const sessionsDir = path.join(codexHome, 'sessions');

  return {
    home,
    codexHome,
    configPath,
    hooksPath,
    sessionsDir,
    tmpDir,
    cwd,
    env,
    rollouts: () => findRollouts(sessionsDir),
    cleanup: () => rm(home, { recursive: true, force: true, maxRetries: 5 }),
  };
}

/** Every `rollout-*.jsonl` under `dir` (recursively), sorted. */
export async function findRollouts(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile() && /^rollout-.*\.jsonl$/.test(e.name)) out.push(p);
    }
  };
  await walk(dir);
  return out.sort();
}

/** The JSON lines of a rollout file (a torn last line is skipped). */
export async function readRollout(file: string): Promise<any[]> {
  const text = await readFile(file, 'utf8');
  const out: any[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line));
    } catch {
      // a line still being written
    }
  }
  return out;
}

/** The `event_msg` / `token_count` payloads of a rollout, in order. */
export function tokenCounts(lines: any[]): any[] {
  return lines.filter((l) => l?.type === 'event_msg' && l.payload?.type === 'token_count').map((l) => l.payload);
}

// ---------------------------------------------------------------------------
// Hooks and their trust entry (shared/facts/codex-cli.md §1)

export interface CodexHookHandler {
  type: 'command';
  command: string;
  /** Seconds; Codex's default is 600 (used in the trust hash when absent). */
  timeout?: number;
  async?: boolean;
  statusMessage?: string;
}

export interface CodexHookGroup {
  matcher?: string;
  hooks: CodexHookHandler[];
}

/** "UserPromptSubmit" → "user_prompt_submit". */
export function eventSnake(event: string): string {
  return event.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/**
 * The timeout Codex runs a handler with, and hashes: the handler's own, else 600 s; SessionEnd and Interrupt are
 * special (default 1 s, capped at 3 s, with a "clamping … hook timeout to 3s" warning on every start when more is
 * asked). Measured with app-server hooks/list on 0.169.0.
 */
export function effectiveHookTimeout(event: string, timeout: number | undefined): number {
  if (event === 'SessionEnd' || event === 'Interrupt') return Math.min(timeout ?? 1, 3);
  return timeout ?? 600;
}

function sortedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${sortedJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * `sha256:<hex>` Codex stores as `trusted_hash` for ONE handler: sha256 of the compact, recursively key-sorted JSON
 * of {event_name, matcher?, hooks:[{type, command, timeout (effective: see above), async (default false),
 * statusMessage?}]}. (harnesses/codex/trust.ts has the product's copy; this one is written from the facts alone.)
 */
export function codexHookTrustHash(event: string, group: { matcher?: string }, handler: CodexHookHandler): string {
  const canonical = {
    event_name: eventSnake(event),
    ...(group.matcher !== undefined ? { matcher: group.matcher } : {}),
    hooks: [
      {
        type: handler.type,
        command: handler.command,
        timeout: effectiveHookTimeout(event, handler.timeout),
        async: handler.async ?? false,
        ...(handler.statusMessage !== undefined ? { statusMessage: handler.statusMessage } : {}),
      },
    ],
  };
  return `sha256:${createHash('sha256').update(sortedJson(canonical)).digest('hex')}`;
}

/**
 * The `[hooks.state."<hooks.json path>:<event_snake>:<group>:<handler>"] trusted_hash = …` tables that make Codex
 * run every handler of `hooks` (the content of a hooks.json at `hooksJsonPath`) without asking.
 */
export function codexHookTrustToml(hooksJsonPath: string, hooks: { hooks: Record<string, CodexHookGroup[]> }): string {
  const out: string[] = [];
  for (const [event, groups] of Object.entries(hooks.hooks)) {
    groups.forEach((g, gi) => {
      g.hooks.forEach((h, hi) => {
        out.push(`[hooks.state.${tomlString(`${hooksJsonPath}:${eventSnake(event)}:${gi}:${hi}`)}]`);
        out.push(`trusted_hash = ${tomlString(codexHookTrustHash(event, g, h))}`);
        out.push('');
      });
    });
  }
  return out.join('\n');
}

// ---------------------------------------------------------------------------
// Running codex exec

export type RunCodexOptions = RunOptions;
export type CodexRunResult = RunResult;

/**
 * Runs `<bin> <args…>` (typically `['exec', '--skip-git-repo-check', 'hello']`), collecting stdout and stderr.
 * Never rejects for a non-zero exit. A `.js` bin (the npm launcher) is run with this node.
 */
export function runCodexExec(bin: string, args: string[], opts: RunCodexOptions): Promise<CodexRunResult> {
  const [file, argv] = bin.endsWith('.js') ? [process.execPath, [bin, ...args]] : [bin, args];
  return runToEnd(file, argv, opts);
}

/** A fresh empty project directory (mkdtemp, realpath'd). */
export function makeCodexProjectDir(prefix = 'sleds-codex-proj-'): Promise<string> {
  return makeRealTempDir(prefix);
}

// ---------------------------------------------------------------------------
// Asking Codex itself which hooks it sees and trusts (app-server JSON-RPC over stdio; no model request)

export interface CodexListedHook {
  /** "<hooks.json path>:<event_snake>:<group>:<handler>" */
  key: string;
  /** camelCase, e.g. "userPromptSubmit" */
  eventName: string;
  command: string;
  timeoutSec: number;
  matcher: string | null;
  statusMessage: string | null;
  sourcePath: string;
  source: string;
  enabled: boolean;
  currentHash: string;
  trustStatus: 'managed' | 'untrusted' | 'trusted' | 'modified';
  [k: string]: unknown;
}

export interface CodexHooksList {
  cwd: string;
  hooks: CodexListedHook[];
  warnings: string[];
  errors: unknown[];
}

/**
 * Runs `codex app-server` (stdio), does the initialize handshake and returns `hooks/list` for `opts.cwd`: every
 * hook Codex found, with its trust key, hash and trustStatus. Kills the server afterwards.
 */
export async function codexHooksList(bin: string, opts: { env: Record<string, string>; cwd: string; timeoutMs?: number }): Promise<CodexHooksList> {
  const child = spawn(bin, ['app-server'], { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  let buf = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    buf += d;
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      let msg: any;
      try {
        msg = JSON.parse(line);
      } catch {
        continue;
      }
      const p = typeof msg.id === 'number' ? pending.get(msg.id) : undefined;
      if (!p) continue; // a notification
      pending.delete(msg.id);
      if (msg.error) p.reject(new Error(`codex app-server: ${JSON.stringify(msg.error)}`));
      else p.resolve(msg.result);
    }
  });
  const exited = new Promise<void>((resolveExit) => child.on('close', () => resolveExit()));
  child.on('close', () => {
    for (const p of pending.values()) p.reject(new Error(`codex app-server exited early: ${stderr.slice(-500)}`));
    pending.clear();
  });
  child.stdin.on('error', () => undefined);
  let nextId = 0;
  const call = (method: string, params: unknown) =>
    new Promise<any>((resolveCall, rejectCall) => {
      const id = ++nextId;
      pending.set(id, { resolve: resolveCall, reject: rejectCall });
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  const timeoutMs = opts.timeoutMs ?? 30_000;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, rejectTimeout) => {
    timer = setTimeout(() => rejectTimeout(new Error(`codex app-server hooks/list timed out after ${timeoutMs} ms: ${stderr.slice(-500)}`)), timeoutMs);
  });
  try {
    return await Promise.race([
      (async () => {
        await call('initialize', { clientInfo: { name: 'sleds-e2e', title: 'sleds e2e', version: '0' }, capabilities: { experimentalApi: true } });
        child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'initialized' })}\n`);
        const r = await call('hooks/list', {});
        const entry = (r?.data ?? [])[0] ?? { cwd: opts.cwd, hooks: [], warnings: [], errors: [] };
        return { cwd: entry.cwd, hooks: entry.hooks ?? [], warnings: entry.warnings ?? [], errors: entry.errors ?? [] } as CodexHooksList;
      })(),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
    child.kill('SIGKILL');
    await exited;
  }
}
