import { z } from 'zod';

/**
 * What the harness hands the thin clients, which they forward to musher untouched. musher validates it here.
 * Unknown fields are tolerated: harnesses add fields every release (shared/facts/claude-code.md §1.3, §2).
 */
export const HookPayload = z.looseObject({
  session_id: z.string().min(1),
  transcript_path: z.string().optional(),
  cwd: z.string().optional(),
  hook_event_name: z.string().optional(),
  prompt: z.string().optional(),
  source: z.string().optional(),
  model: z.string().optional(),
  reason: z.string().optional(),
  error: z.string().optional(),
  last_assistant_message: z.string().optional(),
  notification_type: z.string().optional(),
  message: z.string().optional(),
});
export type HookPayload = z.infer<typeof HookPayload>;

const RateWindow = z.looseObject({
  used_percentage: z.number(),
  /** Epoch seconds. */
  resets_at: z.number().optional().nullable(),
});

export const StatuslinePayload = z.looseObject({
  session_id: z.string().optional(),
  transcript_path: z.string().optional(),
  cwd: z.string().optional(),
  version: z.string().optional(),
  model: z.looseObject({ id: z.string().optional(), display_name: z.string().optional() }).optional(),
  cost: z.looseObject({ total_cost_usd: z.number().optional().nullable() }).optional(),
  rate_limits: z.record(z.string(), RateWindow).optional(),
});
export type StatuslinePayload = z.infer<typeof StatuslinePayload>;

/** The events the hook client knows; anything else is still forwarded and recorded. */
export const HOOK_EVENTS = [
  'SessionStart',
  'UserPromptSubmit',
  'Stop',
  'StopFailure',
  'Notification',
  'PreCompact',
  'SessionEnd',
  'PostToolUse',
] as const;

/** musher's answer to a forwarded hook: what the thin client prints and how it exits. */
export interface HookAnswer {
  stdout: string;
  exitCode: number;
}
