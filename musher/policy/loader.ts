import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { formatIssuePath, type Policy } from '../../core/policy/schema.js';
import { defaultPolicy, resolvePolicy, type SourcedIssue } from '../../core/policy/resolve.js';
import type { PolicyLayer } from '../../core/policy/merge.js';
import { DEFAULTS_SOURCE } from '../../core/policy/defaults.js';
import type { Log } from '../log.js';
import { parseYamlFile, type ParsedYaml } from './yaml-file.js';
import { findRepoRoot } from './repo-root.js';

/**
 * The effective policy for a working directory: the repository's `.sleds/policy.yml` (the team's), then the user's
 * `<config dir>/policy.yml`, over the built-in defaults. Files are parsed again only when their mtime or size
 * changes. A file that stops parsing or validating does not take the policy away: the last good policy for that
 * repository stands in (else the good files alone, else the defaults) and the error is reported, in `errors` on
 * every call and in the log once per change.
 */

export const REPO_POLICY_FILE = '.sleds/policy.yml';
export const USER_POLICY_FILE = 'policy.yml';

export type PolicyFallback = 'last-good' | 'good-files-only' | 'defaults';

export interface PolicyLoadResult {
  policy: Policy;
  /** The policy files that exist, absolute, repository's first. */
  sources: string[];
  /** One line each: ".sleds/policy.yml:14: rules[2].then: expected one of continue|hold|…". */
  errors: string[];
  /** Unknown keys (ignored) and YAML warnings, one line each. */
  warnings: string[];
  /** For each top-level key, where it came from: "defaults", ".sleds/policy.yml", "~/.config/sleds/policy.yml". */
  provenance: Record<string, string[]>;
  repoRoot: string | null;
  /** Null when the policy is the files' as they are now; else what stands in while a file is broken. */
  fallback: PolicyFallback | null;
}

export interface PolicyLoaderOptions {
  configDir: string;
  /** Shortens the user's file to ~/… in messages. */
  homeDir?: string | null;
  /** Errors and warnings are logged once per change. */
  log?: Log | null;
}

interface FileSpec {
  path: string;
  display: string;
}

interface CachedFile {
  mtimeMs: number;
  ctimeMs: number;
  size: number;
  parsed: ParsedYaml;
}

interface Good {
  policy: Policy;
  provenance: Record<string, string[]>;
}

export class PolicyLoader {
  private readonly files = new Map<string, CachedFile>();
  private readonly lastGood = new Map<string, Good>();
  private readonly reported = new Map<string, string>();

  constructor(private readonly opts: PolicyLoaderOptions) {}

  /** The effective policy for a directory inside (or outside) a repository. */
  forDirectory(cwd: string): PolicyLoadResult {
    const repoRoot = findRepoRoot(cwd);
    const specs: FileSpec[] = [];
    if (repoRoot !== null) specs.push({ path: join(repoRoot, REPO_POLICY_FILE), display: REPO_POLICY_FILE });
    specs.push(this.userFile());
    return this.load(repoRoot ?? '(no repository)', specs, repoRoot);
  }

  /** One file on its own over the defaults, as `sleds policy check <path>` sees it. */
  forFile(path: string, display = path): PolicyLoadResult {
    return this.load(`file:${path}`, [{ path, display }], null);
  }

  userFile(): FileSpec {
    const path = join(this.opts.configDir, USER_POLICY_FILE);
    const home = this.opts.homeDir;
    const display = home && path.startsWith(`${home}/`) ? `~/${path.slice(home.length + 1)}` : path;
    return { path, display };
  }

  private read(spec: FileSpec): ParsedYaml | null {
    let st;
    try {
      st = statSync(spec.path);
    } catch {
      // No policy file there (any more): none applies, and its cached parse is dropped.
      this.files.delete(spec.path);
      return null;
    }
    const cached = this.files.get(spec.path);
    if (cached && cached.mtimeMs === st.mtimeMs && cached.ctimeMs === st.ctimeMs && cached.size === st.size) return cached.parsed;
    let parsed: ParsedYaml;
    try {
      parsed = parseYamlFile(readFileSync(spec.path, 'utf8'));
    } catch (e) {
      parsed = { data: null, errors: [{ line: null, message: `cannot read it: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` }], warnings: [], lineOf: () => null };
    }
    this.files.set(spec.path, { mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, size: st.size, parsed });
    return parsed;
  }

