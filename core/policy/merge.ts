import { DEFAULT_POLICY_INPUT, DEFAULTS_SOURCE } from './defaults.js';
import type { IssuePath } from './schema.js';

/**
 * The effective policy's input: the built-in defaults, then the repository's file, then the user's, later layers
 * winning key by key. Lists (the rules) are replaced whole, never spliced. Against the defaults a section the files
 * name replaces the default section, so `allowance: {default: {per_day: $60}}` has no weekly cap (a missing cap is
 * no cap), with exceptions that would otherwise surprise: `cheaper` adds to the built-in steps, `worth_values` to the built-in values, and `worth`
 * keeps the built-in levels unless a file names levels of its own. Pure.
 */

export interface PolicyLayer {
  /** How errors and `policy show` name it: ".sleds/policy.yml", "~/.config/sleds/policy.yml". */
  source: string;
  data: Record<string, unknown>;
}

export interface MergedPolicyInput {
  data: Record<string, unknown>;
  /** For each top-level key, the sources it came from, in order ("defaults" first when it contributed). */
  provenance: Record<string, string[]>;
  /** The layers, defaults first: for finding which file a path came from. */
  layers: PolicyLayer[];
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** `b` over `a`: mappings merge key by key, anything else (lists, scalars, null) replaces. */
export function deepMerge(a: unknown, b: unknown): unknown {
  if (!isMapping(a) || !isMapping(b)) return structuredClone(b);
  const out: Record<string, unknown> = structuredClone(a);
  for (const [k, v] of Object.entries(b)) out[k] = k in out ? deepMerge(out[k], v) : structuredClone(v);
  return out;
}

export function mergePolicyLayers(files: PolicyLayer[]): MergedPolicyInput {
  const defaults = structuredClone(DEFAULT_POLICY_INPUT) as unknown as Record<string, unknown>;
  const data: Record<string, unknown> = {};
  const provenance: Record<string, string[]> = {};
  const keys = new Set([...Object.keys(defaults), ...files.flatMap((f) => Object.keys(f.data))]);
  for (const key of keys) {
    const naming = files.filter((f) => key in f.data);
    if (naming.length === 0) {
      data[key] = defaults[key];
      provenance[key] = [DEFAULTS_SOURCE];
      continue;
    }
    let value: unknown = naming.map((f) => f.data[key]).reduce((acc, v) => deepMerge(acc, v));
    let fromDefaults = false;
    if ((key === 'cheaper' || key === 'worth_values') && isMapping(value)) {
      value = deepMerge(defaults[key], value);
      fromDefaults = true;
    } else if (key === 'worth' && isMapping(value) && !Object.keys(value).some((k) => k !== 'default')) {
      value = deepMerge(defaults.worth, value);
      fromDefaults = true;
    }
    data[key] = value;
    provenance[key] = [...(fromDefaults ? [DEFAULTS_SOURCE] : []), ...naming.map((f) => f.source)];
  }
  const defaultsLayer: PolicyLayer = { source: DEFAULTS_SOURCE, data: defaults };
  return { data, provenance, layers: [defaultsLayer, ...files] };
}

function hasPath(data: unknown, path: IssuePath): boolean {
  let v: unknown = data;
  for (const p of path) {
    if (v === null || typeof v !== 'object' || !(p in (v as object))) return false;
    v = (v as Record<string | number, unknown>)[p];
  }
  return true;
}

/**
 * Which layer a value at `path` came from: the last that has the whole path, else the last that has the longest
 * part of it (a missing key belongs to the mapping that lacks it).
 */
export function layerOf(merged: MergedPolicyInput, path: IssuePath): PolicyLayer {
  // A section the files replace wholesale belongs to the files, even where the defaults have the same key.
  const eligible = (layer: PolicyLayer): boolean =>
    layer.source !== DEFAULTS_SOURCE || (merged.provenance[String(path[0])] ?? []).includes(DEFAULTS_SOURCE);
  const lastWith = (prefix: IssuePath): PolicyLayer | null => {
    for (let i = merged.layers.length - 1; i >= 0; i--) {
      const layer = merged.layers[i]!;
      if (eligible(layer) && hasPath(layer.data, prefix)) return layer;
    }
    return null;
  };
  // Lists are replaced whole: anything inside one belongs to the last layer that has the list.
  const firstIndex = path.findIndex((p) => typeof p === 'number');
  if (firstIndex > 0) {
    const owner = lastWith(path.slice(0, firstIndex));
    if (owner) return owner;
  }
  for (let n = path.length; n >= 1; n--) {
    const owner = lastWith(path.slice(0, n));
    if (owner) return owner;
  }
  const files = merged.layers.filter((l) => l.source !== DEFAULTS_SOURCE && path.length > 0 && String(path[0]) in l.data);
  return files[files.length - 1] ?? merged.layers[merged.layers.length - 1]!;
}
