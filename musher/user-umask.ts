/**
 * musher runs with umask 077 so everything it writes is the user's alone; the programs it starts for the user — git
 * checking out a picked-up worktree, a harness resumed headless that edits the project — must make files as the user
 * would, or a teammate's picked-up work and an agent's new files come out 0600. The user's own umask is kept when
 * musher tightens its own, and put back for the instant a child is forked (spawn forks synchronously, so the child
 * inherits it and musher's own JS writes nothing in between).
 */
let userUmask: number | null = null;

/** Sets musher's umask to `mask`, remembering the one the user started it with. */
export function tightenUmask(mask: number): void {
  userUmask = process.umask(mask);
}

/** Runs `fork` (a spawn) under the user's umask, when musher tightened its own; else as it is. */
export function asUser<T>(fork: () => T): T {
  if (userUmask === null) return fork();
  const mine = process.umask(userUmask);
  try {
    return fork();
  } finally {
    process.umask(mine);
  }
}
