/**
 * The one path a command's failure takes. Under --json: one `{"error": "…"}` object on stdout and exit 1, whatever
 * failed (a script reads one shape and one code); otherwise one line on stderr, `sleds: …`, with the failure's own
 * exit code (2 for a usage error).
 *
 * Whether --json is on is a fact of the whole command line, so main.ts sets it once before any command runs, and
 * every module that reports a failure (including the musher client, which has no flag of its own) follows it.
 */
let json = false;

export function reportFailuresAsJson(on: boolean): void {
  json = on;
}

export function failuresAreJson(): boolean {
  return json;
}

/** Reports `message` (no "sleds: " prefix, no newline) and returns the exit code to use. */
export function fail(message: string, code: 1 | 2 = 1): number {
  if (json) {
    process.stdout.write(`${JSON.stringify({ error: message })}\n`);
    return 1;
  }
  process.stderr.write(`sleds: ${message}\n`);
  return code;
}
