import type { InstallStep, InstallStepStatus, ReportSink } from '../harnesses/install-port.js';

/**
 * One line per step for install, uninstall and doctor: ✓ done, ✗ failed (with what to do next), ! works but worth
 * knowing, · for information. `--json` prints one JSON report at the end instead. Colour only on a terminal and
 * never with NO_COLOR.
 */
export type StepStatus = InstallStepStatus;

/** A step as the harness installers report it (harnesses/install-port.ts). */
export type Step = InstallStep;

const SYMBOL: Record<StepStatus, string> = { ok: '✓', fail: '✗', warn: '!', info: '·' };
const COLOUR: Record<StepStatus, string> = { ok: '32', fail: '31', warn: '33', info: '2' };

export function useColour(stream: NodeJS.WriteStream = process.stdout, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return stream.isTTY === true;
}

export class Reporter implements ReportSink {
  readonly steps: Step[] = [];
  private readonly colour: boolean;

  constructor(
    private readonly json: boolean,
    private readonly out: NodeJS.WriteStream = process.stdout,
  ) {
    this.colour = !json && useColour(out);
  }

  add(step: Step): Step {
    this.steps.push(step);
    if (!this.json) this.out.write(`${this.format(step)}\n`);
    return step;
  }

  ok(id: string, message: string, detail?: Record<string, unknown>): Step {
    return this.add({ id, status: 'ok', message, ...(detail ? { detail } : {}) });
  }

  fail(id: string, message: string, fix: string, detail?: Record<string, unknown>): Step {
    return this.add({ id, status: 'fail', message, fix, ...(detail ? { detail } : {}) });
  }

  warn(id: string, message: string, fix?: string, detail?: Record<string, unknown>): Step {
    return this.add({ id, status: 'warn', message, ...(fix ? { fix } : {}), ...(detail ? { detail } : {}) });
  }

  info(id: string, message: string, detail?: Record<string, unknown>): Step {
    return this.add({ id, status: 'info', message, ...(detail ? { detail } : {}) });
  }

  get failed(): boolean {
    return this.steps.some((s) => s.status === 'fail');
  }

  /**
   * Prints the JSON report (in --json mode) and returns the exit code: 0, or 1 if a step failed. A failed report
   * carries `error` like every --json failure: the failing steps in one line, each with its fix.
   */
  finish(extra: Record<string, unknown> = {}): number {
    const failing = this.steps.filter((s) => s.status === 'fail');
    const error = failing.length === 0 ? {} : { error: failing.map((s) => (s.fix ? `${s.message} — ${s.fix}` : s.message)).join('; ') };
    if (this.json) this.out.write(`${JSON.stringify({ ok: failing.length === 0, ...error, ...extra, steps: this.steps })}\n`);
    return failing.length > 0 ? 1 : 0;
  }

  private format(step: Step): string {
    const sym = this.colour ? `\u001b[${COLOUR[step.status]}m${SYMBOL[step.status]}\u001b[0m` : SYMBOL[step.status];
    return step.fix ? `${sym} ${step.message} — ${step.fix}` : `${sym} ${step.message}`;
  }
}
