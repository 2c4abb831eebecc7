/**
 * The set-up every e2e file shares, in one call inside its `describe`: the pinned binaries installed before the
 * first test, and whatever a test makes — project folders, fake APIs, harness homes, tmux panes, sleds worlds —
 * undone after it, the last made first.
 *
 *   const fx = useE2eFixture({ claude: true });
 *   const { home, world } = await fx.claudeWithSleds({ mode: 'apiKey', fakeUrl: (await fx.fakeAnthropic()).url });
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll } from 'vitest';

import { stopMusher, worldIn, type SledsWorld } from '../../support/sleds-env.js';
import { writeSledsConfig, type TestSledsConfig } from '../../support/sleds-config.js';
import { ensureClaudeBinary } from './claude-binary.js';
import { makeClaudeHome, makeProjectDir, type ClaudeHome, type MakeClaudeHomeOptions } from './claude-env.js';
import { ensureCodexBinary } from './codex-binary.js';
import { makeCodexHome, makeCodexProjectDir, type CodexHome, type MakeCodexHomeOptions } from './codex-env.js';
import { startFakeAnthropic, type FakeAnthropic, type StartFakeAnthropicOptions } from './fake-anthropic.js';
import { startFakeOpenAI, type FakeOpenAI, type StartFakeOpenAIOptions } from './fake-openai.js';
import { startTmux, type TmuxSession } from './tmux.js';

export interface E2eFixtureOptions {
  /** Install (once per machine) and locate the pinned Claude Code before the file's first test. */
  claude?: boolean;
  /** The same for the pinned Codex CLI. */
  codex?: boolean;
  /** A cleanup that fails fails its test, instead of being passed over (the harness's self-tests check their own). */
  strictCleanup?: boolean;
}

export interface ClaudeWithSledsOptions extends Omit<MakeClaudeHomeOptions, 'cwd'> {
  /** The project claude runs in; a new empty one (removed after the test) when not given. */
  cwd?: string;
  /** Set in the home's environment after SLEDS_HOME. */
  sledsEnv?: Record<string, string>;
  /** Written to <SLEDS_HOME>/config/config.yml: musher's upstreams and binaries (it reads them from nowhere else). */
  sledsConfig?: TestSledsConfig;
}

export interface CodexWithSledsOptions extends Omit<MakeCodexHomeOptions, 'cwd'> {
  /** Set in the environment after the defaults (SLEDS_HOME, TZ=UTC). */
  sledsEnv?: Record<string, string>;
  /** Written to config.yml over the defaults (the pinned codex, no claude). */
  sledsConfig?: TestSledsConfig;
}

export interface E2eFixture {
  /** The pinned claude executable (with `claude: true`). */
  readonly claudeBin: string;
  /** The pinned codex executable (with `codex: true`). */
  readonly codexBin: string;
  /** Runs `fn` after the current test, before what was registered earlier. */
  later(fn: () => Promise<unknown>): void;
  /** A new empty project folder (realpath'd), removed after the test. */
  project(make?: () => Promise<string>): Promise<string>;
  /** The fake Anthropic API, closed after the test. */
  fakeAnthropic(opts?: StartFakeAnthropicOptions): Promise<FakeAnthropic>;
  /** The fake OpenAI Responses API, closed after the test. */
  fakeOpenAI(opts?: StartFakeOpenAIOptions): Promise<FakeOpenAI>;
  /** A throwaway Claude home, removed after the test. */
  claudeHome(opts: MakeClaudeHomeOptions): Promise<ClaudeHome>;
  /** A throwaway Codex home, removed after the test. */
  codexHome(opts: MakeCodexHomeOptions): Promise<CodexHome>;
  /** The pinned claude (with `args`) in a tmux pane in the home's project, killed after the test: ready once its empty input prompt is drawn. */
  claudeInTmux(home: { env: Record<string, string>; cwd: string }, args?: string[], readyTimeoutMs?: number): Promise<TmuxSession>;
  /**
   * A Claude home with sleds living in it (SLEDS_HOME = <home>/.sleds, in `home.env`, which the world shares); its
   * musher is stopped after the test. musher is not started: that is the test's to do.
   */
  claudeWithSleds(opts: ClaudeWithSledsOptions): Promise<{ home: ClaudeHome; world: SledsWorld }>;
  /**
   * A new project and a Codex home with sleds living in it (SLEDS_HOME = <home>/s and TZ=UTC in `env`, which the
   * world shares; the pinned codex and no claude in its config.yml); its musher is stopped after the test.
   */
  codexWithSleds(opts: CodexWithSledsOptions): Promise<{ home: CodexHome; env: Record<string, string>; world: SledsWorld }>;
}

