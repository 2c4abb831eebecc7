import { z } from 'zod';
import { illegal, targetOf, type LifeCycle, type StepResult } from './machine.js';

/**
 * A hand-off (SPEC.md § handoff). Sent: sending → sent → picked_up, or sending → failed. Received: picking (a pickup
 * under way, its note the journal of what it wrote) → received → resumed | refused, or picking → undone (the row is
 * removed: as if the pickup never began). Pruned from the remote, any but a pickup under way becomes expired.
 */
export const HANDOFF_STATES = ['sending', 'sent', 'failed', 'picked_up', 'expired', 'picking', 'received', 'resumed', 'refused', 'undone'] as const;
export type HandoffLifeState = (typeof HANDOFF_STATES)[number];

export const HANDOFF_EVENTS = ['pushed', 'push-failed', 'picked-up', 'expire', 'pickup-finished', 'pickup-undone', 'resume', 'refuse'] as const;
export type HandoffEventType = (typeof HANDOFF_EVENTS)[number];

export const HandoffLifeEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('pushed'), ref: z.string() }),
  z.object({ type: z.literal('push-failed'), error: z.string() }),
  z.object({ type: z.literal('picked-up'), by: z.string() }),
  z.object({ type: z.enum(['expire', 'pickup-finished', 'pickup-undone', 'resume', 'refuse']) }),
]);
export type HandoffLifeEvent = z.infer<typeof HandoffLifeEvent>;

export interface HandoffLife {
  state: HandoffLifeState;
  pickedUpBy: string | null;
  pickedUpAt: number | null;
}

export const HANDOFF_CYCLE: LifeCycle<HandoffLifeState, HandoffEventType> = {
  kind: 'handoff',
  states: HANDOFF_STATES,
  events: HANDOFF_EVENTS,
  terminal: ['expired', 'undone'],
  table: {
    sending: { pushed: 'sent', 'push-failed': 'failed', expire: 'expired' },
    sent: { 'picked-up': 'picked_up', expire: 'expired' },
    failed: { expire: 'expired' },
    picked_up: { expire: 'expired' },
    expired: {},
    picking: { 'pickup-finished': 'received', 'pickup-undone': 'undone' },
    received: { resume: 'resumed', refuse: 'refused', expire: 'expired' },
    resumed: { expire: 'expired' },
    refused: { expire: 'expired' },
    undone: {},
  },
};

export function stepHandoff(s: HandoffLife, e: HandoffLifeEvent, now: number): StepResult<HandoffLife, never> {
  const to = targetOf(HANDOFF_CYCLE, s.state, e.type);
  if (to === null) return illegal('handoff', s.state, e.type, s.state === 'picking' ? 'a pickup is under way' : undefined);
  if (e.type === 'picked-up') return { ok: true, state: { ...s, state: to, pickedUpBy: e.by, pickedUpAt: now }, effects: [] };
  return { ok: true, state: { ...s, state: to }, effects: [] };
}
