import type { Band } from '../../core/estimate/band.js';
import { cdAndRun, shellLine as quoteArgv } from '../../core/shell-quote.js';
import { shortModel } from '../../core/exits/words.js';
import { formatShortTime } from '../../core/exits/words.js';
import { modelFitsProvider, modelLadder } from '../../core/picker/models.js';
import { DEFAULT_HARNESS_ID } from '../../harnesses/hook-defaults.js';
import type { HarnessAdapter } from '../../harnesses/port.js';
import { harnessById, sessionHarnesses } from '../../harnesses/registry.js';
import type { DispatchAnswer, DispatchRequest, HarnessCommand, PickerAnswer, PickerHarness, PickerRow } from '../../core/picker/row.js';
import { buildPicker, type PickerBar } from '../../core/picker/rows.js';
import { rowTitle } from '../../core/picker/words.js';
import type { PriceTable } from '../../core/price-table.js';
import type { RosterFile } from '../../core/roster.js';
import type { Task } from '../../core/task/task.js';
import type { Clock } from '../clock.js';
import type { NightJobs } from '../engine/night-jobs.js';
import { nodeBand } from '../../core/routes/band.js';
import { formatUsdShort } from '../../core/format.js';
import type { ForecastSnapshot } from '../forecast/forecaster.js';
import type { EstimateService } from '../estimate/service.js';
import type { Log } from '../log.js';
import type { DispatchedPromptStore } from '../store/dispatched-prompts.js';
import type { SessionRow, SessionStore } from '../store/sessions.js';
import type { TaskStore } from '../store/tasks.js';
import type { WallRow } from '../store/wall-book.js';
import type { PolicyPort } from '../walls/ports.js';

/** The model a harness starts from, by its plan provider, when no session of the task (or of this machine) names one. */
export const DEFAULT_MODELS: Readonly<Record<string, string>> = { anthropic: 'claude-opus-5-5', openai: 'gpt-6-sol' };

/** The harnesses the picker offers: the registry's, in its order, those whose provider has a model to start from. */
function pickerHarnesses(): HarnessAdapter[] {
  return sessionHarnesses().filter((a) => DEFAULT_MODELS[a.provider] !== undefined);
}
/** How long a dispatched command may take to be started and still join its task. */
export const DISPATCH_CLAIM_MS = 60 * 60_000;

/** The estimator, as the picker asks it: the band of a task on a harness and model (null: no band yet). */
export interface EstimatePort {
  band(task: Task, harness: PickerHarness, model: string): Band | null;
}

/**
 * The estimator (musher/estimate) as the picker asks it: the task's measured band on that model, else the labelled
 * prior from the prompt's size and that model's prices (shown "(prior)"), so each model's row is priced on its own.
 */
export function estimatesPort(estimates: Pick<EstimateService, 'estimate'>, seat: string): EstimatePort {
  return {
    band: (task, _harness, model) => {
      const started = task.turns > 1;
      const a = estimates.estimate({ type: task.type, repo: task.repo, model, promptChars: task.promptChars, turns: started ? task.turns : null, seat }, model);
      return a.band ?? a.prior;
    },
  };
}

export interface PickerDeps {
  clock: Clock;
  log: Log;
  timeZone: string;
  /** This seat's handle (left out of the roster's teammates). */
  seat: string;
  tasks: TaskStore;
  sessions: SessionStore;
  /** Prompts handed out by Dispatch/Switch, until a new session sends one (it then joins the task). */
  dispatched: Pick<DispatchedPromptStore, 'put' | 'take'>;
  prices: PriceTable;
  policy: PolicyPort;
  estimate: EstimatePort;
  /** The forecast, fresh: the bars of the running session's account (musher's own with none), dollars to the wall. */
  forecast(runningSessionId: string | null): ForecastSnapshot;
  keyConfigured(provider: 'anthropic' | 'openai'): Promise<boolean>;
  rosterAt(dir: string): RosterFile | null;
  handoffReady(): Promise<boolean>;
  /** Overnight jobs (musher/engine/night-jobs.ts): Queue makes one, sized and capped first. */
  nightJobs: Pick<NightJobs, 'queue'>;
  /** The wall a session is at now, if any. */
  wallOf(sessionId: string): WallRow | null;
  /** Why a harness cannot run here (not installed…); null: it can. */
  harnessMissing?(harness: PickerHarness): Promise<string | null>;
  /** Takes the hand-off exit at a wall, to this teammate. */
  handOff(wall: WallRow, handle: string): Promise<{ ok: boolean; line: string; after?: () => Promise<void> }>;
}

