/**
 * POSIX shell quoting for the command lines sleds prints for a person to paste (`cd <dir> && claude --resume=<id>`).
 * Nothing sleds runs goes through a shell (argv arrays only); this is for reading and pasting. A word of safe
 * characters is left as it is; anything else is put in single quotes, inside which a shell expands nothing (`$(…)`,
 * backticks, `$HOME`, `!`, globs), with each `'` written as `'\''`. Double quotes (JSON.stringify) are not a shell
 * quoting: `$(…)` and backticks still run inside them.
 */

/** Characters no POSIX shell treats specially anywhere in a word. `~` and `=` at the start are left out on purpose:
 * `~` expands at the start of a word; a leading `=` is zsh's command lookup. */
const SAFE_WORD = /^[A-Za-z0-9_./:@%+,-][A-Za-z0-9_./:@%+,=-]*$/;

/** One argument as a shell word that means exactly `word`. */
export function shellQuote(word: string): string {
  if (SAFE_WORD.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** An argv as one line a shell runs as exactly that argv. */
export function shellLine(argv: readonly string[]): string {
  return argv.map(shellQuote).join(' ');
}

/** `cd <dir> && <argv>`, each part quoted. */
export function cdAndRun(dir: string, argv: readonly string[]): string {
  return `cd ${shellQuote(dir)} && ${shellLine(argv)}`;
}
