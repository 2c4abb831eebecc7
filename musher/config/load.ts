import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatIssuePath } from '../../core/policy/schema.js';
import { parseYamlFile } from '../policy/yaml-file.js';
import { DEFAULT_CONFIG, resolveConfig, type ConfigIssue, type SledsConfig } from './schema.js';

/**
 * Reads `<config dir>/config.yml` once (musher at start; the CLI per command). No file is the defaults. A file that
 * does not parse or validate is one line naming its line, and the defaults stand in for all of it: half a config
 * (the upstream from the file, the binaries not) would be harder to reason about than none.
 */

export const CONFIG_FILE = 'config.yml';

export interface LoadedConfig {
  config: SledsConfig;
  /** The file's path (absolute), whether or not it exists. */
  file: string;
  /** One line when the file is bad ("~/.config/sleds/config.yml:3: upstreams.anthropic: … — …"); null when fine. */
  error: string | null;
  /** The same line without what musher does about it ("~/.config/sleds/config.yml:3: engine.runner: …"), for a command that refuses instead. */
  issue: string | null;
  /** One line per unknown key. */
  warnings: string[];
}

export function configFilePath(configDir: string): string {
  return join(configDir, CONFIG_FILE);
}

function shown(file: string, homeDir: string | null): string {
  return homeDir && file.startsWith(`${homeDir}/`) ? `~/${file.slice(homeDir.length + 1)}` : file;
}

export function loadConfig(configDir: string, homeDir: string | null = null): LoadedConfig {
  const file = configFilePath(configDir);
  const display = shown(file, homeDir);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { config: DEFAULT_CONFIG, file, error: null, issue: null, warnings: [] };
    const issue = `${display}: cannot read it (${code ?? (e as Error).message})`;
    return { config: DEFAULT_CONFIG, file, error: `${issue} — running on the built-in defaults`, issue, warnings: [] };
  }
  const yaml = parseYamlFile(text);
  const at = (line: number | null): string => (line !== null ? `${display}:${line}` : display);
  const defaultsNote = 'running on the built-in defaults until it is fixed (then restart musher: sleds musher stop; sleds musher start)';
  if (yaml.errors.length > 0) {
    const e = yaml.errors[0]!;
    const issue = `${at(e.line)}: ${e.message}${more(yaml.errors.length)}`;
    return { config: DEFAULT_CONFIG, file, error: `${issue} — ${defaultsNote}`, issue, warnings: [] };
  }
  const resolved = resolveConfig(yaml.data);
  const line = (i: ConfigIssue): string => `${at(yaml.lineOf(i.path))}: ${i.path.length > 0 ? `${formatIssuePath(i.path)}: ` : ''}${i.message}`;
  if (resolved.errors.length > 0) {
    const issue = `${line(resolved.errors[0]!)}${more(resolved.errors.length)}`;
    return { config: DEFAULT_CONFIG, file, error: `${issue} — ${defaultsNote}`, issue, warnings: [] };
  }
  return { config: resolved.config, file, error: null, issue: null, warnings: resolved.warnings.map(line) };
}

function more(n: number): string {
  return n > 1 ? ` (and ${n - 1} more)` : '';
}
