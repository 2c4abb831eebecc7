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
});
