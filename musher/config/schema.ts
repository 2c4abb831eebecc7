import { isAbsolute } from 'node:path';
import { z } from 'zod';
import type { IssuePath } from '../../core/policy/schema.js';
import type { BinarySetting } from '../find-binary.js';

/**
 * The user's own settings for musher, `<config dir>/config.yml`: where musher sends requests (the upstreams) and
 * which programs it runs (the binaries), and how long it keeps raw events. musher is auto-started by whichever
 * harness session runs a hook first, so none of this may come from that session's environment: a hostile
 * repository's session could otherwise point the gateway (and the platform key) at its own "upstream", or make
 * musher run a program of its choosing. Pure: parsing and defaults only; musher/config/load.ts reads the file.
 *
 *   upstreams:
 *     anthropic: https://api.anthropic.com     # the gateway's upstream for Claude (the platform key goes there)
 *     openai: https://api.openai.com           # the gateway's upstream for Codex
 *     claudeUsage: https://api.anthropic.com   # Claude's usage endpoint (the poller)
 *     slack: https://slack.com/api/            # hand-off notices
 *     github: https://api.github.com           # receipts in PR bodies, the PR watcher, tracker intake
 *   binaries:                                  # absolute paths; when unset, PATH then the usual places
 *     claude: /usr/local/bin/claude
 *     codex: …   tmux: …   gh: …   osascript: …   notifySend: …
 *   retention:
 *     rawEventsDays: 30                        # hook events older than this are pruned (on start, then daily)
 *   handle: dana                               # this seat's roster handle (sleds keys init --handle dana)
 *   gateway:                                   # the half-price tier's Message Batches (a batch-tier token's requests)
 *     batchPollMs: 5000                        # the first poll of a batch; then ×1.5 up to batchMaxPollMs (30000)
 *     batchKeepaliveMs: 15000                  # how often a client waiting on a batch gets a keepalive
 *   engine:
 *     runner: headless                         # how `sleds engine` runs a node: headless (default), tmux (a window
 *                                              # per node: sleds attach <node>), or terminal (the command below)
 *     terminal:
 *       command: [gnome-terminal, "--", "{run}"]   # "{run}" becomes the node's wrapper command (else it is appended)
 *
 * `handle:` is not part of SledsConfig: it is read on its own, whenever it is needed (musher/config/handle.ts), so a
 * new handle needs no restart and a mistake elsewhere in the file does not change who this seat is.
 */

export const UPSTREAM_NAMES = ['anthropic', 'openai', 'claudeUsage', 'slack', 'github'] as const;
export type UpstreamName = (typeof UPSTREAM_NAMES)[number];

export const BINARY_NAMES = ['claude', 'codex', 'tmux', 'gh', 'osascript', 'notifySend'] as const;
export type BinaryName = (typeof BINARY_NAMES)[number];

export const DEFAULT_UPSTREAMS: Readonly<Record<UpstreamName, string>> = {
  anthropic: 'https://api.anthropic.com',
  openai: 'https://api.openai.com',
  claudeUsage: 'https://api.anthropic.com',
  slack: 'https://slack.com/api/',
  github: 'https://api.github.com',
};

export const DEFAULT_RAW_EVENTS_DAYS = 30;

/** How the engine runs a node's harness; the run's state comes from its event stream whichever it is. */
export const RUNNER_KINDS = ['headless', 'tmux', 'terminal'] as const;
export type RunnerKind = (typeof RUNNER_KINDS)[number];
/** The element of `engine.terminal.command` that the node's wrapper command replaces. */
export const RUN_PLACEHOLDER = '{run}';

export interface EngineSettings {
  runner: RunnerKind;
  /** The terminal runner's command template (program first); null unless config.yml gives one. */
  terminal: { command: string[] } | null;
}

/** The batch route's pace (musher/gateway/batch-route.ts); null where config.yml leaves the default. */
export interface GatewaySettings {
  batchPollMs: number | null;
  batchMaxPollMs: number | null;
  batchKeepaliveMs: number | null;
}

export interface SledsConfig {
  upstreams: Record<UpstreamName, string>;
  /** An absolute path the user chose, or null: look on PATH, then the usual places. */
  binaries: Record<BinaryName, string | null>;
  retention: { rawEventsDays: number };
  engine: EngineSettings;
  gateway: GatewaySettings;
}

export const DEFAULT_CONFIG: SledsConfig = {
  upstreams: { ...DEFAULT_UPSTREAMS },
  binaries: { claude: null, codex: null, tmux: null, gh: null, osascript: null, notifySend: null },
  retention: { rawEventsDays: DEFAULT_RAW_EVENTS_DAYS },
  engine: { runner: 'headless', terminal: null },
  gateway: { batchPollMs: null, batchMaxPollMs: null, batchKeepaliveMs: null },
};

const HttpUrl = z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' });
const AbsolutePath = z.string({ error: 'must be an absolute path' }).refine((p) => isAbsolute(p), 'must be an absolute path (musher runs it without a shell or PATH)');

const Upstreams = z.object(Object.fromEntries(UPSTREAM_NAMES.map((n) => [n, HttpUrl.optional()])) as Record<UpstreamName, z.ZodOptional<typeof HttpUrl>>);
const Binaries = z.object(Object.fromEntries(BINARY_NAMES.map((n) => [n, AbsolutePath.optional()])) as Record<BinaryName, z.ZodOptional<typeof AbsolutePath>>);
const Retention = z.object({
  rawEventsDays: z.number({ error: 'must be a whole number of days' }).int('must be a whole number of days').min(1, 'must be at least 1 day').max(3650, 'must be at most 3650 days').optional(),
});