/** Call it inside a `describe` (or at a file's top level): it registers that scope's beforeAll and afterEach. */
export function useE2eFixture(opts: E2eFixtureOptions): E2eFixture {
  const cleanups: Array<() => Promise<unknown>> = [];
  const later = (fn: () => Promise<unknown>) => void cleanups.push(fn);
  let claudeBin: string | undefined;
  let codexBin: string | undefined;

  beforeAll(async () => {
    [claudeBin, codexBin] = await Promise.all([opts.claude ? ensureClaudeBinary() : undefined, opts.codex ? ensureCodexBinary() : undefined]);
  }, 600_000);

  afterEach(async () => {
    for (const fn of cleanups.splice(0).reverse()) await (opts.strictCleanup ? fn() : fn().catch(() => undefined));
  });

  /** What `made` resolves to, undone by `undo` after the test. */
  const undoneAfter = async <T>(made: Promise<T>, undo: (t: T) => Promise<unknown>): Promise<T> => {
    const t = await made;
    later(() => undo(t));
    return t;
  };

  const installed = (bin: string | undefined, name: string): string => {
    if (bin === undefined) throw new Error(`no ${name} binary: ask useE2eFixture for it ({ ${name}: true })`);
    return bin;
  };

  const fx: E2eFixture = {
    get claudeBin() {
      return installed(claudeBin, 'claude');
    },
    get codexBin() {
      return installed(codexBin, 'codex');
    },
    later,
    project: (make = makeProjectDir) => undoneAfter(make(), (dir) => rm(dir, { recursive: true, force: true, maxRetries: 5 })),
    fakeAnthropic: (fakeOpts) => undoneAfter(startFakeAnthropic(fakeOpts), (fake) => fake.close()),
    fakeOpenAI: (fakeOpts) => undoneAfter(startFakeOpenAI(fakeOpts), (fake) => fake.close()),
    claudeHome: (homeOpts) => undoneAfter(makeClaudeHome(homeOpts), (home) => home.cleanup()),
    codexHome: (homeOpts) => undoneAfter(makeCodexHome(homeOpts), (home) => home.cleanup()),
    async claudeInTmux(home, args = [], readyTimeoutMs = 20_000) {
      const tmux = await undoneAfter(startTmux({ argv: [fx.claudeBin, ...args], env: home.env, cwd: home.cwd }), (t) => t.kill());
      await tmux.waitForScreen((screen) => /^❯\s*$/m.test(screen), readyTimeoutMs, 'the input prompt');
      return tmux;
    },
    async claudeWithSleds({ cwd, sledsEnv, sledsConfig, ...homeOpts }) {
      const home = await fx.claudeHome({ ...homeOpts, cwd: cwd ?? (await fx.project()) });
      Object.assign(home.env, { SLEDS_HOME: join(home.home, '.sleds'), ...sledsEnv });
      const world = worldIn(home.home, home.env);
      if (sledsConfig) writeSledsConfig(world, sledsConfig);
      later(() => stopMusher(world));
      return { home, world };
    },
    async codexWithSleds({ sledsEnv, sledsConfig, ...homeOpts }) {
      const home = await fx.codexHome({ ...homeOpts, cwd: await fx.project(makeCodexProjectDir) });
      const env = { ...home.env, SLEDS_HOME: join(home.home, 's'), TZ: 'UTC', ...sledsEnv };
      const world = worldIn(home.home, env);
      writeSledsConfig(world, { ...sledsConfig, binaries: { codex: fx.codexBin, claude: '/nonexistent/claude', ...sledsConfig?.binaries } });
      later(() => stopMusher(world));
      return { home, env, world };
    },
  };
  return fx;
}
