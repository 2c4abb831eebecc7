/**
 * Two seats on one repository for the hand-off tests: each its own SLEDS_HOME, keys and musher, clones of one bare
 * remote, and a committed roster written by the test (who owns what is the point of most of them).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { disposeWorld, makeWorld, sleds, startMusher, type SledsWorld } from './sleds-env.js';
import { writeSledsConfig, type TestSledsConfig } from './sleds-config.js';

export const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@x', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

export interface SeatSpec {
  handle: string;
  name: string;
  areas?: string[];
  slack?: string;
  config?: TestSledsConfig;
}

export interface Team {
  root: string;
  remote: string;
  /** The sender's clone (the first seat's). */
  a: string;
  /** The second seat's clone. */
  b: string;
  seats: SledsWorld[];
}

/** Builds the team; `cleanups` gets what to undo, in the order to undo it (reversed by the caller). */
export async function handoffTeam(specs: [SeatSpec, SeatSpec], cleanups: Array<() => unknown>): Promise<Team> {
  const root = mkdtempSync(join(tmpdir(), 'sl-team-'));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const remote = join(root, 'shop.git');
  git(root, 'init', '-q', '--bare', remote);
  const a = join(root, 'a-shop');
  const b = join(root, 'b-shop');
  git(root, 'clone', '-q', remote, a);
  writeFileSync(join(a, 'cart.ts'), 'export const total = 1;\n');
  git(a, 'add', '.');
  git(a, 'commit', '-q', '-m', 'cart');
  git(a, 'push', '-q', 'origin', 'HEAD:main');
  const seats: SledsWorld[] = [];
  const entries: Array<Record<string, unknown>> = [];
  for (const s of specs) {
    const w = makeWorld({ SLEDS_SEAT: s.handle, SLEDS_KEYRING: 'file', SLEDS_NO_AUTOSTART: '1' });
    cleanups.push(() => disposeWorld(w));
    writeSledsConfig(w, s.config ?? {});
    const keys = await sleds(w, ['keys', 'init', '--name', s.name, '--json']);
    expect(keys.code, `${keys.stdout}${keys.stderr}`).toBe(0); // with --json its error is on stdout
    seats.push(w);
    entries.push({ ...(JSON.parse(keys.stdout).entry as Record<string, unknown>), ...(s.areas ? { areas: s.areas } : {}), ...(s.slack ? { slack: s.slack } : {}) });
  }
  mkdirSync(join(a, '.sleds'));
  writeFileSync(join(a, '.sleds', 'roster.yml'), JSON.stringify({ teammates: entries }, null, 2));
  git(a, 'add', '.sleds');
  git(a, 'commit', '-q', '-m', 'roster');
  git(a, 'push', '-q', 'origin', 'HEAD:main');
  git(root, 'clone', '-q', remote, b);
  for (const w of seats) await startMusher(w);
  return { root, remote, a, b, seats };
}

/** A Claude Code transcript of one exchange, as the harness writes it (shared/facts/claude-code.md §4). */
export function writeTranscript(path: string, sessionId: string, cwd: string, said: string): void {
  const base = { isSidechain: false, userType: 'external', entrypoint: 'cli', cwd, sessionId, version: '2.1.328', gitBranch: 'main' };
  const lines = [
    { ...base, parentUuid: null, type: 'user', message: { role: 'user', content: said }, uuid: '00000001-1111-4222-8333-000000000001', timestamp: '2026-11-30T10:00:01.000Z' },
    {
      ...base,
      parentUuid: '00000001-1111-4222-8333-000000000001',
      type: 'assistant',
      message: { id: 'msg_01', type: 'message', role: 'assistant', model: 'claude-opus-5-5', content: [{ type: 'text', text: 'Noted.' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 3, output_tokens: 5 } },
      uuid: '00000002-1111-4222-8333-000000000002',
      timestamp: '2026-11-30T10:00:04.000Z',
    },
  ];
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
}

export interface HookOut {
  decision?: string;
  reason?: string;
}

/** One hook event of `sessionId` in `cwd`, through the CLI (`sleds hook`); its JSON answer ({} when it printed nothing). */
export async function hookIn(w: SledsWorld, event: string, sessionId: string, cwd: string, body: Record<string, unknown>): Promise<HookOut> {
  const r = await sleds(w, ['hook', event], JSON.stringify({ session_id: sessionId, cwd, hook_event_name: event, ...body }));
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim() === '' ? {} : (JSON.parse(r.stdout) as HookOut);
}

export async function handoffsOf(w: SledsWorld): Promise<Array<{ id: string; state: string; direction: string; peer: string; wallId: string | null; note: string | null }>> {
  return JSON.parse((await sleds(w, ['handoffs', '--json'])).stdout).handoffs;
}