/** What picking a row needs besides the rows: the task, its prompt, where it runs. */
interface Picked {
  task: Task;
  answer: PickerAnswer;
  running: SessionRow | null;
}

/**
 * The dispatcher's picker on musher's side: gathers the task, its sessions, the bars and forecast, the policy and the
 * roster into the pure rows (core/picker), and takes the verb of a row the user chose. sleds never picks a harness by
 * itself: Dispatch and Switch hand back the exact command of the row chosen.
 */
export class PickerService {
  constructor(private readonly d: PickerDeps) {}

  /** The task a just-dispatched prompt belongs to (once, within DISPATCH_CLAIM_MS); null for any other prompt. */
  claimDispatched(prompt: string): string | null {
    return this.d.dispatched.take(prompt.trim(), this.d.clock.now());
  }

  async picker(task: Task): Promise<PickerAnswer> {
    return (await this.pick(task)).answer;
  }

  private async pick(task: Task): Promise<Picked> {
    const now = this.d.clock.now();
    const dir = task.repo;
    const policy = this.d.policy.forDirectory(dir);
    const sessions = this.d.tasks.sessionsOf(task.id).map((id) => this.d.sessions.get(id)).filter((s): s is SessionRow => s !== null);
    const running = sessions.filter((s) => s.endedAt === null && isHarness(s.harness)).sort((a, b) => b.lastSeenAt - a.lastSeenAt)[0] ?? null;
    const atWall = sessions.map((s) => ({ s, wall: this.d.wallOf(s.sessionId) })).find((x) => x.wall !== null);
    const ladders = pickerHarnesses().map((a) => ({
      harness: a.id,
      name: a.displayName,
      provider: a.provider,
      models: modelLadder(this.startModel(a, running), (m) => policy.cheaperModel(m), (m) => this.d.prices.lookup(m, now) !== null),
    }));
    const forecast = this.d.forecast(running?.sessionId ?? null);
    const bars: PickerBar[] = forecast.walls.map((w) => ({
      provider: w.provider,
      window: w.window,
      name: w.name,
      usedPct: w.usedPct,
      resetsAtMs: w.resetsAt,
      dollarsToWallMicros: w.dollarsToWallMicros,
      crossesAtMs: w.forecast.kind === 'eta' && w.forecast.beforeReset ? w.forecast.etaMs : null,
    }));
    const roster = dir ? this.d.rosterAt(dir) : null;
    const teammates = (roster?.teammates ?? []).filter((t) => t.handle.toLowerCase() !== this.d.seat.toLowerCase()).map((t) => ({ handle: t.handle, name: t.name ?? t.handle }));
    const [anthropic, openai, handoffReady] = await Promise.all([this.d.keyConfigured('anthropic'), this.d.keyConfigured('openai'), atWall ? this.d.handoffReady() : Promise.resolve(false)]);
    const view = buildPicker({
      nowMs: now,
      timeZone: this.d.timeZone,
      task: { id: task.id, title: task.title, worth: task.worth, state: task.state },
      worthValueMicros: task.worth !== null ? (policy.worthValues[task.worth] ?? null) : null,
      running: running ? { harness: running.harness as PickerHarness, model: running.model, sessionId: running.sessionId } : null,
      atWall: atWall ? { sessionId: atWall.s.sessionId, wallId: atWall.wall!.wallId } : null,
      ladders,
      bandOf: (harness, model) => {
        try {
          return this.d.estimate.band(task, harness, model);
        } catch (e) {
          this.d.log.error(`picker: the estimate of task ${task.id} on ${model}: ${(e as Error).message}`);
          return null;
        }
      },
      bars,
      overnight: policy.overnightWindow(now, this.d.timeZone),
      keyFor: { anthropic, openai },
      teammates,
      handoffReady,
      cannotRun: await this.cannotRun(),
    });
    return { task, running, answer: { task: { id: task.id, title: task.title, worth: task.worth }, ...view } };
  }

