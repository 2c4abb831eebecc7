import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/** The rules of the house (the house's shared/ARCHITECTURE.md), enforced: a change that reaches across them fails here. */
const ROOT = join(import.meta.dirname, '..', '..');

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(ROOT, dir))) {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) out.push(...sources(path));
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

interface Import {
  spec: string;
  typeOnly: boolean;
}

function importsOf(file: string): Import[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const found: Import[] = [];
  for (const m of text.matchAll(/^\s*(import|export)\s+(type\s+)?[^'"]*?from\s+'([^']+)'/gm)) found.push({ spec: m[3]!, typeOnly: Boolean(m[2]) });
  for (const m of text.matchAll(/import\(\s*'([^']+)'\s*\)/g)) found.push({ spec: m[1]!, typeOnly: false });
  return found;
}

function target(file: string, spec: string): string {
  return relative(ROOT, join(ROOT, file, '..', spec));
}

describe('architecture', () => {
  it('core/ is pure: it imports only core/ and zod, never node builtins or other folders', () => {
    for (const file of sources('core')) {
      for (const { spec } of importsOf(file)) {
        if (spec === 'zod') continue;
        expect(spec.startsWith('.'), `${file} imports ${spec}`).toBe(true);
        expect(target(file, spec).startsWith('core/'), `${file} reaches out to ${spec}`).toBe(true);
      }
    }
  });

  it('hooks/ and statusline/ load node builtins, each other, and core modules that need no packages', () => {
    const zodFree = new Set(sources('core').filter((f) => !importsOf(f).some((i) => i.spec === 'zod' && !i.typeOnly)));
    for (const file of [...sources('hooks'), ...sources('statusline')]) {
      for (const { spec, typeOnly } of importsOf(file)) {
        if (spec.startsWith('node:') || typeOnly) continue;
        expect(spec.startsWith('.'), `${file} loads the package ${spec}`).toBe(true);
        const to = target(file, spec).replace(/\.js$/, '.ts');
        // harnesses/hook-defaults.ts imports nothing: the default harness's id, which a hook needs before musher answers.
        const allowed = to.startsWith('hooks/') || to.startsWith('statusline/') || zodFree.has(to) || to === 'harnesses/hook-defaults.ts';
        expect(allowed, `${file} loads ${to}`).toBe(true);
      }
    }
  });

  it('mcp-server/ loads the MCP SDK, zod, node builtins, core/ and the hooks\' musher client: never the store, the watcher or ink', () => {
    for (const file of sources('mcp-server')) {
      for (const { spec, typeOnly } of importsOf(file)) {
        if (spec.startsWith('node:') || spec === 'zod' || spec.startsWith('@modelcontextprotocol/sdk/')) continue;
        expect(spec.startsWith('.'), `${file} loads the package ${spec}`).toBe(true);
        const to = target(file, spec).replace(/\.js$/, '.ts');
        const allowed = to.startsWith('mcp-server/') || to.startsWith('core/') || to.startsWith('protocol/') || to.startsWith('hooks/') || (typeOnly && to.startsWith('musher/'));
        expect(allowed, `${file} loads ${to}`).toBe(true);
      }
    }
  });

  it('sleds exec-env (the wrapper of a restarted pane) loads node builtins and package-free core modules only, and main.ts loads it lazily', () => {
    const zodFree = new Set(sources('core').filter((f) => !importsOf(f).some((i) => i.spec === 'zod' && !i.typeOnly)));
    for (const { spec, typeOnly } of importsOf('cli/exec-env.ts')) {
      if (spec.startsWith('node:') || typeOnly) continue;
      expect(zodFree.has(target('cli/exec-env.ts', spec).replace(/\.js$/, '.ts')), `cli/exec-env.ts loads ${spec}`).toBe(true);
    }
    const main = importsOf('cli/main.ts').filter((i) => !i.typeOnly && !i.spec.startsWith('node:'));
    const eager = readFileSync(join(ROOT, 'cli/main.ts'), 'utf8').match(/^import .* from '([^']+)'/gm) ?? [];
    expect(eager.filter((l) => !/from 'node:/.test(l))).toEqual([]);
    expect(main.map((i) => i.spec)).toContain('./exec-env.js');
  });

  it('only musher/ opens the store', () => {
    for (const dir of ['core', 'hooks', 'statusline', 'mcp-server', 'cli']) {
      for (const file of sources(dir)) {
        for (const { spec } of importsOf(file)) {
          expect(spec === 'better-sqlite3' || spec.includes('/store/'), `${file} imports ${spec}`).toBe(false);
        }
      }
    }
  });

  it('no shell: child processes are started with argument arrays', () => {
    for (const dir of ['core', 'hooks', 'statusline', 'mcp-server', 'musher', 'cli']) {
      for (const file of sources(dir)) {
        const text = readFileSync(join(ROOT, file), 'utf8');
        const importsExec = /import\s*\{[^}]*\bexec(Sync)?\b[^}]*\}\s*from\s*'node:child_process'/.test(text);
        expect(importsExec || /(?<![\w.])exec(Sync)?\(/.test(text), `${file} uses exec`).toBe(false);
        expect(/shell:\s*true/.test(text), `${file} uses shell: true`).toBe(false);
      }
    }
  });

  it('install, uninstall and doctor reach each harness through harnesses/installers.ts only: no harness folder imported from outside harnesses/, none from another, none importing cli/; no shell in harnesses/', () => {
    const harnessFolders = readdirSync(join(ROOT, 'harnesses')).filter((n) => statSync(join(ROOT, 'harnesses', n)).isDirectory());
    expect(harnessFolders).toEqual(expect.arrayContaining(['claude-code', 'codex']));
    const folderOf = (path: string): string | null => /^harnesses\/([^/]+)\//.exec(path)?.[1] ?? null;
    // (Who outside harnesses/ may reach which harness file is the rule "outside harnesses/, a harness folder is reached
    // through the registry" below.)
    for (const file of ['cli/install.ts', 'cli/doctor.ts']) {
      for (const { spec } of importsOf(file)) expect(/claude|codex/i.test(spec), `${file} imports ${spec}`).toBe(false);
    }
    for (const file of sources('harnesses')) {
      const own = folderOf(file);
      for (const { spec } of importsOf(file)) {
        if (!spec.startsWith('.')) continue;
        const to = target(file, spec);
        expect(to.startsWith('cli/'), `${file} imports ${spec}`).toBe(false);
        if (own) expect([own, null], `${file} imports ${spec}`).toContain(folderOf(to));
      }
      const text = readFileSync(join(ROOT, file), 'utf8');
      expect(/(?<![\w.])exec(Sync)?\(/.test(text) || /shell:\s*true/.test(text), `${file} uses a shell`).toBe(false);
    }
  });

  /** The folders the rules below read, those of the new house (harnesses/, protocol/) once they exist. */
  const isDir = (d: string): boolean => statSync(join(ROOT, d), { throwIfNoEntry: false })?.isDirectory() === true;

  it('money is formatted only through core/format.ts: no "$" glued to a number by hand', () => {
    const views = readdirSync(join(ROOT, 'cli'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.tsx')).map((f) => join('cli', f));
    for (const file of [...['core', 'hooks', 'statusline', 'mcp-server', 'musher', 'cli', 'harnesses', 'protocol'].filter(isDir).flatMap((d) => sources(d)), ...views]) {
      if (file === 'core/format.ts') continue;
      const text = readFileSync(join(ROOT, file), 'utf8');
      expect(/\$\$\{|['"`]\$['"`]\s*\+|toFixed\(2\)/.test(text), `${file} builds a money string by hand: use formatUsd & co. in core/format.ts`).toBe(false);
    }
  });

  it("comments cite the repository's own docs; the house's notes outside it are cited as shared/…", () => {
    // A harness's own instruction files are concepts, not documents of this repository.
    const concepts = new Set(['AGENTS.md', 'CLAUDE.md']);
    for (const file of ['core', 'hooks', 'statusline', 'mcp-server', 'musher', 'cli', 'harnesses', 'protocol', 'bench', 'tests'].filter(isDir).flatMap((d) => sources(d))) {
      const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
      for (const line of lines.filter((l) => /^\s*(\*|\/\/|\/\*)/.test(l))) {
        for (const m of line.matchAll(/(?<![\w/.:-])((?:[\w.-]+\/)+[\w.-]+\.md|[A-Z][A-Z_-]*\.md)\b/g)) {
          const cited = m[1]!;
          if (cited.startsWith('shared/') || concepts.has(cited)) continue;
          expect(statSync(join(ROOT, cited), { throwIfNoEntry: false }) !== undefined, `${file} cites ${cited}, which the repository does not have`).toBe(true);
        }
      }
    }
  });

  it('a catch that drops its error says why in a comment; the others log it, throw, or answer with it', () => {
    const views = readdirSync(join(ROOT, 'cli'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.tsx')).map((f) => join('cli', f));
    const surfaces = /\/\/|\/\*|\blog\w*\.(warn|error|info)\(|\bthrow\b|\bfail\(|\berror\b|\bwhy:|\bnotes:|\brefus|^\s*return `/;
    for (const file of [...['core', 'hooks', 'statusline', 'mcp-server', 'musher', 'cli', 'harnesses', 'protocol', 'bench', 'scripts'].filter(isDir).flatMap((d) => sources(d)), ...views]) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const m of text.matchAll(/\bcatch\s*(?:\(\s*_\w*\s*\))?\s*\{/g)) {
        // The block's body, up to its closing brace.
        let depth = 1;
        let end = m.index + m[0].length;
        for (; end < text.length && depth > 0; end++) depth += text[end] === '{' ? 1 : text[end] === '}' ? -1 : 0;
        const body = text.slice(m.index + m[0].length, end - 1);
        const line = text.slice(0, m.index).split('\n').length;
        expect(surfaces.test(body), `${file}:${line}: a catch drops its error without a word — log it, or say in a comment why it may`).toBe(true);
      }
    }
  });

  it('npm run test:unit is the fast loop: the pure tests in tests/unit, no build, nothing that needs dist/', () => {
    const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts['test:unit']).toBe('vitest run tests/unit');
    for (const file of sources('tests/unit')) {
      for (const { spec } of importsOf(file)) {
        const to = target(file, spec);
        expect(to.startsWith('dist/') || to === 'tests/support/sleds-env.js' || to.startsWith('tests/e2e/'), `${file} needs the build (${spec})`).toBe(false);
      }
    }
  });

  it("a store moves a row's state only by the conditional UPDATE … AND state = ?, and the life cycles' stores through lifecycle_events", () => {
    const offending: string[] = [];
    for (const file of sources('musher/store')) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const m of text.matchAll(/UPDATE\s+(\w+)\s+SET\s+([^`]*?)\s+WHERE\s+([^`]*)`/g)) {
        const [, table, sets, where] = m;
        if (/(^|[\s,])state\s*=/.test(sets!) && !/\bAND\s+state\s*(=|IN\b)/i.test(where!)) offending.push(`${file}: UPDATE ${table} SET ${sets} WHERE ${where}`);
      }
    }
    expect(offending, 'a state written without the state it leaves (SPEC.md: stores apply moves conditionally)').toEqual([]);
    for (const store of ['wall-book', 'tasks', 'handoffs', 'jobs']) {
      const text = readFileSync(join(ROOT, 'musher/store', `${store}.ts`), 'utf8');
      expect(/from '\.\/lifecycle-events\.js'/.test(text), `musher/store/${store}.ts moves its life cycle without lifecycle_events`).toBe(true);
      expect(/from '\.\.\/\.\.\/core\/lifecycle\//.test(text), `musher/store/${store}.ts moves its life cycle without its reducer`).toBe(true);
    }
  });

  it('cli/ and mcp-server/ reach musher only through protocol/; protocol/ is zod and core/, with node builtins in its client alone', () => {
    // What cli/ may import from musher/: code that runs in the CLI's own process on the seat's own files, never a
    // way to musher's socket. Each with its reason; anything else in cli/ asks musher through protocol/.
    const CLI_MAY_IMPORT_FROM_MUSHER: Record<string, string> = {
      'musher/main.ts': '`sleds musher run` is musher itself, started in this process',
      'musher/engine/main.ts': '`sleds engine` is the engine itself, its own process beside musher (its runs outlive it)',
      'musher/engine/run-files.ts': "the engine's run folders, read (never written) to find a node's window or stream (attach)",
      'musher/clock.ts': 'the system clock, for commands that decide locally (keys trust)',
      'musher/log.ts': 'the Log type and a stderr log for commands that read local files',
      'musher/package-root.ts': "the package's own folder (install, doctor)",
      'musher/find-binary.ts': 'finding a harness binary on PATH (install)',
      'musher/config/cli-settings.ts': "the binaries and URLs config.yml names (install, pick, pickup, github, slack)",
      'musher/config/handle.ts': "the seat's handle in config.yml (keys, doctor)",
      'musher/config/load.ts': 'reading config.yml to report on it (doctor)',
      'musher/ingest/spool-drain.ts': "the hook spool's folder of failed events (doctor)",
      'musher/quota/credentials.ts': "reading the harness's login to describe it (doctor, with musher away)",
      'musher/policy/repo-root.ts': "the repository a command runs in (estimate, keys trust)",
      'musher/policy/loader.ts': '`sleds policy check` reads and checks the policy file itself',
      'musher/roster/reader.ts': "the roster file, to verify receipts and pin teammates' keys",
      'musher/handoff/keys.ts': "the seat's signing keys (keys, receipts verify, pickup)",
      'musher/handoff/trust-store.ts': "the pinned teammates' keys (keys trust)",
      'musher/receipts/sign.ts': 'verifying a receipt offline (receipt verify)',
      'musher/secrets/store.ts': 'the 0600 secret store the key commands write (key, github, slack)',
      'musher/secrets/platform-keys.ts': "a secret's fingerprint and the platform-key names (key, github, slack)",
      'musher/github/client.ts': "GitHub's API URL for a host (github status)",
      'musher/github/token.ts': "where the GitHub token comes from (github status)",
      'musher/notify/slack.ts': "Slack's API URL and the bot token's name (slack status)",
    };
    const raw = ['hooks/musher-client.ts'];
    for (const file of [...sources('cli'), ...sources('mcp-server')]) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const { spec, typeOnly } of importsOf(file)) {
        // HTTP to the socket is protocol/client's job alone.
        expect(['node:http', 'node:https', 'node:net', 'http', 'net', 'undici'].includes(spec), `${file} imports ${spec}: ask musher through protocol/client`).toBe(false);
        if (!spec.startsWith('.')) continue;
        const to = target(file, spec).replace(/\.js$/, '.ts');
        expect(raw.includes(to), `${file} loads the hooks' raw client ${to}: ask musher through protocol/client`).toBe(false);
        if (!to.startsWith('musher/') || typeOnly) continue;
        expect(file.startsWith('cli/') && to in CLI_MAY_IMPORT_FROM_MUSHER, `${file} imports ${to}: reach musher through protocol/, or add it to the allow-list with a reason`).toBe(true);
      }
      expect(/socketPath\s*:/.test(text) && !/musherClient|musherApi/.test(text), `${file} opens musher's socket itself`).toBe(false);
    }
    for (const file of sources('protocol')) {
      for (const { spec } of importsOf(file)) {
        if (spec === 'zod') continue;
        if (spec.startsWith('node:')) {
          expect(file.startsWith('protocol/client/'), `${file} loads ${spec}: only protocol/client/ may use node builtins`).toBe(true);
          continue;
        }
        expect(spec.startsWith('.'), `${file} loads the package ${spec}`).toBe(true);
        const to = target(file, spec);
        expect(to.startsWith('protocol/') || to.startsWith('core/'), `${file} reaches out to ${to}`).toBe(true);
      }
    }
  });

  it('harnesses/ is pure like core/ but for its installers: the adapters import only core/, harnesses/ and zod, never node builtins, other folders or an installer', () => {
    // The installer side (install, uninstall, doctor: harnesses/installers.ts and what it loads) writes the user's
    // files; everything else in harnesses/ (ports, parsers, argv, dialects) is pure and tested with tables.
    const installerSide = (f: string): boolean => /\/(install[\w-]*|installers|settings|mcp-config|trust|config-toml|run-binary)\.ts$/.test(f);
    for (const file of sources('harnesses').filter((f) => !installerSide(f))) {
      for (const { spec } of importsOf(file)) {
        if (spec === 'zod') continue;
        expect(spec.startsWith('.'), `${file} imports ${spec}`).toBe(true);
        const to = target(file, spec);
        expect(to.startsWith('core/') || to.startsWith('harnesses/'), `${file} reaches out to ${spec}`).toBe(true);
        expect(installerSide(to.replace(/\.js$/, '.ts')), `${file} (an adapter) loads the installer ${to}`).toBe(false);
      }
    }
  });

  it("GitHub and Slack are reached through their vendors' clients (@octokit/rest, @slack/web-api), never a hand-written fetch", () => {
    const clients: Record<string, string> = { 'musher/github/client.ts': '@octokit/rest', 'musher/notify/slack.ts': '@slack/web-api' };
    for (const [file, pkg] of Object.entries(clients)) expect(importsOf(file).map((i) => i.spec), `${file} does not use ${pkg}`).toContain(pkg);
    for (const dir of ['musher/github', 'musher/tracker', 'musher/notify']) {
      for (const file of sources(dir)) {
        const text = readFileSync(join(ROOT, file), 'utf8');
        expect(/(?<![\w.])fetch(Impl)?\(|\.fetchImpl\(|from 'node:https?'|from 'undici'/.test(text), `${file} calls the network by hand`).toBe(false);
      }
    }
  });

  it("the gateway reaches the model APIs through undici's pool, never node:http(s) requests of its own", () => {
    expect(importsOf('musher/gateway/server.ts').map((i) => i.spec)).toContain('undici');
    for (const file of sources('musher/gateway')) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      expect(/\bhttps?\.request\(|\bhttps?\.Agent\(|from 'node:https'|(?<![\w.])fetch\(/.test(text), `${file} sends upstream by hand`).toBe(false);
    }
  });

  it('outside harnesses/, a harness folder is reached through the registry; core/ never imports harnesses/', () => {
    // The port, the event vocabulary, the resume planner and the registry are the harness-neutral front door.
    const front = new Set(['harnesses/port.ts', 'harnesses/events.ts', 'harnesses/registry.ts', 'harnesses/resume-plan.ts']);
    // install, uninstall and doctor loop over the installers; the state file and report sink are harness-neutral.
    for (const f of ['installers', 'install-port', 'install-state', 'install-files', 'run-binary']) front.add(`harnesses/${f}.ts`);
    // the default harness of a hook called without --harness (imports nothing, so hooks/ may load it)
    front.add('harnesses/hook-defaults.ts');
    // Files that still read a harness's own records directly, and why (each goes behind the UsageSource port of
    // issue 13 part 2, or behind an adapter method, when its owner moves):
    const direct = new Map<string, string[]>([
      // the transcript and rollout followers parse the full records (bars, forks, seat state), not the shared view
      ['musher/ingest/claude-transcripts.ts', ['harnesses/claude-code/transcript.ts']],
      // …which reads a chunk's lines, on the main thread or in a backlog's parse worker, with the same parser
      ['musher/ingest/transcript-lines.ts', ['harnesses/claude-code/transcript.ts']],
      ['musher/ingest/codex-rollouts.ts', ['harnesses/codex/rollout.ts']],
      // the snapshot packs a rollout's events with the rollout parser
      ['musher/snapshot/transcripts.ts', ['harnesses/codex/rollout.ts']],
      // the StopFailure hook (Claude Code's) hands over its limit sentence
      ['musher/app.ts', ['harnesses/claude-code/limit-text.ts']],
      // the composition root watches $CODEX_HOME/sessions
      ['musher/compose.ts', ['harnesses/codex/rollout.ts']],
    ]);
    for (const dir of ['core', 'hooks', 'statusline', 'mcp-server', 'musher', 'cli', 'bench']) {
      for (const file of sources(dir)) {
        for (const { spec } of importsOf(file)) {
          const to = target(file, spec).replace(/\.js$/, '.ts');
          if (!to.startsWith('harnesses/')) continue;
          expect(dir === 'core', `${file} (core/) imports ${to}`).toBe(false);
          expect(front.has(to) || (direct.get(file) ?? []).includes(to), `${file} reaches into ${to}: go through harnesses/registry.ts`).toBe(true);
        }
      }
    }
  });

  it('no import cycles anywhere in the product (type imports count: a circle of types is still a circle of modules)', () => {
    const dirs = ['core', 'hooks', 'statusline', 'mcp-server', 'musher', 'cli', 'harnesses', 'protocol', 'bench'].filter(isDir);
    const files = dirs.flatMap((d) => sources(d));
    const views = readdirSync(join(ROOT, 'cli'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.tsx')).map((f) => join('cli', f));
    const known = new Set([...files, ...views]);
    const resolveTs = (file: string, spec: string): string | null => {
      if (!spec.startsWith('.')) return null;
      const to = target(file, spec).replace(/\.js$/, '');
      return [`${to}.ts`, `${to}.tsx`, `${to}/index.ts`].find((c) => known.has(c)) ?? null;
    };
    const edges = new Map([...known].map((f) => [f, importsOf(f).map((i) => resolveTs(f, i.spec)).filter((t): t is string => t !== null)]));
    // Depth-first, colouring each module: meeting a module still on the path closes a circle.
    const state = new Map<string, 'open' | 'done'>();
    const cycles: string[] = [];
    const visit = (f: string, path: string[]): void => {
      state.set(f, 'open');
      for (const to of edges.get(f) ?? []) {
        if (state.get(to) === 'open') cycles.push([...path.slice(path.indexOf(to)), to].join(' → '));
        else if (!state.has(to)) visit(to, [...path, to]);
      }
      state.set(f, 'done');
    };
    for (const f of [...known].sort()) if (!state.has(f)) visit(f, [f]);
    expect(cycles, 'a circle of imports: pass a port instead (e.g. musher/walls/wall-host.ts)').toEqual([]);
  });

  it('musher/ never imports hooks/ or cli/: the clients depend on the daemon, never the other way round', () => {
    for (const file of sources('musher')) {
      for (const { spec } of importsOf(file)) {
        if (!spec.startsWith('.')) continue;
        const to = target(file, spec);
        expect(to.startsWith('hooks/') || to.startsWith('cli/'), `${file} imports ${to}: ask through protocol/ or move the code down`).toBe(false);
      }
    }
  });

  it('walls and exits answer with view models: an exit taken returns an ExitOutcome, no sentence is patched with .replace', () => {
    // The surfaces render WallCard and ExitOutcome (core/wall/view.ts, core/exits/outcome.ts); the prompt's words are
    // core/wall/card.ts and core/exits/outcome.ts, the terminal's cli/wall-view.ts, the MCP tools' mcp-server/exit-view.ts.
    for (const dir of ['musher/walls', 'musher/exits']) {
      for (const file of sources(dir)) {
        const text = readFileSync(join(ROOT, file), 'utf8');
        expect(/\.replace\(/.test(text), `${file} patches a sentence with .replace: render the view model instead`).toBe(false);
        // The wall keeper answers the prompt with its rendering; an exit itself answers with facts.
        if (dir === 'musher/exits') expect(/ok: true,\s*line:/.test(text), `${file} answers a taken exit with a sentence: return its ExitOutcome`).toBe(false);
      }
    }
    // musher takes the hand-off's words from exit 5's outcome, never by stripping the card's "5 Hand off to Dana." prefix.
    expect(readFileSync(join(ROOT, 'musher/app.ts'), 'utf8')).not.toMatch(/taken\.outcome \?\? taken\.line/);
  });

  it("usage sources are reached through musher/usage-sources/: nobody else imports a follower or the poller, and app.ts holds no statusline handling of its own", () => {
    // A source's internals: the JSONL followers (musher/ingest/) and the usage endpoint's poller (musher/quota/).
    const internals = new Set(['musher/ingest/claude-transcripts.ts', 'musher/ingest/codex-rollouts.ts', 'musher/ingest/file-follower.ts', 'musher/ingest/jsonl-source.ts', 'musher/ingest/transcript-lines.ts', 'musher/ingest/transcript-slice.ts', 'musher/ingest/transcript-worker.ts', 'musher/ingest/worker-pool.ts', 'musher/quota/usage-poller.ts']);
    // Inside a source's own folder the parts may use each other (the followers share the FileFollower and JsonlSource).
    const own = (file: string) => file.startsWith('musher/usage-sources/') || file.startsWith('musher/ingest/') || file === 'musher/quota/usage-poller.ts';
    for (const dir of ['musher', 'cli', 'mcp-server', 'protocol', 'hooks', 'statusline', 'bench']) {
      for (const file of sources(dir)) {
        if (own(file)) continue;
        for (const { spec } of importsOf(file)) {
          const to = target(file, spec).replace(/\.js$/, '.ts');
          expect(internals.has(to), `${file} imports ${to}: reach it through musher/usage-sources/`).toBe(false);
        }
      }
    }
    // The statusline's render and bookkeeping live in musher/usage-sources/statusline-feed.ts; app.ts only delegates.
    for (const { spec } of importsOf('musher/app.ts')) {
      const to = target('musher/app.ts', spec).replace(/\.js$/, '.ts');
      expect(/^core\/statusline-/.test(to), `musher/app.ts imports ${to}: the statusline feed renders`).toBe(false);
    }
  });

  it('musher is built in one composition root: only musher/compose.ts wires services, main.ts only composes and runs it', () => {
    // Services musher holds; wiring one into another object after it was built (`musher.gateway = …`) is compose.ts's job alone.
    const services = ['gateway', 'github', 'handoff', 'sources', 'wallKeeper', 'picker', 'receipts', 'estimates', 'tasks', 'questions', 'scheduler', 'resumeRunner', 'retention', 'forecaster', 'statuslineFeed'];
    const assigned = new RegExp(`\\b(?!this\\b)[A-Za-z_$][\\w$]*\\.(${services.join('|')})\\s*=(?!=)`);
    const added = /\b(?!this\b)[A-Za-z_$][\w$]*\.sources\.add\(/;
    const offending: string[] = [];
    for (const file of sources('musher')) {
      if (file === 'musher/compose.ts') continue;
      readFileSync(join(ROOT, file), 'utf8').split('\n').forEach((line, i) => {
        if (/^\s*(\/\/|\*)/.test(line)) return;
        if (assigned.test(line) || added.test(line)) offending.push(`${file}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(offending, 'a service wired after construction: build it in musher/compose.ts and pass it in').toEqual([]);
    // main.ts parses options, takes the lock, composes, starts and stops: it builds no service itself.
    const plumbing = new Set(['musher/compose.ts', 'musher/server.ts', 'musher/instance-lock.ts', 'musher/log.ts', 'musher/clock.ts', 'musher/user-umask.ts', 'core/paths.ts', 'protocol/client/client.ts']);
    for (const { spec, typeOnly } of importsOf('musher/main.ts')) {
      if (typeOnly || spec.startsWith('node:')) continue;
      const to = target('musher/main.ts', spec).replace(/\.js$/, '.ts');
      expect(plumbing.has(to), `musher/main.ts imports ${to}: build services in musher/compose.ts`).toBe(true);
    }
  });

  it("nothing outside harnesses/ names a harness: its ids, binary and display names come from the adapters through the registry", async () => {
    // The names are the registry's own, so a harness added to it is checked here the day it is added.
    const { default: ts } = await import('typescript');
    const { allHarnesses } = await import('../../harnesses/registry.js');
    const adapters = allHarnesses();
    const words = new Set(adapters.flatMap((a) => [a.id, a.binary.name]));
    const escape = (w: string) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const displayNames = new RegExp(`(?<![\\w-])(${adapters.map((a) => escape(a.displayName)).join('|')})(?![\\w-])`);
    const names = (text: string): boolean => words.has(text) || displayNames.test(text);
    // Files that still name one, and why; each entry leaves when its file is swept (the rule then says to drop it).
    const allowed = new Map<string, string>([
      // Words that are the harness's but are not a harness's name at all:
      ['core/usage-endpoint.ts', "a model's vendor word dropped from its display name ('Claude Opus 5' → opus): a model family, not the harness"],
      ['core/forecast/replay.ts', "recorded traces label each bar's provider 'claude'/'codex' (bench/ and tests/fixtures/ traces): a file format"],
      // Settings and stored formats keyed by a harness's binary or id: a new harness adds its key there.
      ['musher/config/schema.ts', "config.yml's binaries.<name> keys (claude, codex, tmux, …): the settings file's format"],
      ['musher/config/cli-settings.ts', 'SLEDS_<NAME>_BIN, the variables that override config.yml\'s binaries.<name>: the settings\' format'],
      ['cli/doctor.ts', "the install state file's plugin.method value 'claude' (installed through `claude plugin`): a stored format"],
      ['core/snapshot.ts', "the snapshot manifest's harness field, validated in core where a hostile bundle is parsed; TODO: check it against the registry in musher/handoff and widen it to an id"],
      // Sentences still written for one harness: TODO, each takes the adapter's displayName when its owner moves.
      ['core/handoff/confine.ts', "the shape each harness gives a hand-off's transcript paths (checked on a hostile bundle); TODO: an adapter method beside SessionFiles.installedPath"],
      ['core/status.ts', "the status card's 'Claude Code's next reply' and 'Codex credits' lines; TODO: the status snapshot carries the harness names"],
      ['core/forecast/forecast.ts', "the names of Codex's rate-limit bars (codex_primary, codex_secondary); TODO: the adapter names its windows"],
      ['core/sled-command.ts', 'the /sled help text says how Codex users type a verb; TODO: from the adapters\' sledCommand'],
      ['musher/quota/credentials.ts', "Claude Code's keychain entry and credentials file (the usage endpoint is Claude's); TODO: the usage endpoint source moves to harnesses/claude-code/"],
      ['mcp-server/tools.ts', 'the pickup tool names the session\'s harness; mcp-server may not load harnesses/: TODO: PickupReply carries the display name (server.ts is Part A\'s)'],
      ['cli/demo/script.ts', "the demo's story ('jake works in Claude Code'), shown as a recording of one"],
    ]);
    const dirs = ['core', 'hooks', 'statusline', 'mcp-server', 'musher', 'cli', 'protocol', 'bench', 'scripts'].filter(isDir);
    const views = readdirSync(join(ROOT, 'cli'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.tsx')).map((f) => join('cli', f));
    const naming = new Map<string, string[]>();
    for (const file of [...dirs.flatMap((d) => sources(d)), ...views]) {
      const tree = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (node: import('typescript').Node): void => {
        const isText = ts.isStringLiteralLike(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node) || ts.isJsxText(node);
        // A module specifier is a path ('./codex-rollouts.js'), not a name a person or a store reads.
        const isSpecifier = (): boolean => ts.isImportDeclaration(node.parent) || ts.isExportDeclaration(node.parent) || ts.isExternalModuleReference(node.parent) || (ts.isCallExpression(node.parent) && node.parent.expression.kind === ts.SyntaxKind.ImportKeyword) || (ts.isLiteralTypeNode(node.parent) && ts.isImportTypeNode(node.parent.parent));
        if (isText && !isSpecifier() && names((node as import('typescript').LiteralLikeNode).text)) {
          const line = tree.getLineAndCharacterOfPosition(node.getStart(tree)).line + 1;
          naming.set(file, [...(naming.get(file) ?? []), `${file}:${line} ${JSON.stringify((node as import('typescript').LiteralLikeNode).text.slice(0, 60))}`]);
        }
        ts.forEachChild(node, visit);
      };
      visit(tree);
    }
    const offenders = [...naming.entries()].filter(([file]) => !allowed.has(file)).flatMap(([, hits]) => hits);
    expect(offenders, 'a harness named outside harnesses/: take its id, binary or displayName from the adapter (harnesses/registry.ts)').toEqual([]);
    // Part A's files are being rewritten: they stay listed until the lead sweeps them after the merge.
    const swept = [...allowed.entries()].filter(([file, why]) => !why.startsWith('TODO(A)') && !naming.has(file)).map(([file]) => file);
    expect(swept, 'these files name no harness any more: drop them from the allow-list').toEqual([]);
  });

  it('the held-out forecast trace family is imported by the report alone, and core/ never reads bench/', () => {
    const importers: string[] = [];
    for (const dir of ['bench', 'core', 'musher', 'cli', 'tests']) {
      const walk = (d: string): void => {
        for (const name of readdirSync(join(ROOT, d))) {
          const rel = join(d, name);
          if (statSync(join(ROOT, rel)).isDirectory()) walk(rel);
          else if (rel.endsWith('.ts') && !rel.endsWith('architecture.test.ts') && /from '[^']*trace-held-out\.js'/.test(readFileSync(join(ROOT, rel), 'utf8'))) importers.push(rel);
        }
      };
      walk(dir);
    }
    expect(importers, 'only bench/forecast-families.ts may load the held-out family (tuning never sees it)').toEqual(['bench/forecast-families.ts']);
    for (const f of readdirSync(join(ROOT, 'core/forecast'))) expect(readFileSync(join(ROOT, 'core/forecast', f), 'utf8')).not.toMatch(/from '[^']*bench\//);
  });
});
