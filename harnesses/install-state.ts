import { readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { SledsPaths } from '../core/paths.js';
import { writeFileAtomic, type Json } from './install-files.js';

/**
 * What `sleds install` changed, so that `sleds uninstall` can put it back: <configDir>/install-state.json (0600).
 * The original statusLine is kept the first time and only replaced if the user later set a different one.
 */

const json: z.ZodType<Json> = z.lazy(() =>
  z.union([z.null(), z.boolean(), z.number(), z.string(), z.array(json), z.record(z.string(), json)]),
);

// --- Codex (harnesses/codex/install.ts) -------------------------------------------------------------------------------
const CodexFileSchema = z.object({
  path: z.string(),
  /** Whether the file existed before sleds first touched it, and its sha256 then. */
  existedBefore: z.boolean(),
  originalSha256: z.string().nullable(),
  /** The copy taken before the first change (null when there was no file to copy). */
  backupPath: z.string().nullable(),
  backups: z.array(z.string()),
});

/** What `sleds install` changed in Codex's home ($CODEX_HOME, realpath'd as Codex names it in its trust keys). */
export const CodexStateSchema = z.object({
  home: z.string(),
  bin: z.string().nullable(),
  version: z.string().nullable(),
  hooksJson: CodexFileSchema.extend({
    /** Whether "hooks" and which event lists were there before: uninstall drops only the ones sleds added. */
    hadHooksKey: z.boolean(),
    hadEvents: z.array(z.string()),
  }),
  configToml: CodexFileSchema.extend({
    /** trusted_hash lines sleds changed in tables it did not write: the line as it was (null: sleds added it). */
    edited: z.array(z.object({ key: z.string(), line: z.string().nullable() })),
  }),
  /** The handlers sleds wrote, with their trust key and hash. */
  hooks: z.array(z.object({ event: z.string(), command: z.string(), timeout: z.number(), key: z.string(), hash: z.string() })),
});

export type CodexState = z.infer<typeof CodexStateSchema>;
// --- end Codex ---------------------------------------------------------------------------------------------------

export const InstallStateSchema = z.object({
  version: z.literal(1),
  installedAt: z.string(),
  updatedAt: z.string(),
  sledsVersion: z.string(),
  nodeVersion: z.string(),
  nodePath: z.string(),
  cliMain: z.string(),
  packageRoot: z.string(),
  claude: z.object({ bin: z.string(), version: z.string().nullable() }).nullable(),
  settings: z.object({
    path: z.string(),
    /** Whether settings.json existed before sleds first touched it, and its sha256 then. */
    existedBefore: z.boolean(),
    originalSha256: z.string().nullable(),
    /** The copy taken before the first change (null when there was no file to copy). */
    backupPath: z.string().nullable(),
    backups: z.array(z.string()),
    /** Top-level key order before sleds, to put it back on uninstall. */
    originalKeyOrder: z.array(z.string()),
    hadContainers: z.object({ enabledPlugins: z.boolean(), extraKnownMarketplaces: z.boolean() }),
  }),
  statusLine: z.object({
    /** The statusLine before sleds; `present: false` means there was none (uninstall removes the key). */
    original: z.object({ present: z.boolean(), value: json.optional() }),
    /** The user's command that ours chains with --then, if any. */
    chained: z.string().nullable(),
  }),
  plugin: z.object({
    method: z.enum(['claude', 'direct', 'pending']),
    note: z.string().nullable(),
  }),
  /** Codex: null when it was not found; absent in state files written before sleds knew Codex. */
  codex: CodexStateSchema.nullable().optional(),
  /** The `sleds` command linked onto the PATH (cli/path-link.ts); absent in state files written before it was. */
  command: z.object({ path: z.string(), target: z.string() }).nullable().optional(),
});

export type InstallState = z.infer<typeof InstallStateSchema>;

export function stateFile(paths: SledsPaths): string {
  return join(paths.configDir, 'install-state.json');
}

export type StateRead = { state: InstallState | null; error: string | null };

export function readState(paths: SledsPaths): StateRead {
  const file = stateFile(paths);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { state: null, error: null };
    return { state: null, error: `cannot read ${file}: ${(e as Error).message}` };
  }
  try {
    const parsed = InstallStateSchema.safeParse(JSON.parse(text));
    if (parsed.success) return { state: parsed.data, error: null };
    return { state: null, error: `${file} is not a sleds install state (${parsed.error.issues[0]?.message ?? 'bad shape'})` };
  } catch (e) {
    return { state: null, error: `${file} is not valid JSON (${(e as Error).message})` };
  }
}

export function writeState(paths: SledsPaths, state: InstallState): void {
  writeFileAtomic(stateFile(paths), `${JSON.stringify(state, null, 2)}\n`, 0o600);
}

export function removeState(paths: SledsPaths): boolean {
  try {
    unlinkSync(stateFile(paths));
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
}
