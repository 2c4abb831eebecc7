import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { sleds, startMusher, status, stopMusher, waitFor, type SledsWorld } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';

const world = useWorlds();

const prompt = (text: string, session = 'sess-1') =>
  JSON.stringify({ session_id: session, transcript_path: '/nowhere/x.jsonl', cwd: '/tmp/proj', hook_event_name: 'UserPromptSubmit', prompt: text });

function spoolFiles(w: SledsWorld): string[] {
  return existsSync(w.spoolDir) ? readdirSync(w.spoolDir).filter((n) => !n.startsWith('.')) : [];
}

describe('the hook path', () => {
  it('with musher stopped, a hook carries on, spools the event, and musher ingests it on start', async () => {
    const w = world({ SLEDS_NO_AUTOSTART: '1' });
    const r = await sleds(w, ['hook', 'UserPromptSubmit'], prompt('fix the flaky test'));
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    const files = spoolFiles(w);
    expect(files).toHaveLength(1);
    expect(JSON.parse(readFileSync(`${w.spoolDir}/${files[0]}`, 'utf8'))).toMatchObject({ event: 'UserPromptSubmit', raw: prompt('fix the flaky test') });

    await startMusher(w);
    const s = await waitFor('the spooled event to be ingested', async () => {
      const st = await status(w);
      return st.hookEvents.UserPromptSubmit === 1 ? st : null;
    });
    expect(s.sessions.map((x) => x.sessionId)).toContain('sess-1');
    expect(spoolFiles(w)).toHaveLength(0);
  });

  it('a hook that finds musher down starts it itself', async () => {
    const w = world();
    const r = await sleds(w, ['hook', 'SessionStart'], JSON.stringify({ session_id: 'auto-1', hook_event_name: 'SessionStart', source: 'startup', cwd: '/tmp' }));
    expect(r.code).toBe(0);
    const s = await waitFor('musher to start and drain the spool', async () => {
      const st = await status(w);
      return st.hookEvents.SessionStart === 1 ? st : null;
    });
    expect(s.sessions[0]?.sessionId).toBe('auto-1');
  });

  it('a typed /sled is blocked while musher is away, so it never reaches the model', async () => {
    const w = world({ SLEDS_NO_AUTOSTART: '1' });
    const r = await sleds(w, ['hook', 'UserPromptSubmit'], prompt('/sled status'));
    expect(r.code).toBe(0);
    const answer = JSON.parse(r.stdout);
    expect(answer.decision).toBe('block');
    expect(answer.reason).toMatch(/musher is not running/);
  });

  it('answers /sled status, sled status and unknown verbs in the prompt; ordinary prompts pass', async () => {
    const w = world();
    await startMusher(w);
    const card = JSON.parse((await sleds(w, ['hook', 'UserPromptSubmit'], prompt('/sled status'))).stdout);
    expect(card).toMatchObject({ decision: 'block', hookSpecificOutput: { hookEventName: 'UserPromptSubmit', suppressOriginalPrompt: true } });
    expect(card.continue).toBeUndefined();
    expect(card.reason).toContain('Today: $0.00');
    const bare = JSON.parse((await sleds(w, ['hook', 'UserPromptSubmit'], prompt('sled status'))).stdout);
    expect(bare.reason).toContain('seat status');
    const unknown = JSON.parse((await sleds(w, ['hook', 'UserPromptSubmit'], prompt('/sled frobnicate'))).stdout);
    expect(unknown.reason).toBe("sled: unknown verb 'frobnicate' — try /sled status or /sled help");
    const ordinary = await sleds(w, ['hook', 'UserPromptSubmit'], prompt('add a retry to the uploader'));
    expect(ordinary).toMatchObject({ code: 0, stdout: '' });
  });

  it('a StopFailure rate_limit becomes a wall with its window and reset', async () => {
    const w = world();
    await startMusher(w);
    const r = await sleds(w, ['hook', 'StopFailure'], JSON.stringify({ session_id: 'wall-1', hook_event_name: 'StopFailure', error: 'rate_limit', last_assistant_message: "You've hit your 5-hour limit · resets 8:55pm (UTC)" }));
    expect(r.code).toBe(0);
    const s = await waitFor('the wall', async () => ((await status(w)).walls.length ? status(w) : null));
    expect(s.walls[0]).toMatchObject({ source: 'hook:StopFailure', sessionId: 'wall-1', window: 'five_hour' });
    expect(new Date(s.walls[0]!.resetsAt!).toISOString()).toMatch(/T20:55:00/);
    // Spooled first and delivered live: still one event, one wall.
    expect(s.hookEvents.StopFailure).toBe(1);
  });

  it('malformed hook JSON is one error line in the log and nothing else is lost', async () => {
    const w = world();
    await startMusher(w);
    expect((await sleds(w, ['hook', 'Stop'], '{"session_id": "x", trunc')).code).toBe(0);
    expect((await sleds(w, ['hook', 'Stop'], JSON.stringify({ session_id: 'good-1', hook_event_name: 'Stop' }))).code).toBe(0);
    const s = await status(w);
    expect(s.hookEvents.Stop).toBe(1);
    const errors = readFileSync(w.logFile, 'utf8').split('\n').filter((l) => l.includes(' ERROR '));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/hook Stop: malformed JSON/);
  });
});

describe('musher', () => {
  it('listens on a 0600 socket and runs one instance per user', async () => {
    const w = world();
    await startMusher(w);
    expect(statSync(w.socket).mode & 0o777).toBe(0o600);
    const second = await sleds(w, ['musher', 'run']);
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/already running/);
    const st = await sleds(w, ['musher', 'status', '--json']);
    expect(JSON.parse(st.stdout)).toMatchObject({ running: true });
    await stopMusher(w);
    const down = await sleds(w, ['musher', 'status']);
    expect(down.code).toBe(1);
    expect(down.stdout).toMatch(/not running — start it with 'sleds musher start'/);
    expect(existsSync(w.socket)).toBe(false);
  });
});
