/**
 * Where a pickup installs a Claude Code transcript so that `claude --continue` in the worktree finds it: the project
 * folder the REAL claude makes for that cwd. Measured on the pinned binary for a short path and for one over 200
 * characters (cut, and given a hash of the whole path), against harnesses/claude-code/project-slug.
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeProjectSlug } from '../../harnesses/claude-code/project-slug.js';
import { runClaudePrint } from './harness/claude-env.js';
import { useE2eFixture } from './harness/fixture.js';

describe("the project folder of a cwd, as the real claude names it", { timeout: 120_000 }, () => {
  const fx = useE2eFixture({ claude: true });

  it.each([
    ['a short path with dots and dashes', 'my.shop-handoff-4zby9mder2cu'],
    ['a path over 200 characters', `${'deep.folder_'.repeat(18)}/shop-handoff-4zby9mder2cu`],
  ])('%s', async (_what, below) => {
    const fake = await fx.fakeAnthropic({ reply: 'ok' });
    const root = await fx.project();
    const cwd = join(root, below);
    mkdirSync(cwd, { recursive: true });
    const home = await fx.claudeHome({ mode: 'apiKey', fakeUrl: fake.url, cwd });
    const r = await runClaudePrint(fx.claudeBin, ['-p', 'hello'], { env: home.env, cwd, timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(join(home.claudeDir, 'projects'))).toEqual([claudeProjectSlug(cwd)]);
  });
});
