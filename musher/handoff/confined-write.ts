import { constants } from 'node:fs';
import { link, lstat, mkdir, open, readFile, realpath, unlink } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';

/**
 * Writing a file a hand-off asked for, confined to the folder it belongs under (the harness's home). The relative
 * path has been checked for its shape already (core/handoff/confine.ts); here it is resolved against the real
 * folder: the base is taken through realpath (a home that is itself a symlink is the user's own choice), and every
 * part below it must be a real directory — a symlinked parent, planted by anyone, would carry the write elsewhere.
 * Missing folders are made one by one (0700) and checked again after; the file is written to a temp name beside
 * its target (`partialPath`) and linked into place, which fails rather than replaces when something is there.
 */

/** The temp name a file is written under before it is linked into place: one per target, so a retry finds it. */
export function partialPath(target: string): string {
  return join(dirname(target), `.${basename(target)}.sleds-partial`);
}

export class ConfinedWriteError extends Error {}

/** The absolute target of `rel` under `base`, after checking nothing on the way is a symlink or outside `base`. */
export async function confinedTarget(base: string, rel: string): Promise<string> {
  if (isAbsolute(rel)) throw new ConfinedWriteError(`${JSON.stringify(rel)} is an absolute path`);
  const root = await realpath(base).catch(() => base);
  const target = join(root, rel);
  const back = relative(root, target);
  if (back === '' || back.startsWith('..') || isAbsolute(back)) throw new ConfinedWriteError(`${JSON.stringify(rel)} leaves ${base}`);
  const parts = back.split(sep);
  let at = root;
  for (const part of parts.slice(0, -1)) {
    at = join(at, part);
    const st = await lstat(at).catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? null : Promise.reject(e)));
    if (st === null) break; // the rest is made by writeConfined, each checked as it is
    if (st.isSymbolicLink()) throw new ConfinedWriteError(`${at} is a symlink: ${JSON.stringify(rel)} would be written through it`);
    if (!st.isDirectory()) throw new ConfinedWriteError(`${at} is not a folder`);
  }
  return target;
}

/**
 * Writes `bytes` as the new file `rel` under `base` (0600); each folder it makes is told to `onMadeDir` first. 'same': the file was there with these very bytes (a
 * pickup tried before); a file with other bytes is an error, never overwritten. Returns the path when written.
 */
export async function writeConfinedNew(base: string, rel: string, bytes: Buffer, onMadeDir: (dir: string) => void = () => undefined): Promise<{ path: string; wrote: boolean }> {
  const target = await confinedTarget(base, rel);
  const root = await realpath(base).catch(() => base);
  await mkdir(root, { recursive: true, mode: 0o700 });
  let at = root;
  for (const part of relative(root, target).split(sep).slice(0, -1)) {
    at = join(at, part);
    try {
      // Told before it is made: a kill between the two leaves a name to remove, never a folder no one knows of.
      if ((await lstat(at).catch(() => null)) === null) onMadeDir(at);
      await mkdir(at, { mode: 0o700 });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const st = await lstat(at);
    if (st.isSymbolicLink() || !st.isDirectory()) throw new ConfinedWriteError(`${at} is not a plain folder: ${JSON.stringify(rel)} would be written through it`);
  }
  const existing = await lstat(target).catch(() => null);
  if (existing !== null) {
    if (existing.isFile() && (await readFile(target)).equals(bytes)) return { path: target, wrote: false };
    throw new ConfinedWriteError(`${target} is there already with other content — move it away, then pick up again`);
  }
  const temp = partialPath(target);
  // What a pickup killed mid-write left (only a plain file of this name is ours to remove).
  if ((await lstat(temp).catch(() => null))?.isFile()) await unlink(temp);
  const fh = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    await fh.writeFile(bytes);
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await link(temp, target);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw new ConfinedWriteError(`${target} appeared while it was being written — pick up again`);
    throw e;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
  return { path: target, wrote: true };
}
