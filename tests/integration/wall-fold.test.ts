import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, sleds, startMusher, status, waitFor, type SledsWorld } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';

/**
 * One limit, one wall (issue 12, point 4): the StopFailure hook's generic text ("You've hit your limit · resets
 * 9:24pm (UTC)": no window, the reset rounded down to the minute) and the transcript's limit record (exact reset,
 * `five_hour`) are two signals of the same limit on the same session, whatever order and however close they come.
 */
const newWorld = useWorlds();

const SESSION = '5f0c1d2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f';
const FIXTURE = 'tests/fixtures/claude/projects/-path-to-proj/1098c3a4-5b2e-4f7a-9d61-0c3e8a7b2f45.jsonl';

/** A reset two hours out, 37 s past the minute, as the transcript says it (epoch ms) and as Claude Code prints it. */
function aReset(): { exactMs: number; text: string } {
  const minute = Math.floor((Date.now() + 2 * 3_600_000) / 60_000) * 60_000;
  const d = new Date(minute);
  const h = d.getUTCHours() % 12 || 12;
  const text = `You've hit your limit · resets ${h}:${String(d.getUTCMinutes()).padStart(2, '0')}${d.getUTCHours() < 12 ? 'am' : 'pm'} (UTC)`;
  return { exactMs: minute + 37_000, text };
}

/** The fixture's usage-limit record, moved to this session, now, and the given exact reset. */
function limitRecord(exactMs: number): string {
  const line = readFileSync(join(REPO_ROOT, FIXTURE), 'utf8')
    .split('\n')
    .find((l) => l.includes('"usage_limit_reached"'))!;
  const r = JSON.parse(line) as Record<string, any>;
  r.sessionId = SESSION;
  r.cwd = '/tmp';
  r.timestamp = new Date().toISOString();
  r.uuid = 'b1f6e7d8-9102-43b4-9fc0-4b5c6d7e8f91';
  r.message.id = 'msg-limit-fold';
  r.requestId = 'req_fold';
  r.apiErrorParams.rate_limit_info.resetsAt = exactMs / 1000;
  r.quotaLimits.resetsAt = exactMs / 1000;
  return `${JSON.stringify(r)}\n`;
}

function transcriptPath(w: SledsWorld): string {
  const dir = join(w.claudeDir, 'projects', '-tmp');
  mkdirSync(dir, { recursive: true });
  return join(dir, `${SESSION}.jsonl`);
}

const hook = (w: SledsWorld, event: string, body: Record<string, unknown>) =>
  sleds(w, ['hook', event], JSON.stringify({ session_id: SESSION, cwd: '/tmp', hook_event_name: event, transcript_path: transcriptPath(w), ...body }));

/** A repository with a roster and a changed file: opening a wall there asks git who owns the change (it takes a while). */
function repoWithRoster(w: SledsWorld): string {
  const repo = join(w.root, 'shop');
  mkdirSync(join(repo, '.sleds'), { recursive: true });
  execFileSync('git', ['init', '-q'], { cwd: repo });
  writeFileSync(join(repo, '.sleds', 'roster.yml'), ['teammates:', '  - handle: dana', '    areas: ["**"]', '  - handle: sam', '    areas: ["src/**"]', ''].join('\n'));
  mkdirSync(join(repo, 'src'));
  writeFileSync(join(repo, 'src', 'cart.ts'), 'export {};\n');
  return repo;
}

/** Both signals have been recorded and the walls they led to have settled (their snapshots written). */
async function settled(w: SledsWorld) {
  return waitFor('both signals recorded and every wall snapshotted', async () => {
    const s = await status(w);
    const sources = new Set(s.walls.filter((x) => x.sessionId === SESSION).map((x) => x.source));
    const snapshotsDone = s.wallBook.every((b) => countEvents(w, b.wallId, 'snapshot') > 0);
    return sources.has('hook:StopFailure') && sources.has('claude-transcript') && s.wallBook.length > 0 && snapshotsDone ? s : null;
  });
}

