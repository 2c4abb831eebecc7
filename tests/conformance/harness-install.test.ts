/**
 * Every harness installer (harnesses/installers.ts) through the same table: it lives in harnesses/<id>/install.ts,
 * reports only through the sink it is given, one line a step and a fix on every failure, and on a machine where
 * its harness was never installed, doctor says so without throwing and uninstall writes nothing. A third,
 * minimal installer shows the shape is all cli/install.ts and cli/doctor.ts rely on.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolvePaths } from '../../core/paths.js';
import type { HarnessInstaller, InstallStep, ReportSink } from '../../harnesses/install-port.js';
import { HARNESS_INSTALLERS } from '../../harnesses/installers.js';

class RecordingSink implements ReportSink {
  readonly steps: InstallStep[] = [];
  add(step: InstallStep): InstallStep {
    this.steps.push(step);
    return step;
  }
  ok(id: string, message: string, detail?: Record<string, unknown>) {
    return this.add({ id, status: 'ok', message, ...(detail ? { detail } : {}) });
  }
  fail(id: string, message: string, fix: string, detail?: Record<string, unknown>) {
    return this.add({ id, status: 'fail', message, fix, ...(detail ? { detail } : {}) });
  }
  warn(id: string, message: string, fix?: string, detail?: Record<string, unknown>) {
    return this.add({ id, status: 'warn', message, ...(fix ? { fix } : {}), ...(detail ? { detail } : {}) });
  }
  info(id: string, message: string, detail?: Record<string, unknown>) {
    return this.add({ id, status: 'info', message, ...(detail ? { detail } : {}) });
  }
  get failed(): boolean {
    return this.steps.some((s) => s.status === 'fail');
  }
}

/** A third harness that is nothing but the shape: what a new folder's install.ts must at least be. */
const minimal: HarnessInstaller = {
  id: 'minimal-test-harness',
  packageFiles: () => ({ missing: [], error: null }),
  install: async (ctx) => {
    ctx.report.info('minimal', 'not found: not wired');
    return {};
  },
  uninstall: async () => ({}),
  doctor: async (ctx) => {
    ctx.report.info('minimal', 'not found: not wired');
  },
};

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A HOME, SLEDS_HOME and CODEX_HOME that hold nothing, and no harness binary to be found. */
function emptyMachine() {
  const root = mkdtempSync(join(tmpdir(), 'sl-inst-'));
  dirs.push(root);
  const home = join(root, 'h');
  mkdirSync(home);
  const env = {
    HOME: home,
    PATH: '/nonexistent',
    SLEDS_HOME: join(root, 's'),
    CODEX_HOME: join(root, 'cx'),
    SLEDS_CLAUDE_BIN: '/nonexistent/claude',
    SLEDS_CODEX_BIN: '/nonexistent/codex',
  };
  const tree = (): string[] => {
    const out: string[] = [];
    const walk = (d: string): void => {
      for (const n of readdirSync(d)) {
        const p = join(d, n);
        out.push(relative(root, p));
        if (statSync(p).isDirectory()) walk(p);
      }
    };
    walk(root);
    return out.sort();
  };
  return { root, home, env, paths: resolvePaths(env, home), tree };
}

const ROOT = join(import.meta.dirname, '..', '..');
const table = HARNESS_INSTALLERS.map((i) => [i.id, i] as const);

describe('harness installers', () => {
  it('the registry lists each harness once, Claude Code first (it begins install-state.json)', () => {
    const ids = HARNESS_INSTALLERS.map((i) => i.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids[0]).toBe('claude-code');
    expect(ids).toContain('codex');
  });

  it.each(table)('%s lives in harnesses/<id>/install.ts and exports itself from there', async (id, installer) => {
    const mod = (await import(/* @vite-ignore */ join(ROOT, 'harnesses', id, 'install.ts'))) as Record<string, unknown>;
    expect(Object.values(mod)).toContain(installer);
  });

  it.each(table)('%s: this package holds the files it loads', (_id, installer) => {
    expect(installer.packageFiles(ROOT).error).toBeNull();
  });

  it.each([...table, [minimal.id, minimal] as const])('%s: on a machine without it, doctor reports through the sink only, one line a step, a fix on each failure', async (_id, installer) => {
    const m = emptyMachine();
    const sink = new RecordingSink();
    const before = m.tree();
    await installer.doctor({ env: m.env, home: m.home, paths: m.paths, cliMain: join(ROOT, 'dist', 'cli', 'main.js'), report: sink, now: () => new Date(0), packageRoot: ROOT });
    expect(sink.steps.length).toBeGreaterThan(0);
    for (const s of sink.steps) {
      expect(['ok', 'fail', 'warn', 'info']).toContain(s.status);
      expect(s.message, s.id).not.toMatch(/\n/);
      if (s.status === 'fail') expect(s.fix, s.message).toMatch(/\S/);
    }
    expect(m.tree()).toEqual(before);
  });

  it.each([...table, [minimal.id, minimal] as const])('%s: uninstall where it was never installed fails nothing and writes nothing', async (_id, installer) => {
    const m = emptyMachine();
    const sink = new RecordingSink();
    const before = m.tree();
    await installer.uninstall({ env: m.env, home: m.home, paths: m.paths, cliMain: join(ROOT, 'dist', 'cli', 'main.js'), report: sink, now: () => new Date(0), packageRoot: ROOT, state: null });
    expect(sink.steps.filter((s) => s.status === 'fail')).toEqual([]);
    expect(m.tree()).toEqual(before);
  });
});
