/**
 * The integration suite runs sleds from its sources (compiled afresh before the run, tests/support/source-build.ts),
 * so a stale dist/ cannot pass it: the CLI the tests run, the version it reports, the musher it starts in the
 * background (and the CLI that musher runs again for a restarted pane), all from the checkout's own .ts files as
 * they are now. Only what ships stays built: the hook and statusline bundles, and the CLI `sleds install` wires in.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, CLI_SOURCE, REPO_ROOT, SHIPPED_CLI, sleds, waitFor } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';

const world = useWorlds();
const version = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** A process's argv, from /proc (Linux, as the CI). */
function argvOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1);
}

describe('the integration suite runs sleds from source', () => {
  it("runs a build of the sources made for this run, and `sleds --version` reads this package's package.json", async () => {
    expect(CLI.at(-1)).toBe(CLI_SOURCE);
    expect(CLI_SOURCE.startsWith(join(REPO_ROOT, '.cache', 'src-build'))).toBe(true);
    expect(CLI_SOURCE).not.toBe(SHIPPED_CLI);
    const r = await sleds(world(), ['--version']);
    expect(r).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('the musher the source CLI starts runs the same build, never dist/', async () => {
    const w = world();
    const r = await sleds(w, ['musher', 'start', '--json']);
    expect(r.stderr).toBe('');
    const { pid } = JSON.parse(r.stdout) as { pid: number };
    const argv = await waitFor('the musher in /proc', () => {
      try {
        return argvOf(pid);
      } catch {
        return null;
      }
    });
    expect(argv.slice(1)).toEqual([...CLI, 'musher', 'run', '--background']);
    expect(argv).not.toContain(SHIPPED_CLI);
  });

  it('`sleds install` from source wires the shipped CLI (a harness runs it without a loader), not cli/main.ts', async () => {
    const w = world({ SLEDS_CLAUDE_BIN: '/nonexistent/claude', SLEDS_CODEX_BIN: '/nonexistent/codex' });
    const r = await sleds(w, ['install', '--json']);
    const pkg = (JSON.parse(r.stdout) as { steps: Array<{ id: string; detail?: { cliMain?: string } }> }).steps.find((s) => s.id === 'package');
    expect(pkg?.detail?.cliMain).toBe(realpathSync(SHIPPED_CLI));
    expect(pkg?.detail?.cliMain).not.toBe(CLI_SOURCE);
  });
});
