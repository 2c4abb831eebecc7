import { buildPolicy, checkPolicyFile, type Policy, type PolicyIssue } from './schema.js';
import { layerOf, mergePolicyLayers, type PolicyLayer } from './merge.js';

/** The policy from its layers (repository file, user file), with every problem named by its source. Pure. */

export interface SourcedIssue extends PolicyIssue {
  /** The layer's name, e.g. ".sleds/policy.yml"; "defaults" for the built-in part. */
  source: string;
}

export interface ResolvedPolicy {
  /** Null when there are errors: the caller decides what stands in (the last good policy, or the defaults). */
  policy: Policy | null;
  errors: SourcedIssue[];
  warnings: SourcedIssue[];
  provenance: Record<string, string[]>;
}

export function resolvePolicy(files: PolicyLayer[]): ResolvedPolicy {
  const errors: SourcedIssue[] = [];
  const warnings: SourcedIssue[] = [];
  for (const f of files) {
    const c = checkPolicyFile(f.data);
    errors.push(...c.errors.map((e) => ({ ...e, source: f.source })));
    warnings.push(...c.warnings.map((w) => ({ ...w, source: f.source })));
  }
  // A file that is not a mapping has been reported above; the merge takes the others.
  const merged = mergePolicyLayers(files.filter((f) => f.data !== null && typeof f.data === 'object' && !Array.isArray(f.data)));
  if (errors.length > 0) return { policy: null, errors, warnings, provenance: merged.provenance };
  const whole = checkPolicyFile(merged.data);
  const sourced = (issues: PolicyIssue[]): SourcedIssue[] => issues.map((i) => ({ ...i, source: layerOf(merged, i.path).source }));
  if (!whole.file) return { policy: null, errors: sourced(whole.errors), warnings, provenance: merged.provenance };
  const rulesFrom = merged.provenance.rules ?? [];
  const built = buildPolicy(whole.file, rulesFrom[rulesFrom.length - 1] ?? 'defaults');
  if (built.errors.length > 0) return { policy: null, errors: sourced(built.errors), warnings, provenance: merged.provenance };
  return { policy: built.policy, errors, warnings, provenance: merged.provenance };
}

/** The built-in policy: what applies when there is no file, or no good one yet. */
export function defaultPolicy(): Policy {
  const r = resolvePolicy([]);
  if (!r.policy) throw new Error(`the built-in policy is invalid: ${r.errors.map((e) => e.message).join('; ')}`);
  return r.policy;
}
