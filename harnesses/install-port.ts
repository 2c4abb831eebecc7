import type { SledsPaths } from '../core/paths.js';
import type { InstallState } from './install-state.js';

/**
 * What `sleds install`, `sleds uninstall` and `sleds doctor` ask of each harness: one installer per harness
 * (harnesses/<id>/install.ts), run in turn by cli/install.ts and cli/doctor.ts, which never name a harness. The
 * HarnessAdapter port takes this object as its install half.
 */

type Env = Record<string, string | undefined>;

export type InstallStepStatus = 'ok' | 'fail' | 'warn' | 'info';

/** One report line: ✓ ok, ✗ fail (with what to do next), ! warn, · info. */
export interface InstallStep {
  id: string;
  status: InstallStepStatus;
  message: string;
  fix?: string;
  detail?: Record<string, unknown>;
}

/** Where an installer reports, one line per step (cli/install-report.ts prints them, or one JSON report). */
export interface ReportSink {
  add(step: InstallStep): unknown;
  ok(id: string, message: string, detail?: Record<string, unknown>): unknown;
  fail(id: string, message: string, fix: string, detail?: Record<string, unknown>): unknown;
  warn(id: string, message: string, fix?: string, detail?: Record<string, unknown>): unknown;
  info(id: string, message: string, detail?: Record<string, unknown>): unknown;
  readonly failed: boolean;
}

/** install-state.json for this run: what the last install left, and the one this install is building. */
export interface InstallStateSlot {
  /** As read before the first installer ran (null: none, or unreadable). */
  readonly prior: InstallState | null;
  /** Set by the first installer (it owns the file's top-level fields); the others add their own section to it. */
  current: InstallState | null;
  /** Writes `current` when it changed since the last write. Throws when the file cannot be written. */
  persist(): void;
}

interface BaseContext {
  env: Env;
  home: string;
  paths: SledsPaths;
  /** The CLI entry that runs sleds (dist/cli/main.js, resolved). */
  cliMain: string;
  report: ReportSink;
  now(): Date;
}

export interface HarnessInstallContext extends BaseContext {
  /** This sleds package's root (realpath), and its version. */
  packageRoot: string;
  sledsVersion: string;
  /** The node that runs sleds' hooks and statusline. */
  nodePath: string;
  state: InstallStateSlot;
}

export interface HarnessUninstallContext extends BaseContext {
  /** The package root install recorded, else the one this CLI runs from. */
  packageRoot: string;
  /** The install state, when there is one. */
  state: InstallState | null;
}

export interface HarnessDoctorContext extends BaseContext {
  /** This sleds package's root, when it can be found. */
  packageRoot: string | null;
}

export interface InstallOutcome {
  /** The install cannot go on (this harness's settings cannot be read or written): the steps after it are skipped. */
  stop?: boolean;
  /** Fields for the top level of the --json report. */
  summary?: Record<string, unknown>;
  /** Lines for the end of the report, after musher has started (a restart to do, say). */
  closing?: InstallStep[];
}

export interface UninstallOutcome {
  summary?: Record<string, unknown>;
  /** Lines for the end of the report, when nothing failed (backups that stay, say). */
  whenClean?: InstallStep[];
}

export interface HarnessInstaller {
  /** The harness, as its folder under harnesses/ is named. */
  readonly id: string;
  /** The files of this package the harness loads (checked before anything is installed), and those missing. */
  packageFiles(packageRoot: string): { missing: string[]; error: string | null };
  install(ctx: HarnessInstallContext): Promise<InstallOutcome>;
  uninstall(ctx: HarnessUninstallContext): Promise<UninstallOutcome>;
  doctor(ctx: HarnessDoctorContext): Promise<void>;
}
