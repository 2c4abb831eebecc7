import { lstat, readFile, readlink, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { SnapshotCut, SnapshotGit } from '../../core/snapshot.js';
import { gitText, runGit } from './run-git.js';
import { globToRegExp } from '../../core/roster.js';
import { formatMegabytes as mb } from '../../core/format.js';

/** The default cap on what the git state keeps: the patch and the untracked files together. */
export const DEFAULT_GIT_MAX_BYTES = 20 * 1024 * 1024;

/** A blob the git state wants kept: its bytes, to be written by the caller. */
export interface PendingBlob {
  hash: string;
  bytes: Buffer;
}

export interface GitCapture {
  git: SnapshotGit | null;
  blobs: PendingBlob[];
  notes: string[];
}

/**
 * Untracked files that look like secrets are not copied even when git does not ignore them: the snapshot may travel
 * to a teammate, and a key in it would travel too. By name: `.env*`, `.netrc`, `.npmrc`, `.pypirc`, `id_*`,
 * `credentials*`, `*.pem`, `*.key`, `*.p12`, `*.pfx`, `*.keystore`, `*.jks`, `*.tfvars` (and `.tfvars.json`) —
 * unless the policy lists them (`handoff.allow_untracked`, globs as .gitignore writes them).
 */
const SECRET_NAME = /^(?:\.env.*|\.netrc|\.npmrc|\.pypirc|id_.*|credentials.*|.*\.(?:pem|key|p12|pfx|keystore|jks|tfvars|tfvars\.json))$/i;

export function looksLikeSecret(path: string, allowed: readonly string[] = []): boolean {
  const base = path.split('/').pop() ?? path;
  return SECRET_NAME.test(base) && !allowed.some((glob) => globToRegExp(glob).test(path));
}

/** A remote's URL without credentials: http(s) loses any user info (tokens go there), others lose a password. */
export function redactRemote(url: string): string {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^/@]*)@(.*)$/i.exec(url);
  if (m === null) return url;
  const [, scheme, userinfo, rest] = m as unknown as [string, string, string, string];
  if (/^https?:\/\//i.test(scheme)) return `${scheme}${rest}`;
  const user = userinfo.split(':')[0] ?? '';
  return user.length > 0 ? `${scheme}${user}@${rest}` : `${scheme}${rest}`;
}


async function remoteOf(root: string): Promise<string | null> {
  const names = (await gitText(['remote'], root))?.split('\n').filter((n) => n.length > 0) ?? [];
  const name = names.includes('origin') ? 'origin' : names[0];
  if (name === undefined) return null;
  const url = await gitText(['remote', 'get-url', name], root);
  return url !== null && url.length > 0 ? redactRemote(url) : null;
}

/** `git diff --numstat -z`: `added\tdeleted\tpath\0` (`-\t-\t` for binary). */
function parseNumstat(out: Buffer): SnapshotGit['numstat'] {
  const rows: SnapshotGit['numstat'] = [];
  for (const entry of out.toString('utf8').split('\0')) {
    const m = /^(-|\d+)\t(-|\d+)\t(.*)$/s.exec(entry);
    if (m === null) continue;
    rows.push({ path: m[3]!, added: m[1] === '-' ? null : Number(m[1]), deleted: m[2] === '-' ? null : Number(m[2]) });
  }
  return rows;
}

/** Flags that make the patch the same whatever the user's diff config says, and `git apply --binary` able to read it. */
const DIFF_FLAGS = ['--no-color', '--no-ext-diff', '--no-textconv', '--no-renames', '--src-prefix=a/', '--dst-prefix=b/'];

/**
 * The git state of the session's cwd: remote, branch, HEAD, the tracked changes against HEAD as one binary patch
 * (staged and not), and the untracked files git does not ignore, with their modes. Patch and untracked files share
 * `maxBytes`: the patch first (it is the work), then the untracked files in path order, each that does not fit
 * left out and named. Ignored files are never read. Never throws: what cannot be read becomes a note.
 */
