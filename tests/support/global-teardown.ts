import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * After the whole run: a musher of this checkout (compiled or from source) still running with its HOME in the temp folder was started by a
 * test (typically a harness hook that fired as a test's Claude Code exited, after the world was stopped). It is
 * stopped, and named, so a leak is seen rather than left behind on the machine. Linux only (/proc); elsewhere a no-op.
 */
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ENTRIES = [join('cli', 'main.js'), join('cli', 'main.ts')];

function leakedMushers(): Array<{ pid: number; home: string }> {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return [];
  }
  const tmp = resolve(tmpdir());
  const found: Array<{ pid: number; home: string }> = [];
  for (const p of pids) {
    try {
      const argv = readFileSync(join('/proc', p, 'cmdline'), 'utf8').split('\0');
      // The compiled CLI (a hook bundle's autostart) or the source entry under tsx (the CLI the tests run).
      const main = argv.findIndex((a) => ENTRIES.some((e) => a.endsWith(e)));
      if (main < 0 || argv[main + 1] !== 'musher' || argv[main + 2] !== 'run' || !resolve(argv[main]!).startsWith(REPO)) continue;
      const home = readFileSync(join('/proc', p, 'environ'), 'utf8').split('\0').find((e) => e.startsWith('HOME='))?.slice(5) ?? '';
      if (home && resolve(home).startsWith(`${tmp}/`)) found.push({ pid: Number(p), home });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

export default function setup(): () => void {
  return () => {
    const leaked = leakedMushers();
    for (const m of leaked) {
      try {
        process.kill(m.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    if (leaked.length > 0) process.stderr.write(`teardown: stopped ${leaked.length} musher(s) the tests left running: ${leaked.map((m) => `pid ${m.pid} (HOME ${m.home})`).join(', ')}\n`);
  };
}
