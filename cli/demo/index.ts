import { existsSync } from 'node:fs';
import { setTimeout as pause } from 'node:timers/promises';
import { HOOK_BUNDLE, STATUSLINE_BUNDLE } from './processes.js';
import { jsonSink, textSink, type Frame } from './frames.js';
import { Cleanup, makeHomes, removeRoot, type DemoHomes } from './homes.js';
import { makeProject } from './project.js';
import { tellStory } from './script.js';
import { fail } from '../fail.js';

/**
 * `sleds demo [--keep] [--json]`: the main job on an embedded default, with no seat, no key and no network — two
 * temporary homes (jake and dana), a real musher in each, jake's scripted session through the real hook and
 * statusline bundles, the wall, a hand-off and dana's pickup, printed frame by frame; then everything removed
 * (also on Ctrl-C and on failure). `--keep` leaves the homes and prints where they are.
 */
export async function runDemo(args: string[], json: boolean): Promise<number> {
  const unknown = args.filter((a) => a !== '--keep' && a !== '--json');
  if (unknown.length > 0) {
    return fail(`demo takes --keep and --json, not '${unknown[0]}'`, 2);
  }
  const keep = args.includes('--keep');
  // Colour for a terminal (or FORCE_COLOR), never in --json or with NO_COLOR set.
  const noColor = 'NO_COLOR' in process.env && process.env.NO_COLOR !== '';
  const color = !json && !noColor && (process.stdout.isTTY === true || (process.env.FORCE_COLOR ?? '') !== '');
  const write = (s: string): void => void process.stdout.write(s);
  const emit = json ? jsonSink(write) : textSink(write, color);
  const cleanup = new Cleanup();
  // The reader went away (`sleds demo | head`): stop the story, clean up, and end quietly.
  process.stdout.on('error', () => {
    void cleanup.run().finally(() => process.exit(0));
  });
  let homes: DemoHomes | null = null;
  let last: string | null = null;
  const track = (f: Frame): void => {
    last = f.step;
    emit(f);
  };
  try {
    for (const built of [HOOK_BUNDLE, STATUSLINE_BUNDLE]) {
      if (!existsSync(built)) throw new Error(`${built} is missing — run 'npm run build' in the sleds checkout first`);
    }
    homes = makeHomes(color);
    const root = homes.root;
    if (!keep) cleanup.add(() => removeRoot(root), () => removeRoot(root));
    const project = await makeProject(homes);
    await tellStory({ homes, project, cleanup, emit: track, color, now: () => Date.now(), pause: (ms) => pause(ms) });
    await cleanup.run();
    const gone = existsSync(root) ? `Stopped both mushers, but ${root} is still there: remove it with rm -rf ${root}` : `Stopped both mushers and removed ${root}.`;
    emit({ step: 'cleanup', title: keep ? 'Kept for a look' : 'Cleaned up', text: keep ? keptText(homes) : gone });
    return 0;
  } catch (e) {
    await cleanup.run();
    if (cleanup.interrupted) return 130;
    const where = last === null ? 'before the first frame' : `after the '${last}' frame`;
    const kept = keep && homes ? ` (the homes are kept in ${homes.root})` : ' (nothing was left behind)';
    return fail(`the demo stopped ${where}: ${(e as Error).message}${kept}`);
  }
}

function keptText(homes: DemoHomes): string {
  return [
    `Both mushers are stopped; the homes are in ${homes.root}:`,
    `  jake  ${homes.jake.home}   (his checkout: ${homes.jake.home}/shop)`,
    `  dana  ${homes.dana.home}   (her checkout and the picked-up worktree beside it)`,
    `  the team remote  ${homes.remote}`,
    `To look around as jake (his HOME too, so his musher reads his demo transcripts, not yours):`,
    `  export HOME=${homes.jake.home} SLEDS_HOME=${homes.jake.env.SLEDS_HOME} SLEDS_KEYRING=file`,
    `  sleds musher start; sleds status; sleds walls; sleds handoffs; sleds musher stop`,
    `Remove them with: rm -rf ${homes.root}`,
  ].join('\n');
}
