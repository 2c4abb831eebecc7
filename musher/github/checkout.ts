import { githubRepoOfRemote, type GithubRepo } from '../../core/github/remote.js';
import { gitText } from '../snapshot/run-git.js';
import type { Clock } from '../clock.js';

/**
 * A session's checkout as GitHub sees it: the repository its `origin` names and the branch it is on. Read with git
 * (argument arrays), and kept a minute per folder: the PR watcher asks for every open task each round.
 */
export interface Checkout {
  root: string;
  /** Null when HEAD is detached. */
  branch: string | null;
  /** Null when origin is missing or not a GitHub remote. */
  repo: GithubRepo | null;
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
  const [branch, origin] = await Promise.all([gitText(['symbolic-ref', '--quiet', '--short', 'HEAD'], root), gitText(['remote', 'get-url', 'origin'], root)]);
  return { root, branch: branch || null, repo: origin ? githubRepoOfRemote(origin, extraHosts) : null };
}
