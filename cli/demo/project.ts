import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DemoHomes, Seat } from './homes.js';
import { git, sledsJson } from './processes.js';

/**
 * The team's project: a bare repository as the remote, jake's clone with a roster naming both seats (dana owns the
 * TypeScript, so she is the one the card offers), and dana's clone. Each seat's hand-off keys come from the real
 * `sleds keys init`; dana pins jake's with `sleds keys trust`, as she would after comparing fingerprints with him.
 */
export interface DemoProject {
  /** jake's checkout, where his session runs. */
  jakeRepo: string;
  /** dana's checkout, where she picks the work up. */
  danaRepo: string;
  /** The file jake leaves half done. */
  changedFile: string;
}

const JAKE = { name: 'Jake', email: 'jake@example.invalid' };
const DANA = { name: 'Dana', email: 'dana@example.invalid' };

export async function makeProject(homes: DemoHomes): Promise<DemoProject> {
  const { jake, dana, remote } = homes;
  await git(homes.root, ['init', '-q', '--bare', remote], jake.env, JAKE);
  const jakeRepo = join(jake.home, 'shop');
  await git(jake.home, ['clone', '-q', remote, jakeRepo], jake.env, JAKE);
  writeFileSync(join(jakeRepo, 'cart.ts'), 'export function total(prices: number[]): number {\n  return prices.length;\n}\n');
  writeFileSync(join(jakeRepo, 'README.md'), '# shop\n');
  await git(jakeRepo, ['add', '.'], jake.env, JAKE);
  await git(jakeRepo, ['commit', '-q', '-m', 'cart: a first total'], jake.env, JAKE);

  const jakeEntry = await rosterEntry(jake);
  const danaEntry = await rosterEntry(dana);
  mkdirSync(join(jakeRepo, '.sleds'));
  const roster = { teammates: [{ ...jakeEntry, areas: ['docs/**'] }, { ...danaEntry, areas: ['*.ts'] }] };
  writeFileSync(join(jakeRepo, '.sleds', 'roster.yml'), `${JSON.stringify(roster, null, 2)}\n`);
  await git(jakeRepo, ['add', '.sleds'], jake.env, JAKE);
  await git(jakeRepo, ['commit', '-q', '-m', 'roster: jake and dana'], jake.env, JAKE);
  await git(jakeRepo, ['push', '-q', 'origin', 'HEAD:main'], jake.env, JAKE);

  const danaRepo = join(dana.home, 'shop');
  await git(dana.home, ['clone', '-q', remote, danaRepo], dana.env, DANA);
  await sledsJson(['keys', 'trust', 'jake', '--yes'], { env: dana.env, cwd: danaRepo });
  return { jakeRepo, danaRepo, changedFile: 'cart.ts' };
}

/** The seat's roster entry, as `sleds keys init` prints it to commit. */
async function rosterEntry(seat: Seat): Promise<Record<string, unknown>> {
  const out = await sledsJson<{ entry: Record<string, unknown> }>(['keys', 'init', '--name', seat.name], { env: seat.env });
  return out.entry;
}

/** Jake's half-done change: uncommitted when the wall comes. */
export function leaveWorkInProgress(project: DemoProject): void {
  writeFileSync(join(project.jakeRepo, project.changedFile), 'export function total(prices: number[]): number {\n  // half done: sum the prices, then the discounts\n  return prices.reduce((a, b) => a + b, 0);\n}\n');
}