  private async cannotRun(): Promise<Partial<Record<PickerHarness, string>>> {
    const out: Partial<Record<PickerHarness, string>> = {};
    const harnesses = pickerHarnesses().map((a) => a.id);
    const whys = await Promise.all(harnesses.map((h) => this.d.harnessMissing?.(h).catch(() => null) ?? null));
    harnesses.forEach((h, i) => {
      if (whys[i]) out[h] = whys[i]!;
    });
    return out;
  }

  /** The task's own model on its harness; else the last model this machine ran there; else the harness's default. */
  private startModel(harness: HarnessAdapter, running: SessionRow | null): string {
    const fits = (model: string): boolean => modelFitsProvider(model, harness.provider);
    if (running && running.harness === harness.id && running.model && fits(running.model)) return running.model;
    const recent = this.d.sessions.recent(50).find((s) => s.harness === harness.id && s.model && fits(s.model));
    return recent?.model ?? DEFAULT_MODELS[harness.provider]!;
  }

  /** Takes the verb of the row chosen (by its index, or the first row offering a verb) and says what it did. */
  async dispatch(task: Task, req: DispatchRequest): Promise<DispatchAnswer> {
    const picked = await this.pick(task);
    const rows = picked.answer.rows;
    const row = req.row !== undefined ? rows.find((r) => r.index === req.row) : rows.find((r) => r.verb === req.verb);
    if (!row) {
      return req.row !== undefined
        ? { ok: false, line: `task ${task.id} has rows 0–${rows.length - 1}, not ${req.row} — 'sleds pick ${task.id}' shows them` }
        : { ok: false, line: `no row of task ${task.id} offers ${req.verb} now — 'sleds pick ${task.id}' shows why` };
    }
    if (row.verb === '—') return { ok: false, line: `${rowTitle(row)} is not offered: ${row.reason ?? 'no verb'}` };
    switch (row.verb) {
      case 'Dispatch':
      case 'Switch':
        return this.start(picked, row);
      case 'Queue':
        return this.queue(picked, row);
      case 'Hand off':
        return this.handOff(picked, row);
      default:
        return this.offer(picked, row);
    }
  }

  /** The prompt a new session starts with: the request the task came from, else its title. */
  private promptOf(task: Task): string {
    return this.d.tasks.promptOf(task.id) ?? task.title;
  }

  private command(picked: Picked, row: PickerRow): HarnessCommand {
    // The harness's binary, as a person runs it (the row's harness is one of the registry's: the picker offers no other).
    const found = harnessById(row.harness);
    if (!found.ok) throw new Error(found.error);
    const program = found.adapter.binary.name;
    const model = row.model ? ['--model', row.model] : [];
    // `--` keeps a prompt that starts with "-" a prompt (shared/facts/claude-code.md; codex parses its argv the same way).
    return { argv: [program, ...model, '--', this.promptOf(picked.task)], cwd: picked.task.repo ?? picked.running?.cwd ?? null };
  }

  private start(picked: Picked, row: PickerRow): DispatchAnswer {
    const command = this.command(picked, row);
    this.d.dispatched.put(this.promptOf(picked.task).trim(), picked.task.id, this.d.clock.now() + DISPATCH_CLAIM_MS);
    const how = row.verb === 'Switch' ? `Switch task ${picked.task.id} to ${rowTitle(row)}` : `Start task ${picked.task.id} on ${rowTitle(row)}`;
    this.d.log.info(`picker: ${how}`);
    return { ok: true, line: `${how}: ${shellLine(command)}`, command };
  }

