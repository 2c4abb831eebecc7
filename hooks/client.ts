import { homedir } from 'node:os';
import { resolvePaths } from '../core/paths.js';
import { BARE_BLOCK_HARNESSES, hookHarness } from '../harnesses/hook-defaults.js';
import type { HookAnswer } from '../core/wire.js';
import { MusherUnreachable, requestMusher } from './musher-client.js';
import { budgetFor } from './budget.js';
import { writeSpool, type SpoolEnvelope } from './spool.js';
import { nobodyListens, startMusherDetached } from './start-musher.js';
import { newEventId, readStdinSync, writeStdoutSync } from './stdin.js';

/**
 * `sleds hook <Event>`: forward stdin to musher untouched and print its answer in the harness's dialect.
 * Fails open: when musher is away the event is spooled, musher is started, and the harness carries on.
 */

/** Events whose process the harness may kill as it exits: spool them before anything else (facts §3). */
const SPOOL_FIRST = new Set(['StopFailure', 'SessionEnd']);

/** A typed /sled must not reach the model when musher cannot answer it: block it with a line that says why. */
function awayAnswer(event: string, harness: string, raw: string): string {
  if (event !== 'UserPromptSubmit') return '';
  let prompt = '';
  try {
    prompt = String((JSON.parse(raw) as { prompt?: unknown }).prompt ?? '');
  } catch {
    // Not JSON: no /sled prompt to answer; the hook carries on (hooks fail open).
    return '';
  }
  if (!/^\s*\/?sled(:sled)?(\s|$)/i.test(prompt)) return '';
  const reason = 'sleds: musher is not running yet; it is starting now. Type the sled command again in a moment (sleds doctor tells more).';
  // Some harnesses fail a hook whose output has a field they do not know: they get the bare decision (their adapter's block).
  if (BARE_BLOCK_HARNESSES.includes(harness)) return JSON.stringify({ decision: 'block', reason });
  return JSON.stringify({ decision: 'block', reason, hookSpecificOutput: { hookEventName: 'UserPromptSubmit', suppressOriginalPrompt: true } });
}

/** `harness`: the `--harness` value; without one, the default harness (harnesses/hook-defaults.ts). */
export async function runHook(event: string, harnessFlag: string | undefined, cliMain: string): Promise<number> {
  const harness = hookHarness(harnessFlag);
  const raw = readStdinSync().toString('utf8');
  const paths = resolvePaths(process.env, homedir());
  const envelope: SpoolEnvelope = {
    eventId: newEventId(),
    event,
    harness,
    receivedAt: Date.now(),
    raw,
  };
  let spooled = false;
  const spool = (): void => {
    if (spooled) return;
    try {
      writeSpool(paths.spoolDir, envelope);
      spooled = true;
    } catch (e) {
      process.stderr.write(`sleds: could not spool the ${event} event: ${(e as Error).message}\n`);
    }
  };
  if (SPOOL_FIRST.has(event)) spool();
  try {
    const res = await requestMusher(
      paths.socketFile,
      'POST',
      `/v1/hook/${encodeURIComponent(event)}`,
      raw,
      {
        'content-type': 'application/json',
        'x-sleds-event-id': envelope.eventId,
        'x-sleds-received-at': String(envelope.receivedAt),
        'x-sleds-harness': harness,
        'x-sleds-spooled': spooled ? '1' : '0',
        // Set in a session sleds resumed past a wall (on the gateway, or at a moved time): its prompts are the
        // exit at work, not prompts at the wall.
        ...(process.env.SLEDS_WALL ? { 'x-sleds-wall': process.env.SLEDS_WALL } : {}),
        // The tmux pane the session runs in (tmux sets both for every process in a pane): an exit can restart the
        // session in place there. TMUX is "<server socket>,<pid>,<session>".
        ...(process.env.TMUX && process.env.TMUX_PANE ? { 'x-sleds-tmux': process.env.TMUX, 'x-sleds-tmux-pane': process.env.TMUX_PANE } : {}),
      },
      budgetFor(event, raw),
    );
    if (res.status !== 200) throw new Error(`musher answered HTTP ${res.status}`);
    const answer = JSON.parse(res.body) as HookAnswer;
    if (answer.stdout) writeStdoutSync(answer.stdout);
    return answer.exitCode;
  } catch (e) {
    spool();
    // SLEDS_NO_AUTOSTART=1: the user runs musher themselves (a service manager, or tests that watch the spool).
    if (e instanceof MusherUnreachable && nobodyListens(e.reason) && !process.env.SLEDS_NO_AUTOSTART) await startMusherDetached(cliMain);
    const away = awayAnswer(event, harness, raw);
    if (away) writeStdoutSync(away);
    return 0;
  }
}
