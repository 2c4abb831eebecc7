import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import type { BinaryName, UpstreamName } from '../../musher/config/schema.js';

/**
 * The one way tests give musher its upstreams and binaries: `<SLEDS_HOME>/config/config.yml`, the file musher reads
 * at start (it takes none of these from its environment). The `sleds` CLI reads the same file.
 *
 *   writeSledsConfig(world, { upstreams: { anthropic: fake.url }, binaries: { claude: fx.claudeBin } });
 */
export interface TestSledsConfig {
  upstreams?: Partial<Record<UpstreamName, string>>;
  binaries?: Partial<Record<BinaryName, string>>;
  retention?: { rawEventsDays?: number };
  gateway?: { batchPollMs?: number; batchMaxPollMs?: number; batchKeepaliveMs?: number };
}

export function sledsConfigFile(where: { sledsHome: string } | string): string {
  return join(typeof where === 'string' ? where : where.sledsHome, 'config', 'config.yml');
}

/** Writes config.yml, merged section by section over what the file already holds; returns its path. */
export function writeSledsConfig(where: { sledsHome: string } | string, config: TestSledsConfig): string {
  const file = sledsConfigFile(where);
  let current: Record<string, Record<string, unknown>> = {};
  try {
    current = (parse(readFileSync(file, 'utf8')) as typeof current) ?? {};
  } catch {
    // none yet
  }
  const merged: Record<string, Record<string, unknown>> = { ...current };
  for (const [section, values] of Object.entries(config) as Array<[string, Record<string, unknown> | undefined]>) {
    if (values) merged[section] = { ...(current[section] ?? {}), ...values };
  }
  mkdirSync(join(file, '..'), { recursive: true, mode: 0o700 });
  writeFileSync(file, stringify(merged), { mode: 0o600 });
  return file;
}