function countEvents(w: SledsWorld, wallId: string, kind: string): number {
  const db = new Database(join(w.sledsHome, 'data', 'sleds.db'), { readonly: true });
  try {
    return (db.prepare(`SELECT COUNT(*) AS n FROM wall_events WHERE wall_id = ? AND kind = ?`).get(wallId, kind) as { n: number }).n;
  } finally {
    db.close();
  }
}

async function expectOneWall(w: SledsWorld, exactMs: number): Promise<void> {
  const s = await settled(w);
  expect(s.wallBook.map((b) => `${b.window} ${b.state}`)).toEqual(['five_hour open']);
  const wall = s.wallBook[0]!;
  // The precise reset wins, and the window the transcript named.
  expect(wall.resetsAt).toBe(exactMs);
  expect(countEvents(w, wall.wallId, 'snapshot')).toBe(1);
  // Resolving it leaves no second wall waiting for a choice.
  const held = await hook(w, 'UserPromptSubmit', { prompt: '/sled 2' });
  expect(JSON.parse(held.stdout).reason).toMatch(/hold/i);
  const after = await status(w);
  expect(after.wallBook.filter((b) => b.state === 'open')).toEqual([]);
}

describe('one limit, one wall', () => {
  it('a StopFailure spooled while musher was away and the transcript record read at its start fold into one wall', async () => {
    const w = newWorld({ SLEDS_NO_AUTOSTART: '1', SLEDS_SEAT: 'dana' });
    const { exactMs, text } = aReset();
    writeFileSync(transcriptPath(w), limitRecord(exactMs));
    const repo = repoWithRoster(w);
    // No musher: the hook spools the event.
    const spooled = await hook(w, 'StopFailure', { error: 'rate_limit', last_assistant_message: text, cwd: repo });
    expect(spooled.code).toBe(0);
    await startMusher(w);
    await expectOneWall(w, exactMs);
  });

  it('the transcript record and the StopFailure hook arriving together fold into one wall (transcript first)', async () => {
    const w = newWorld({ SLEDS_NO_AUTOSTART: '1', SLEDS_SEAT: 'dana' });
    await startMusher(w);
    const { exactMs, text } = aReset();
    const path = transcriptPath(w);
    writeFileSync(path, '');
    const repo = repoWithRoster(w);
    await hook(w, 'SessionStart', { source: 'startup', model: 'claude-opus-5-5', cwd: repo });
    appendFileSync(path, limitRecord(exactMs));
    // The statusline kicks the transcript's reader; the hook goes at the same moment.
    await Promise.all([
      sleds(w, ['statusline'], JSON.stringify({ session_id: SESSION, transcript_path: path, cwd: repo, model: { display_name: 'Opus' } })),
      hook(w, 'StopFailure', { error: 'rate_limit', last_assistant_message: text, cwd: repo }),
    ]);
    await expectOneWall(w, exactMs);
  });

  it('the StopFailure hook and the transcript record arriving together fold into one wall (hook first)', async () => {
    const w = newWorld({ SLEDS_NO_AUTOSTART: '1', SLEDS_SEAT: 'dana' });
    await startMusher(w);
    const { exactMs, text } = aReset();
    const path = transcriptPath(w);
    writeFileSync(path, '');
    const repo = repoWithRoster(w);
    await hook(w, 'SessionStart', { source: 'startup', model: 'claude-opus-5-5', cwd: repo });
    const stop = hook(w, 'StopFailure', { error: 'rate_limit', last_assistant_message: text, cwd: repo });
    appendFileSync(path, limitRecord(exactMs));
    await Promise.all([stop, sleds(w, ['statusline'], JSON.stringify({ session_id: SESSION, transcript_path: path, cwd: repo, model: { display_name: 'Opus' } }))]);
    await expectOneWall(w, exactMs);
  });
});
