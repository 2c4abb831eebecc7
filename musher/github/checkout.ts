import { parseConfigZ, parseRemoteList, pushConfigOf, pushTarget, PUSH_CONFIG_REGEXP } from '../../core/github/push-target.js';
import type { GithubRepo } from '../../core/github/remote.js';
import { gitText } from '../snapshot/run-git.js';
import type { Clock } from '../clock.js';

/**
 * A session's checkout as GitHub sees it: the repository its pull requests go to, the branch it is on, and where
 * `git push` sends that branch — which is the user's fork when origin is a fork and upstream the team's repository
 * (core/github/push-target.ts decides, as git and gh do). Read with git (argument arrays), and kept a minute per
 * folder: the PR watcher asks for every open task each round.
 */
export interface Checkout {
  root: string;
  /** Null when HEAD is detached. */
  branch: string | null;
  /** Where its pull requests live (gh's default repository); null when no remote is on GitHub. */
  repo: GithubRepo | null;
  /** Where the branch is pushed: a PR's head is `repo.owner:branch`. Null when detached or not pushed to GitHub. */
  head: { repo: GithubRepo; branch: string } | null;
}

const KEEP_MS = 60_000;

export class CheckoutReader {
  private readonly cache = new Map<string, { at: number; checkout: Checkout | null }>();
  constructor(
    private readonly clock: Clock,
    /** GitHub Enterprise hosts that count as GitHub too. */
    private readonly extraHosts: string[] = [],
  ) {}

  async read(cwd: string): Promise<Checkout | null> {
    const now = this.clock.now();
    const hit = this.cache.get(cwd);
    if (hit && now - hit.at < KEEP_MS) return hit.checkout;
    const checkout = await readCheckout(cwd, this.extraHosts).catch(() => null);
    this.cache.set(cwd, { at: now, checkout });
    return checkout;
  }
}

export async function readCheckout(cwd: string, extraHosts: string[] = []): Promise<Checkout | null> {
  const root = await gitText(['rev-parse', '--show-toplevel'], cwd);
  if (!root) return null;
  const [branchText, remotes, settings] = await Promise.all([
    gitText(['symbolic-ref', '--quiet', '--short', 'HEAD'], root),
    // `remote -v` gives the URLs after `url.<base>.insteadOf`, and a remote's pushurl on its "(push)" line.
    gitText(['remote', '-v'], root),
    // Exit 1 when none is set: then git's defaults (origin, the same branch name).
    gitText(['config', '-z', '--get-regexp', PUSH_CONFIG_REGEXP], root),
  ]);
  const branch = branchText || null;
  const target = pushTarget(pushConfigOf(branch, parseRemoteList(remotes ?? ''), parseConfigZ(settings ?? '')), extraHosts);
  return { root, branch, repo: target.base, head: target.head };
}
