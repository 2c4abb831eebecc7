import { lstat, mkdir, rmdir, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { builtInHarness } from '../../harnesses/registry.js';
import { transcriptPathProblem } from '../../core/handoff/confine.js';
import { pathExists, writeFileAtomic } from '../fs-atomic.js';
import type { Log } from '../log.js';
import type { SnapshotContent } from './bundle-content.js';
import { confinedTarget, partialPath, writeConfinedNew } from './confined-write.js';
import { repoTopLevel } from './git-plumbing.js';
import { buildWipCommit, checkoutWip, ensureBase, pickupBranchName, pickupWorktreeDir, removePickupWorktree, wipFromGit } from './work-in-progress.js';
import { gitExec } from './git-exec.js';

/**
 * Installing a verified hand-off on the teammate's machine, as one journal: what it is about to make (the worktree,
 * its branch, the brief) is recorded before anything is made, and each file as it is written, so a pickup that
 * fails — or is killed at any step — is undone as a whole, by itself or at the next try or musher start. The steps,
 * in order: `opened` (verified and unpacked; nothing written yet), `base` (the base commit is in the repository),
 * `worktree` (the worktree holds the work), `transcript` (installed where the harness resumes it), `brief`,
 * `marked` (the one-pickup mark is on the remote), `recorded` (the pickup is complete on this machine).
 */
export type PickupStep = 'opened' | 'base' | 'worktree' | 'transcript' | 'brief' | 'marked' | 'recorded';

const JournalSchema = z.object({
  id: z.string().regex(/^[0-9a-z]{4,64}$/),
  top: z.string(),
  dir: z.string(),
  branch: z.string(),
  briefFile: z.string(),
  /** Files this pickup created (never one that was there before it). */
  wrote: z.array(z.string()),
  /** Files it is writing now: their partial temp files are removed on undo. */
  writing: z.array(z.string()).default([]),
  /** Folders it made for them, outermost first (removed on undo when empty). */
  madeDirs: z.array(z.string()).default([]),
});
export type PickupJournal = z.infer<typeof JournalSchema>;

export function parseJournal(note: string | null): PickupJournal | null {
  try {
    const r = JournalSchema.safeParse(JSON.parse(note ?? 'null'));
    return r.success ? r.data : null;
  } catch {
    // A note that is not JSON is no journal: there is nothing of a pickup to undo.
    return null;
  }
}

/** Undoes what a pickup's journal says it made: the files it wrote, the brief, the worktree and its branch. */
export async function undoPickup(j: PickupJournal | null, log: Log): Promise<void> {
  if (j === null) return;
  for (const path of [...j.wrote, ...j.writing.map(partialPath)]) {
    try {
      if ((await lstat(path)).isFile()) await unlink(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') log.warn(`pickup undo: could not remove ${path}: ${(e as Error).message}`);
    }
  }
  await unlink(j.briefFile).catch(() => undefined);
  for (const dir of [...j.madeDirs].reverse()) await rmdir(dir).catch(() => undefined);
  if (await pathExists(j.top)) await removePickupWorktree(j.top, j.id, j.dir);
}


export interface PickupInput {
  id: string;
  cwd: string;
  sender: string;
  content: SnapshotContent;
  /** The harness's home the transcript goes under (the Claude config dir, CODEX_HOME). */
  harnessHome: string;
  briefFile: string;
  scratchDir: string;
}

export interface PickupDeps {
  log: Log;
  step(s: PickupStep): Promise<void>;
  /** Records the journal before anything is made (the row in `picking`). */
  begin(j: PickupJournal): void;
  journal(j: PickupJournal): void;
  /** The pickup is complete on this machine (the row in `received`); false when the journal is gone. */
  finish(note: { dir: string; briefFile: string }): boolean;
  /** The one-pickup mark on the remote; throws when another got there first. */
  mark(): Promise<void>;
  /**
   * The file at `path` (its real path) is about to be installed with `bytes` of the sender's history: told before it
   * is written, so musher's reader never takes those bytes for this seat's own (a wall here, spend today).
   */
  history(h: { path: string; bytes: number }): void;
  /** Forgets the journal once it has been undone. */
  drop(): void;
}

/**
 * Checks every place the pickup will write, journals it, then installs it step by step; on any failure undoes
 * what it made and throws the failure's line. Returns the worktree and its branch.
 */
export async function installPickup(p: PickupInput, d: PickupDeps): Promise<{ dir: string; branch: string }> {
  const m = p.content.manifest;
  if (m.git === null) throw new Error(`hand-off ${p.id} was made outside a git repository, so it holds no work to check out — ask ${p.sender} to hand it off from the repository`);
  const top = await repoTopLevel(p.cwd);
  const dir = pickupWorktreeDir(top, p.id);
  const branch = pickupBranchName(p.id);
  // Every place is checked before the journal exists: an undo only ever removes what this pickup made.
  if (await pathExists(dir)) throw new Error(`${dir} exists already — move it away, then pick up again`);
  if ((await gitExec(['rev-parse', '--verify', '-q', `refs/heads/${branch}`], { cwd: top })).code === 0) {
    throw new Error(`branch ${branch} exists already in ${top} — delete it, then pick up again`);
  }
  const targets: Array<{ rel: string; path: string; bytes: Buffer }> = [];
  for (const t of m.transcript) {
    const bytes = p.content.blobs.get(t.hash)!;
    try {
      // Where the harness resumes it from in the worktree (Claude Code: the worktree's project folder).
      const rel = builtInHarness(m.harness).sessions.installedPath(t.path, dir);
      const problem = transcriptPathProblem(m.harness, { ...t, path: rel }, m.sessionId);
      if (problem !== null) throw new Error(problem);
      targets.push({ rel, path: await confinedTarget(p.harnessHome, rel), bytes });
    } catch (e) {
      throw new Error(`hand-off ${p.id} refused: ${(e as Error).message} — nothing was written`);
    }
  }
  const journal: PickupJournal = { id: p.id, top, dir, branch, briefFile: p.briefFile, wrote: [], writing: [], madeDirs: [] };
  d.begin(journal);
  try {
    if (m.git.head !== null) await ensureBase(top, m.git.head, p.content.history, p.sender, { scratchDir: p.scratchDir, historyNote: p.content.historyNote });
    await d.step('base');
    const wip = wipFromGit(m.git, (hash) => p.content.blobs.get(hash))!;
    const commit = await buildWipCommit(top, p.id, wip, p.scratchDir);
    await checkoutWip(top, p.id, commit, dir);
    await d.step('worktree');
    for (const t of targets) {
      journal.writing = [t.path];
      d.journal(journal);
      d.history({ path: t.path, bytes: t.bytes.length });
      const written = await writeConfinedNew(p.harnessHome, t.rel, t.bytes, (made) => {
        journal.madeDirs.push(made);
        d.journal(journal);
      });
      journal.writing = [];
      if (written.wrote) journal.wrote.push(written.path);
      d.journal(journal);
    }
    await d.step('transcript');
    await mkdir(dirname(p.briefFile), { recursive: true, mode: 0o700 });
    await writeFileAtomic(p.briefFile, Buffer.from(p.content.brief, 'utf8'));
    await d.step('brief');
    // The mark once the work is installed: a pickup whose mark fails (another has it, the remote is away) is undone.
    await d.mark();
    await d.step('marked');
    if (!d.finish({ dir, briefFile: p.briefFile })) throw new Error(`hand-off ${p.id}: its pickup was undone meanwhile — pick it up again`);
  } catch (e) {
    await undoPickup(journal, d.log).catch((u: Error) => d.log.error(`pickup ${p.id}: undo failed: ${u.message}`));
    d.drop();
    throw e;
  }
  await d.step('recorded');
  return { dir, branch };
}