export async function captureGitState(cwd: string, opts: { maxBytes: number; sha256: (b: Buffer) => string; allowUntracked?: readonly string[] }): Promise<GitCapture> {
  const notes: string[] = [];
  try {
    const s = await stat(cwd);
    if (!s.isDirectory()) return { git: null, blobs: [], notes: [`git: the session's cwd ${cwd} is not a directory`] };
  } catch {
    return { git: null, blobs: [], notes: [`git: the session's cwd ${cwd} no longer exists, so no git state was kept`] };
  }
  let inside;
  try {
    inside = await runGit(['rev-parse', '--show-toplevel'], { cwd });
  } catch (e) {
    return { git: null, blobs: [], notes: [`git: could not run git (${(e as Error).message}), so no git state was kept`] };
  }
  if (inside.code !== 0) {
    const bare = /must be run in a work tree/.test(inside.stderr);
    return { git: null, blobs: [], notes: [bare ? `git: ${cwd} is inside a bare repository: no work tree to keep` : `git: ${cwd} is not in a git repository, so no git state was kept`] };
  }
  const root = inside.stdout.toString('utf8').trim();
  const subdir = relative(root, cwd).split(sep).join('/');

  const head = await gitText(['rev-parse', '--verify', '-q', 'HEAD'], root);
  const branch = await gitText(['symbolic-ref', '--short', '-q', 'HEAD'], root);
  const remote = await remoteOf(root);
  // Before the first commit there is no HEAD: the changes are against the empty tree (everything in the index).
  let base = head;
  if (base === null) {
    base = await gitText(['hash-object', '-t', 'tree', '/dev/null'], root);
    if (base === null) notes.push('git: no commit yet and the empty tree could not be named, so tracked changes were not kept');
  }

  const cut: SnapshotCut[] = [];
  const blobs: PendingBlob[] = [];
  let used = 0;
  let patch: SnapshotGit['patch'] = null;
  let numstat: SnapshotGit['numstat'] = [];
  if (base !== null) {
    const stats = await runGit(['diff', '--numstat', '-z', ...DIFF_FLAGS, base], { cwd: root });
    if (stats.code === 0) numstat = parseNumstat(stats.stdout);
    else notes.push(`git: diff --numstat failed: ${stats.stderr.split('\n')[0] ?? ''}`);
    const diff = await runGit(['diff', '--binary', '--full-index', ...DIFF_FLAGS, base], { cwd: root, keepBytes: opts.maxBytes + 1 });
    if (diff.code !== 0) {
      notes.push(`git: diff --binary failed, so tracked changes were not kept: ${diff.stderr.split('\n')[0] ?? ''}`);
    } else if (diff.stdoutBytes > opts.maxBytes) {
      cut.push({ path: null, bytes: diff.stdoutBytes, why: `${mb(diff.stdoutBytes)}, over the ${mb(opts.maxBytes)} cap` });
    } else if (diff.stdoutBytes > 0) {
      const hash = opts.sha256(diff.stdout);
      blobs.push({ hash, bytes: diff.stdout });
      patch = { hash, bytes: diff.stdout.length };
      used += diff.stdout.length;
    }
  }

  const untracked: SnapshotGit['untracked'] = [];
  const others = await runGit(['ls-files', '--others', '--exclude-standard', '-z'], { cwd: root });
  if (others.code !== 0) {
    notes.push(`git: could not list untracked files: ${others.stderr.split('\n')[0] ?? ''}`);
  } else {
    const paths = others.stdout.toString('utf8').split('\0').filter((p) => p.length > 0).sort();
    for (const path of paths) {
      if (path.endsWith('/')) {
        cut.push({ path, bytes: 0, why: 'a repository of its own inside this one' });
        continue;
      }
      if (looksLikeSecret(path, opts.allowUntracked)) {
        cut.push({ path, bytes: 0, why: 'looks like a secret, not copied; handoff.allow_untracked in the policy lets it travel' });
        continue;
      }
      const full = join(root, path);
      try {
        const st = await lstat(full);
        let bytes: Buffer;
        let mode: '100644' | '100755' | '120000';
        if (st.isSymbolicLink()) {
          bytes = Buffer.from(await readlink(full), 'utf8');
          mode = '120000';
        } else if (st.isFile()) {
          if (used + st.size > opts.maxBytes) {
            cut.push({ path, bytes: st.size, why: `${mb(st.size)}, over the ${mb(opts.maxBytes)} cap` });
            continue;
          }
          bytes = await readFile(full);
          mode = (st.mode & 0o111) !== 0 ? '100755' : '100644';
        } else {
          cut.push({ path, bytes: 0, why: 'not a regular file' });
          continue;
        }
        if (used + bytes.length > opts.maxBytes) {
          cut.push({ path, bytes: bytes.length, why: `${mb(bytes.length)}, over the ${mb(opts.maxBytes)} cap` });
          continue;
        }
        const hash = opts.sha256(bytes);
        blobs.push({ hash, bytes });
        untracked.push({ path, mode, hash, bytes: bytes.length });
        used += bytes.length;
      } catch (e) {
        cut.push({ path, bytes: 0, why: `unreadable: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` });
      }
    }
  }

  return { git: { root, subdir, remote, branch, head, patch, numstat, untracked, cut }, blobs, notes };
}
