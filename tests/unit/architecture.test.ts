import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/** The rules of the house (ARCHITECTURE.md), enforced: a change that reaches across them fails here. */
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
        const allowed = to.startsWith('hooks/') || to.startsWith('statusline/') || zodFree.has(to);
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
        const allowed = to.startsWith('mcp-server/') || to.startsWith('core/') || to.startsWith('hooks/') || (typeOnly && to.startsWith('musher/'));
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

  it('harnesses/ is pure like core/: it imports only core/, harnesses/ and zod, never node builtins or other folders', () => {
    for (const file of sources('harnesses')) {
      for (const { spec } of importsOf(file)) {
        if (spec === 'zod') continue;
        expect(spec.startsWith('.'), `${file} imports ${spec}`).toBe(true);
        const to = target(file, spec);
        expect(to.startsWith('core/') || to.startsWith('harnesses/'), `${file} reaches out to ${spec}`).toBe(true);
      }
    }
  });

  it('outside harnesses/, a harness folder is reached through the registry; core/ never imports harnesses/', () => {
    // The port, the event vocabulary, the resume planner and the registry are the harness-neutral front door.
    const front = new Set(['harnesses/port.ts', 'harnesses/events.ts', 'harnesses/registry.ts', 'harnesses/resume-plan.ts']);
    // Files that still read a harness's own records directly, and why (each goes behind the UsageSource port of
    // issue 13 part 2, or behind an adapter method, when its owner moves):
    const direct = new Map<string, string[]>([
      // the transcript and rollout followers parse the full records (bars, forks, seat state), not the shared view
      ['musher/ingest/claude-transcripts.ts', ['harnesses/claude-code/transcript.ts']],
      ['musher/ingest/codex-rollouts.ts', ['harnesses/codex/rollout.ts']],
      // the snapshot packs a rollout's events with the rollout parser
      ['musher/snapshot/transcripts.ts', ['harnesses/codex/rollout.ts']],
      // the StopFailure hook (Claude Code's) hands over its limit sentence
      ['musher/app.ts', ['harnesses/claude-code/limit-text.ts']],
      // the composition root watches $CODEX_HOME/sessions
      ['musher/main.ts', ['harnesses/codex/rollout.ts']],
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
});
