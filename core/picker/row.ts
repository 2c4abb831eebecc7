import { z } from 'zod';
import { Band } from '../estimate/band.js';

/**
 * The dispatcher's picker, as the wire carries it: one row per seat a task could go to (this seat × harness × model,
 * the overnight batch tier, a teammate, a person with the agent), each with its band, fit, headroom, the wall
 * forecast against the band, and the verb that takes it. Pure shapes; rows.ts builds them.
 */

export const PICKER_VERBS = ['Dispatch', 'Switch', 'Queue', 'Hand off', 'Offer', '—'] as const;
export const PickerVerb = z.enum(PICKER_VERBS);
export type PickerVerb = z.infer<typeof PickerVerb>;

/** here: this seat on a harness and model · overnight: the batch tier · teammate: someone on the roster · person: a person working with the agent. */
export const SEAT_KINDS = ['here', 'overnight', 'teammate', 'person'] as const;
export const SeatKind = z.enum(SEAT_KINDS);
export type SeatKind = z.infer<typeof SeatKind>;

/** A harness's registry id (core names none: musher passes the adapters' ids, names and providers). */
export const PickerHarness = z.string().min(1);
export type PickerHarness = z.infer<typeof PickerHarness>;

export const PickerRow = z.looseObject({
  /** Its place in the list: `POST /v1/tasks/<id>/dispatch {row}` names it. */
  index: z.number().int().nonnegative(),
  kind: SeatKind,
  /** Who or what does the work: "you", "overnight batch", "dana", "a person with the agent". */
  seat: z.string(),
  harness: PickerHarness.nullable(),
  /** The harness's display name (its adapter's), for the row's title; absent from an older musher. */
  harnessName: z.string().nullish(),
  model: z.string().nullable(),
  band: Band.nullable(),
  /** "$4–11 · 20–55 min", "$2–6 (prior)", or "no band yet". */
  bandText: z.string(),
  /** "4 of 5 in band", or null when nothing says. */
  fit: z.string().nullable(),
  /** Percent of the binding bar left for this row's provider; null where no bar applies (the key, a teammate). */
  headroomPct: z.number().nullable(),
  /** "62% of the bar left", "off the bar (batch tier)", "their own bars". */
  headroom: z.string(),
  /** True: the dollars to the wall are below the band's high end. Null: no band or no calibrated wall to compare. */
  crosses: z.boolean().nullable(),
  /** "crosses before it lands", "lands before the wall", or null. */
  wall: z.string().nullable(),
  /** The task's worth ÷ the band's high end; null without both. */
  worthRatio: z.number().nullable(),
  verb: PickerVerb,
  /** Why the verb is "—", or a note on the verb ("lands by 6:00am"). */
  reason: z.string().nullable(),
});
export type PickerRow = z.infer<typeof PickerRow>;

/** `GET /v1/tasks/<id>/picker`. */
export const PickerAnswer = z.looseObject({
  task: z.looseObject({ id: z.string(), title: z.string(), worth: z.string().nullable() }),
  rows: z.array(PickerRow),
  /** Set when the task is held: "not worth doing until someone states a worth". */
  held: z.string().nullable(),
  /** "$6 more; you will cross at 3:40 pm EST", before starting. */
  wallLine: z.string().nullable(),
  /** A short paragraph of the best rows, for a person or a model (MCP, the tracker comment). */
  text: z.string(),
});
export type PickerAnswer = z.infer<typeof PickerAnswer>;

/** `POST /v1/tasks/<id>/dispatch`: the row to take, or the first row offering a verb. */
export const DispatchRequest = z
  .looseObject({ row: z.number().int().positive().optional(), verb: PickerVerb.exclude(['—']).optional() })
  .refine((r) => (r.row === undefined) !== (r.verb === undefined), 'name a row or a verb, not both');
export type DispatchRequest = z.infer<typeof DispatchRequest>;

/** A harness command to run: program first, arguments as an array (never a shell line), in a folder. */
export const HarnessCommand = z.object({ argv: z.array(z.string()).min(1), cwd: z.string().nullable() });
export type HarnessCommand = z.infer<typeof HarnessCommand>;

export const DispatchAnswer = z.looseObject({
  ok: z.boolean(),
  /** What was done, or why not, in one line. */
  line: z.string(),
  /** Dispatch/Switch: the harness command the user chose; the CLI opens it in a new tmux window when it runs in one. */
  command: HarnessCommand.optional(),
});
export type DispatchAnswer = z.infer<typeof DispatchAnswer>;
