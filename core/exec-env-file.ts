/**
 * The file through which musher hands a restarted pane its environment (the gateway's URL and local token) without
 * the variables ever standing in an argv: musher writes it 0600 in its 0700 runtime dir, `sleds exec-env` reads it
 * once, removes it, and starts the harness with the variables added (harnesses/resume-plan.ts, PaneLauncher).
 * Pure and package-free: the wrapper loads nothing but node builtins and this.
 */

export const ENV_FILE_VERSION = 1;
/** The names musher gives these files in its env dir (so a sweep finds only its own). */
export const ENV_FILE_PATTERN = /^env-[0-9a-f]{24}\.json$/;
/** How long an unread file may wait for its pane before musher removes it (a pane that never started). */
export const ENV_FILE_MAX_AGE_MS = 10 * 60_000;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function encodeEnvFile(env: Record<string, string>): string {
  return `${JSON.stringify({ v: ENV_FILE_VERSION, env })}\n`;
}

/** The variables in a file's text, or one line saying why it is not such a file. */
export function decodeEnvFile(text: string): { env: Record<string, string> } | { error: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { error: 'is not JSON' };
  }
  const body = json as { v?: unknown; env?: unknown } | null;
  if (!body || typeof body !== 'object' || body.v !== ENV_FILE_VERSION) return { error: `is not a version ${ENV_FILE_VERSION} env file` };
  if (!body.env || typeof body.env !== 'object' || Array.isArray(body.env)) return { error: 'holds no "env" object' };
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(body.env as Record<string, unknown>)) {
    if (!ENV_NAME.test(k)) return { error: `names '${k.slice(0, 40)}', which is not an environment variable name` };
    if (typeof v !== 'string' || v.includes('\0')) return { error: `gives ${k} a value that is not a string` };
    env[k] = v;
  }
  return { env };
}
