import { execFile } from 'node:child_process';
import { notInstalledWords, notLoggedInWords } from '../../core/picker/words.js';
import type { PickerHarness } from '../../core/picker/row.js';
import type { Clock } from '../clock.js';
import { builtInHarness, knownHarnessId, type HarnessId } from '../../harnesses/registry.js';
import { harnessBinary, type Binaries } from '../resume/resume-job.js';

/** How long an answer of `claude auth status` / `codex login status` is reused (each costs a process start). */
const READY_TTL_MS = 60_000;
const STATUS_TIMEOUT_MS = 5_000;

export interface HarnessReadyDeps {
  clock: Clock;
  binaries(): Binaries;
  /** Runs a program (argv, no shell); the exit code and what it printed. Default: execFile. */
  run?(file: string, args: string[]): Promise<{ code: number; out: string }>;
}

/**
 * Whether each harness can run on this machine, as the picker needs to know before it offers a row: installed (the
 * binary musher would run), and logged in, by the harness's own word (measured: `claude auth status` prints JSON
 * with `loggedIn` and exits 1 when false; `codex login status` prints "Not logged in" and exits 1). Anything else —
 * a timeout, an older version without the command — counts as ready: a row is hidden only on a clear answer.
 */
export class HarnessReadiness {
  private readonly cache = new Map<string, { at: number; why: string | null }>();
  constructor(private readonly d: HarnessReadyDeps) {}

  async why(harness: PickerHarness): Promise<string | null> {
    const bins = this.d.binaries();
    const known = knownHarnessId(harness);
    if (!known) return `sleds knows no harness '${harness}'`;
    const adapter = builtInHarness(known);
    const bin = harnessBinary(bins, known);
    if (!bin) return notInstalledWords(adapter.displayName, adapter.binary.name);
    const now = this.d.clock.now();
    const hit = this.cache.get(bin);
    if (hit && now - hit.at < READY_TTL_MS) return hit.why;
    const why = (await this.loggedOut(known, bin)) ? notLoggedInWords(adapter.displayName, adapter.login.hint ?? null) : null;
    this.cache.set(bin, { at: now, why });
    return why;
  }

  private async loggedOut(harness: HarnessId, bin: string): Promise<boolean> {
    const run = this.d.run ?? runProgram;
    const { login } = builtInHarness(harness);
    const r = await run(bin, [...login.statusArgs]).catch(() => null);
    if (!r || r.code === 0) return false;
    return login.loggedOut(r.out);
  }
}

function runProgram(file: string, args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: STATUS_TIMEOUT_MS, maxBuffer: 256 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, out: `${stdout}\n${stderr}`.trim() });
    });
  });
}