  private load(key: string, specs: FileSpec[], repoRoot: string | null): PolicyLoadResult {
    const present: Array<FileSpec & { parsed: ParsedYaml }> = [];
    for (const spec of specs) {
      const parsed = this.read(spec);
      if (parsed) present.push({ ...spec, parsed });
    }
    const sources = present.map((p) => p.path);
    const byDisplay = new Map(present.map((p) => [p.display, p]));
    const line = (source: string, lineNo: number | null, text: string): string => `${source}${lineNo !== null ? `:${lineNo}` : ''}: ${text}`;
    const issueLine = (i: SourcedIssue): string => {
      const where = i.path.length > 0 ? `${formatIssuePath(i.path)}: ` : '';
      return line(i.source, byDisplay.get(i.source)?.parsed.lineOf(i.path) ?? null, `${where}${i.message}`);
    };

    const errors: string[] = [];
    const warnings: string[] = [];
    for (const p of present) {
      errors.push(...p.parsed.errors.map((e) => line(p.display, e.line, e.message)));
      warnings.push(...p.parsed.warnings.map((w) => line(p.display, w.line, w.message)));
    }
    const layers = (files: typeof present): PolicyLayer[] =>
      files.filter((p) => p.parsed.errors.length === 0).map((p) => ({ source: p.display, data: p.parsed.data as Record<string, unknown> }));

    const resolved = resolvePolicy(layers(present));
    warnings.push(...resolved.warnings.map(issueLine));
    errors.push(...resolved.errors.map(issueLine));

    let result: PolicyLoadResult;
    if (errors.length === 0 && resolved.policy) {
      const good = { policy: this.withLines(resolved.policy, byDisplay), provenance: resolved.provenance };
      this.lastGood.set(key, good);
      result = { ...good, sources, errors, warnings, repoRoot, fallback: null };
    } else {
      result = { ...this.standIn(key, present, layers, byDisplay), sources, errors, warnings, repoRoot };
    }
    this.report(key, result);
    return result;
  }

  /** While a file is broken: the last good policy, else the files that are fine on their own, else the defaults. */
  private standIn(
    key: string,
    present: Array<FileSpec & { parsed: ParsedYaml }>,
    layers: (files: Array<FileSpec & { parsed: ParsedYaml }>) => PolicyLayer[],
    byDisplay: Map<string, FileSpec & { parsed: ParsedYaml }>,
  ): Good & { fallback: PolicyFallback } {
    const last = this.lastGood.get(key);
    if (last) return { ...last, fallback: 'last-good' };
    const fine = present.filter((p) => p.parsed.errors.length === 0 && resolvePolicy(layers([p])).policy !== null);
    if (fine.length > 0 && fine.length < present.length) {
      const r = resolvePolicy(layers(fine));
      if (r.policy) return { policy: this.withLines(r.policy, byDisplay), provenance: r.provenance, fallback: 'good-files-only' };
    }
    return { policy: defaultPolicy(), provenance: resolvePolicy([]).provenance, fallback: 'defaults' };
  }

  /** Each rule's line in the file its rules came from. */
  private withLines(policy: Policy, byDisplay: Map<string, { parsed: ParsedYaml }>): Policy {
    if (policy.rulesSource === DEFAULTS_SOURCE) return policy;
    const file = byDisplay.get(policy.rulesSource);
    if (!file) return policy;
    return { ...policy, rules: policy.rules.map((r) => ({ ...r, line: file.parsed.lineOf(['rules', r.index]) })) };
  }

  private report(key: string, result: PolicyLoadResult): void {
    const log = this.opts.log;
    if (!log) return;
    const signature = [...result.errors, '|', ...result.warnings].join('\n');
    const before = this.reported.get(key);
    if (before === signature) return;
    this.reported.set(key, signature);
    const where = key.startsWith('file:') ? key.slice(5) : key;
    for (const e of result.errors) log.error(`policy (${where}): ${e}`);
    for (const w of result.warnings) log.warn(`policy (${where}): ${w}`);
    if (result.fallback === 'last-good') log.warn(`policy (${where}): keeping the last good policy until the file is fixed`);
    else if (result.fallback === 'good-files-only') log.warn(`policy (${where}): using the files that are fine until the broken one is fixed`);
    else if (result.fallback === 'defaults') log.warn(`policy (${where}): using the built-in defaults until the file is fixed`);
    else if (before !== undefined && result.errors.length === 0) log.info(`policy (${where}): fixed; the files apply again`);
  }
}