const TerminalCommand = z
  .array(z.string({ error: 'must be a list of strings: the program, then its arguments' }).min(1, 'an empty argument'), { error: 'must be a list of strings: the program, then its arguments' })
  .min(1, 'must name the terminal program')
  .refine((a) => a[0] !== RUN_PLACEHOLDER, `must start with the terminal program, not ${RUN_PLACEHOLDER}`)
  .refine((a) => a.filter((x) => x === RUN_PLACEHOLDER).length <= 1, `may hold ${RUN_PLACEHOLDER} once`);
const Engine = z
  .object({
    runner: z.enum(RUNNER_KINDS, { error: `must be one of ${RUNNER_KINDS.join(', ')}` }).optional(),
    terminal: z.object({ command: TerminalCommand }, { error: 'must be a mapping with command: [program, args…]' }).nullish(),
  })
  .superRefine((e, ctx) => {
    if (e.runner === 'terminal' && !e.terminal) ctx.addIssue({ code: 'custom', path: ['terminal'], message: `runner: terminal needs terminal: { command: [program, …, "${RUN_PLACEHOLDER}"] }` });
  });

const Millis = z.number({ error: 'must be a whole number of milliseconds' }).int('must be a whole number of milliseconds').min(1, 'must be at least 1 ms').max(3_600_000, 'must be at most an hour');
const Gateway = z.object({ batchPollMs: Millis.optional(), batchMaxPollMs: Millis.optional(), batchKeepaliveMs: Millis.optional() });

/** The file as written: every section and key optional; unknown keys are dropped (and reported as warnings). */
export const ConfigFile = z.object({
  upstreams: Upstreams.nullish(),
  binaries: Binaries.nullish(),
  retention: Retention.nullish(),
  engine: Engine.nullish(),
  gateway: Gateway.nullish(),
  /** Checked by musher/config/handle.ts (its own line in doctor), so a bad one costs the rest of the file nothing. */
  handle: z.unknown().optional(),
});

const KNOWN: Record<string, readonly string[]> = {
  upstreams: UPSTREAM_NAMES,
  binaries: BINARY_NAMES,
  retention: ['rawEventsDays'],
  handle: [],
  engine: ['runner', 'terminal'],
  gateway: ['batchPollMs', 'batchMaxPollMs', 'batchKeepaliveMs'],
};

export interface ConfigIssue {
  path: IssuePath;
  message: string;
}

export interface ResolvedConfig {
  /** The file's settings over the defaults; the defaults alone when there is any error. */
  config: SledsConfig;
  errors: ConfigIssue[];
  /** Unknown keys: ignored, but said (a typo such as `antropic` would otherwise pass unseen). */
  warnings: ConfigIssue[];
}

function unknownKeys(data: Record<string, unknown>): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const [key, value] of Object.entries(data)) {
    const known = KNOWN[key];
    if (!known) {
      out.push({ path: [key], message: `unknown key (ignored); known: ${Object.keys(KNOWN).join(', ')}` });
      continue;
    }
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      for (const sub of Object.keys(value)) {
        if (!known.includes(sub)) out.push({ path: [key, sub], message: `unknown key (ignored); known: ${known.join(', ')}` });
      }
    }
  }
  return out;
}

/** The settings a parsed config.yml gives (`{}` for an empty file). */
export function resolveConfig(data: unknown): ResolvedConfig {
  if (data === null || data === undefined) return { config: DEFAULT_CONFIG, errors: [], warnings: [] };
  if (typeof data !== 'object' || Array.isArray(data)) return { config: DEFAULT_CONFIG, errors: [{ path: [], message: 'must be a mapping (upstreams:, binaries:, retention:, engine:, gateway:)' }], warnings: [] };
  const parsed = ConfigFile.safeParse(data);
  if (!parsed.success) {
    return { config: DEFAULT_CONFIG, errors: parsed.error.issues.map((i) => ({ path: i.path as IssuePath, message: i.message })), warnings: [] };
  }
  const f = parsed.data;
  const config: SledsConfig = {
    upstreams: { ...DEFAULT_UPSTREAMS },
    binaries: { ...DEFAULT_CONFIG.binaries },
    retention: { rawEventsDays: f.retention?.rawEventsDays ?? DEFAULT_RAW_EVENTS_DAYS },
    engine: { runner: f.engine?.runner ?? 'headless', terminal: f.engine?.terminal ? { command: f.engine.terminal.command } : null },
    gateway: { batchPollMs: f.gateway?.batchPollMs ?? null, batchMaxPollMs: f.gateway?.batchMaxPollMs ?? null, batchKeepaliveMs: f.gateway?.batchKeepaliveMs ?? null },
  };
  for (const n of UPSTREAM_NAMES) config.upstreams[n] = f.upstreams?.[n] ?? DEFAULT_UPSTREAMS[n];
  for (const n of BINARY_NAMES) config.binaries[n] = f.binaries?.[n] ?? null;
  return { config, errors: [], warnings: unknownKeys(data as Record<string, unknown>) };
}

/** A binary as musher takes it: config.yml's path (named so in messages), or null to look on PATH. */
export function configuredBinary(binaries: Record<BinaryName, string | null>, name: BinaryName): BinarySetting | null {
  const path = binaries[name];
  return path ? { path, source: `config.yml binaries.${name}` } : null;
}
