import { homedir } from 'node:os';
import { allowanceFor, amberAt, cheaperModel, evaluatePolicy, nextOvernightWindow, worthLevels } from '../../core/policy/evaluate.js';
import { PolicyDecisionSchema } from '../../core/policy/decision.js';
import { renderPolicyExplanation } from '../../core/policy/explain.js';
import type { Policy } from '../../core/policy/schema.js';
import type { PolicyPort, PolicyView } from '../walls/ports.js';
import type { PolicyLoader } from './loader.js';

/** The workspace policy as the wall asks it: the session folder's effective policy, evaluated at the wall. */
export function policyPort(loader: PolicyLoader, outsideAnyRepo: string): PolicyPort {
  return {
    forDirectory(cwd) {
      // No folder known: the user's own file over the defaults, read from a folder that is in no repository.
      const loaded = loader.forDirectory(cwd ?? outsideAnyRepo);
      return viewOf(loaded.policy, loaded.sources, loaded.errors);
    },
    explain(record) {
      const parsed = PolicyDecisionSchema.safeParse(record);
      return parsed.success ? renderPolicyExplanation(parsed.data) : 'no policy evaluation was kept for this wall';
    },
  };
}

function viewOf(policy: Policy, sources: string[], errors: string[]): PolicyView {
  return {
    cheaperModel: (model) => cheaperModel(policy, model),
    overnightWindow: (now, timeZone) => nextOvernightWindow(policy, now, timeZone),
    overnightLimits: policy.overnight ? { capMicros: policy.overnight.capMicros, concurrency: policy.overnight.concurrency } : null,
    overnightZone: policy.overnight?.timeZone ?? null,
    overnightDigest: policy.overnight?.digest ?? null,
    overnightLadder: policy.overnight ? { onCall: policy.overnight.onCall, escalateAfterMs: policy.overnight.escalateAfterMs } : null,
    allowance: (seat) => allowanceFor(policy, seat),
    decide: (input) => {
      const decision = evaluatePolicy(policy, input);
      return { choice: decision.choice, rule: decision.rule?.name ?? null, record: decision };
    },
    amberAt: amberAt(policy),
    worthLevels: worthLevels(policy).map((l) => l.name),
    handoffFolder: policy.handoff.folder === null ? null : policy.handoff.folder.replace(/^~(?=\/)/, homedir()),
    handoffAllowUntracked: policy.handoff.allowUntracked,
    worthValues: policy.worthValues,
    tracker: policy.tracker,
    engine: policy.engine,
    sources,
    errors,
  };
}