  /** Queue: the task as an overnight job (a one-node overnight route the engine runs in the window), sized and capped first. */
  private async queue(picked: Picked, row: PickerRow): Promise<DispatchAnswer> {
    const now = this.d.clock.now();
    const made = await this.d.nightJobs.queue({
      cwd: picked.task.repo ?? picked.running?.cwd ?? null,
      title: picked.task.title,
      brief: this.promptOf(picked.task),
      harness: row.harness,
      model: row.model,
      band: row.band ? nodeBand({ band: row.band, prior: null }) : null,
      capMicros: null,
      resume: null,
      from: 'the picker',
      raise: "a cap in the policy's overnight block, e.g. cap:",
      wallId: null,
    });
    if (!made.ok) return { ok: false, line: made.line };
    const { window } = made;
    const span = `${formatShortTime(window.startMs, this.d.timeZone)}–${formatShortTime(window.endMs, this.d.timeZone)}`;
    const band = `${formatUsdShort(Math.round(made.band.lowUsd * 1e6))}–${formatUsdShort(Math.round(made.band.highUsd * 1e6)).slice(1)}`;
    return {
      ok: true,
      line: `Queued task ${picked.task.id} for ${now > window.startMs ? 'now, in the' : 'the'} overnight window (${span}) on the batch tier at ½ price${row.model ? ` on ${shortModel(row.model)}` : ''}, ${band} with a cap of ${formatUsdShort(made.capMicros)}: job ${made.job}. 'sleds queue' shows it; 'sleds queue cancel ${made.job}' undoes it.`,
    };
  }

  private async handOff(picked: Picked, row: PickerRow): Promise<DispatchAnswer> {
    const at = this.d.tasks
      .sessionsOf(picked.task.id)
      .map((id) => this.d.wallOf(id))
      .find((w): w is WallRow => w !== null);
    if (!at) return { ok: false, line: `task ${picked.task.id} has no session at a wall: a hand-off carries a session at its wall — offer it to ${row.seat} instead` };
    const taken = await this.d.handOff(at, row.seat);
    if (taken.after) void taken.after().catch((e: Error) => this.d.log.error(`picker: hand-off of ${picked.task.id}: ${e.message}`));
    return { ok: taken.ok, line: taken.line.replace(/^sled: /, '') };
  }

  private offer(picked: Picked, row: PickerRow): DispatchAnswer {
    const t = picked.task;
    const size = row.band ? `sleds sizes it ${row.bandText}${row.model ? ` on ${shortModel(row.model)}` : ''}` : `no band yet${row.model ? ` on ${shortModel(row.model)}` : ''}`;
    const start = shellLine(this.command(picked, { ...row, harness: row.harness ?? DEFAULT_HARNESS_ID }));
    if (row.kind === 'teammate') {
      const mate = picked.task.repo ? this.d.rosterAt(picked.task.repo)?.teammates.find((m) => m.handle === row.seat) : undefined;
      const to = mate?.slack ? `${row.seat} (Slack ${mate.slack})` : row.seat;
      return { ok: true, line: `Send ${to}: "Can you take task ${t.id}, ${t.title}? ${size}. To start: ${start}"` };
    }
    return { ok: true, line: `Post to the team: "Task ${t.id}, ${t.title}, needs a person with the agent. ${size}. To start: ${start}"` };
  }
}

function isHarness(h: string): h is PickerHarness {
  return pickerHarnesses().some((a) => a.id === h);
}

/** For reading only (the command runs from its argv, never through a shell): each argument quoted as a POSIX shell would need. */
export function shellLine(c: HarnessCommand): string {
  return c.cwd ? cdAndRun(c.cwd, c.argv) : quoteArgv(c.argv);
}
