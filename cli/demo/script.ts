import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { commandAndOutput, hookAnswerText, promptAndAnswer, type FrameSink } from './frames.js';
import { startMusher, type Cleanup, type DemoHomes, type Seat } from './homes.js';
import { git, hook, sleds, sledsJson, statusline } from './processes.js';
import { leaveWorkInProgress, type DemoProject } from './project.js';
import { appendExchange, newTranscript, type Transcript } from './transcript.js';

/**
 * The story: jake's session fed through the real hook and statusline bundles to his real musher — 40%, amber at
 * 91% with the exits named, the forecast, the wall and its card, `/sled 2`, `/sled 5 dana` — then dana's pickup
 * in her own home, and the work in her worktree. Every frame's text is what the product printed.
 */
export interface StoryDeps {
  homes: DemoHomes;
  project: DemoProject;
  cleanup: Cleanup;
  emit: FrameSink;
  color: boolean;
  now: () => number;
  /** Waits between polls (a poll with a deadline, never a fixed sleep as synchronisation). */
  pause: (ms: number) => Promise<void>;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

interface StatusJson {
  sessions: Array<{ sessionId: string; usageRecords: number }>;
  wallBook: Array<{ wallId: string; sessionId: string; snapshotId: string | null }>;
}
interface HandoffsJson {
  handoffs: Array<{ id: string; direction: string; state: string; wallId: string | null; note: string | null }>;
}

export async function tellStory(d: StoryDeps): Promise<void> {
  const { homes, project, emit } = d;
  const { jake, dana } = homes;
  const until = poller(d);
  await startMusher(jake, d.cleanup);
  await startMusher(dana, d.cleanup);

  // jake's session in his checkout.
  const tx = newTranscript(join(jake.home, '.claude'), project.jakeRepo);
  const session = { session_id: tx.sessionId, transcript_path: tx.path, cwd: project.jakeRepo };
  const at = { env: jake.env, cwd: project.jakeRepo };
  await hook('SessionStart', { ...session, source: 'startup', model: 'claude-opus-5-5' }, at);
  const task = 'Fix the cart total: sum the prices, then apply the discounts';

  // The 5-hour window resets on the hour, an hour or two from now; the weekly one in three days.
  const now = d.now();
  const resetsAt = Math.ceil((now + 90 * MINUTE) / HOUR) * HOUR;
  const weeklyResetsAt = Math.ceil((now + 72 * HOUR) / HOUR) * HOUR;
  const line = (fiveHourPct: number) => ({
    ...session,
    hook_event_name: 'Status',
    model: { id: 'claude-opus-5-5', display_name: 'Opus' },
    workspace: { current_dir: project.jakeRepo, project_dir: project.jakeRepo },
    rate_limits: { five_hour: { used_percentage: fiveHourPct, resets_at: resetsAt / 1000 }, seven_day: { used_percentage: 23, resets_at: weeklyResetsAt / 1000 } },
  });

  // 1. Replies come in; musher prices them from the transcript; the statusline at 40%.
  await reply(tx, task, ['Reading cart.ts and its tests.', 'The total counts the items instead of summing them.', 'Sketching the fix.'], d, jake, session, until);
  emit({ step: 'statusline', title: 'jake works in Claude Code: the statusline at 40% of the 5-hour limit, priced by musher', text: await statusline(line(40), at) });

  // 2. More replies; at 91% the line turns amber and names what the wall would offer.
  await reply(tx, 'go on', ['Summing the prices now.', 'Tests for the sum pass.', 'Next: the discounts.'], d, jake, session, until);
  const first = await statusline(line(91), at);
  // musher prices the exits off the render's path (at most every 30 s a session); until a render names them, ask again.
  const namesExits = (l: string): boolean => l.includes('at 100%:');
  const amber = namesExits(first)
    ? first
    : await until('the amber line to name the exits', async () => {
        const again = await statusline(line(91), at);
        return namesExits(again) ? again : null;
      }, 5_000).catch(() => first);
  emit({ step: 'amber', title: '91%: the line turns amber and names the exits a wall would offer', text: amber });

  // 3. The forecast: musher's forecaster over the last half hour of 5-hour readings (40% → 91%, a reading every 2 min).
  const trace = join(homes.root, '5h-readings.jsonl');
  const samples = Array.from({ length: 18 }, (_, k) => ({ t: now - (17 - k) * 2 * MINUTE, window: 'five_hour', used_percentage: 40 + 3 * k, resets_at: resetsAt / 1000 }));
  writeFileSync(trace, samples.map((s) => `${JSON.stringify(s)}\n`).join(''));
  const replay = (await sleds(['forecast', 'replay', trace], at)).trim().split('\n');
  emit({
    step: 'forecast',
    title: 'The forecast: when the 5-hour bar reaches 100% at this pace (the forecaster over the last 34 minutes of readings)',
    text: commandAndOutput('sleds forecast replay 5h-readings.jsonl | tail -1', replay[replay.length - 1] ?? '', d.color),
  });

  // 4. The next reply hits the limit, with jake's change half done: the line turns red and names the wall.
  leaveWorkInProgress(project);
  await statusline(line(100), at);
  const wall = await until('the wall to open', async () => {
    const s = await sledsJson<StatusJson>(['status'], at);
    return s.wallBook.find((w) => w.sessionId === tx.sessionId && w.snapshotId !== null) ?? null;
  });
  const red = await statusline(line(100), at);
  emit({ step: 'wall', title: 'The 5-hour limit: musher opens a wall and snapshots the session', text: red });

  // 5. jake's next prompt gets the card, answered by the hook with no model call.
  const say = async (seat: Seat, who: Record<string, unknown>, cwd: string, prompt: string) =>
    hookAnswerText(await hook('UserPromptSubmit', { ...who, prompt, permission_mode: 'default' }, { env: seat.env, cwd }));
  const cardPrompt = 'go on with the discounts';
  emit({ step: 'card', title: 'jake types his next prompt: the card with the exits', text: promptAndAnswer(cardPrompt, await say(jake, session, project.jakeRepo, cardPrompt)) });
  emit({ step: 'hold', title: '/sled 2: hold until the reset', text: promptAndAnswer('/sled 2', await say(jake, session, project.jakeRepo, '/sled 2')) });

  // 6. jake changes his mind: dana takes it over now.
  const handedOff = await say(jake, session, project.jakeRepo, '/sled 5 dana');
  const sent = await until('the hand-off to reach the remote', async () => {
    const h = (await sledsJson<HandoffsJson>(['handoffs'], at)).handoffs.find((x) => x.direction === 'sent' && x.wallId === wall.wallId);
    if (h && h.state !== 'sent' && h.state !== 'sending') throw new Error(`the hand-off ${h.id} is ${h.state}: ${h.note ?? ''}`);
    return h?.state === 'sent' ? h : null;
  }, 30_000);
  const listed = await sleds(['handoffs'], at);
  emit({ step: 'handoff', title: '/sled 5 dana: sealed, signed and pushed to the team remote', text: `${promptAndAnswer('/sled 5 dana', handedOff)}\n\n${commandAndOutput('sleds handoffs', listed, d.color)}` });

  // 7. dana, in her own home and checkout, picks it up from her Claude Code session.
  const danaSession = { session_id: randomUUID(), cwd: project.danaRepo };
  await hook('SessionStart', { ...danaSession, source: 'startup', model: 'claude-opus-5-5' }, { env: dana.env, cwd: project.danaRepo });
  const pickup = `/sled pickup ${sent.id}`;
  emit({ step: 'pickup', title: "dana's machine: /sled pickup in her Claude Code", text: promptAndAnswer(pickup, await say(dana, danaSession, project.danaRepo, pickup)) });

  // 8. Where the work is: jake's uncommitted change, uncommitted in dana's worktree.
  const received = (await sledsJson<HandoffsJson>(['handoffs'], { env: dana.env, cwd: project.danaRepo })).handoffs.find((x) => x.id === sent.id && x.direction === 'received');
  const dir = (JSON.parse(received?.note ?? '{}') as { dir?: string }).dir;
  if (!dir) throw new Error(`dana's musher has no worktree for ${sent.id}`);
  const conversation = installedTranscripts(join(dana.home, '.claude', 'projects'), tx.sessionId).map((p) => `~${p.slice(dana.home.length)}`);
  const status = await git(dir, ['status', '--short'], dana.env);
  const diff = await git(dir, ['diff', '--', project.changedFile], dana.env);
  emit({
    step: 'work',
    title: "dana's worktree: jake's commits, and his half-done change still uncommitted",
    text: [
      commandAndOutput(`cd ${dir} && git status --short`, status, d.color),
      commandAndOutput(`git diff ${project.changedFile}`, diff, d.color),
      commandAndOutput(`ls ~/.claude/projects/*/${tx.sessionId}.jsonl   # jake's conversation, where claude --resume finds it`, conversation.join('\n') || '(not installed)', d.color),
    ].join('\n'),
  });
}

/** The copies of a session's transcript in a Claude config dir's project folders. */
function installedTranscripts(projects: string, sessionId: string): string[] {
  let folders: string[];
  try {
    folders = readdirSync(projects);
  } catch {
    // No projects folder yet: no copies.
    return [];
  }
  return folders.map((f) => join(projects, f, `${sessionId}.jsonl`)).filter((p) => existsSync(p));
}

type Until = <T>(what: string, check: () => Promise<T | null>, timeoutMs?: number) => Promise<T>;

/** Polls `check` until it returns a value, or fails saying what it waited for once the deadline passes. */
function poller(d: Pick<StoryDeps, 'now' | 'pause'>): Until {
  return async (what, check, timeoutMs = 15_000) => {
    const deadline = d.now() + timeoutMs;
    for (;;) {
      const v = await check();
      if (v !== null) return v;
      if (d.now() >= deadline) throw new Error(`gave up waiting for ${what} after ${Math.round(timeoutMs / 1000)} s`);
      await d.pause(100);
    }
  };
}

/** jake's prompt and the model's replies land in the transcript; the Stop hook fires; musher has priced them. */
async function reply(tx: Transcript, prompt: string, replies: string[], d: StoryDeps, jake: Seat, session: Record<string, unknown>, until: Until): Promise<void> {
  const at = { env: jake.env, cwd: tx.cwd };
  await hook('UserPromptSubmit', { ...session, prompt, permission_mode: 'default' }, at);
  appendExchange(tx, prompt, replies, d.now());
  await hook('Stop', { ...session, stop_hook_active: false }, at);
  await until('musher to price the replies', async () => {
    const s = await sledsJson<StatusJson>(['status'], at);
    const mine = s.sessions.find((x) => x.sessionId === tx.sessionId);
    return mine && mine.usageRecords >= tx.replies ? mine : null;
  });
}
