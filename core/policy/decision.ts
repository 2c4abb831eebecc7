import { z } from 'zod';
import { RULE_ACTIONS } from './schema.js';

/**
 * What the policy decided at a wall and why: kept with the wall as JSON (the audit log's "the policy chose it")
 * and read back by `sleds policy explain <wall>`. Unknown fields are tolerated so older records still read.
 */

const RuleRef = {
  /** 0-based position in the policy's `rules`. */
  index: z.number().int().min(0),
  name: z.string(),
  /** The rule's line in its file; null for the built-in defaults. */
  line: z.number().int().nullable(),
};

export const PolicyTraceEntrySchema = z.object({
  ...RuleRef,
  matched: z.boolean(),
  /** Matched: why each condition held. Not matched: why each failing condition failed, or why the exit could not apply. */
  reasons: z.array(z.string()),
});

export const PolicyDecisionSchema = z.object({
  choice: z.enum(RULE_ACTIONS),
  /** The rule that chose; null when no rule matched and the implicit last rule asked. */
  rule: z.object(RuleRef).nullable(),
  /** The rules evaluated, in order, up to and including the one that chose. */
  trace: z.array(PolicyTraceEntrySchema),
  /** The file the rules came from (".sleds/policy.yml", "defaults"). */
  rulesSource: z.string().nullable().optional(),
  /** The task's worth as evaluated (its own, else the policy's default); null for none. */
  worth: z.string().nullable().optional(),
});

export type PolicyTraceEntry = z.infer<typeof PolicyTraceEntrySchema>;
export type PolicyDecision = z.infer<typeof PolicyDecisionSchema>;
