import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Db } from '../../musher/store/db.js';
import { HandoffStore } from '../../musher/store/handoffs.js';
import { makeWorld, sleds, startMusher, disposeWorld, type SledsWorld } from '../support/sleds-env.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const T = Date.UTC(2026, 10, 29, 14);
const sent = { id: 'jd7k2m9qa45p', direction: 'sent' as const, wallId: 'w', sessionId: 's', harness: 'claude-code', peer: 'dana', createdAt: T, expiresAt: T + 7 * 86_400_000, transport: 'git origin', ref: 'refs/sleds/handoffs/jd7k2m9qa45p', branch: 'sleds/handoff/jd7k2m9qa45p', state: 'sent' as const, note: null };

describe('the hand-offs record', () => {
  function store(path: string): { db: Db; handoffs: HandoffStore } {
    const db = openStore(path);
    return { db, handoffs: new HandoffStore(db) };
  }

  it('keeps each hand-off once, with who picked it up and when; newest first', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sl-ho-'));
    const { db, handoffs } = store(join(dir, 'sleds.db'));
    cleanups.push(() => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    });
    expect(handoffs.record(sent)).toBe(true);
    expect(handoffs.record(sent)).toBe(false);
    handoffs.record({ ...sent, id: 'k7m2n9pq4rst', direction: 'received', peer: 'sam', createdAt: T + 1000, state: 'received' });
    handoffs.pickedUp('jd7k2m9qa45p', 'dana', T + 60_000);
    expect(handoffs.get('jd7k2m9qa45p')).toMatchObject({ state: 'picked_up', pickedUpBy: 'dana', pickedUpAt: T + 60_000 });
    expect(handoffs.list().map((h) => h.id)).toEqual(['k7m2n9pq4rst', 'jd7k2m9qa45p']);
  });

  it('`sleds handoffs` says there are none yet and how to make one; `/sled pickup` never reaches the model', async () => {
    const w: SledsWorld = makeWorld({ SLEDS_NO_AUTOSTART: '1' });
    cleanups.push(() => disposeWorld(w));
    await startMusher(w);
    const r = await sleds(w, ['handoffs']);
    expect(r.stdout).toBe('No hand-offs sent or received yet. /sled handoff <teammate> hands a session over (at a wall, /sled 5).\n');
    expect(JSON.parse((await sleds(w, ['handoffs', '--json'])).stdout).handoffs).toEqual([]);
    const pickup = await sleds(w, ['hook', 'UserPromptSubmit'], JSON.stringify({ session_id: 's1', cwd: '/tmp', hook_event_name: 'UserPromptSubmit', prompt: '/sled pickup jd7k2m9qa45p' }));
    expect(JSON.parse(pickup.stdout)).toMatchObject({ decision: 'block' });
    const none = await sleds(w, ['hook', 'UserPromptSubmit'], JSON.stringify({ session_id: 's1', cwd: '/tmp', hook_event_name: 'UserPromptSubmit', prompt: '/sled pickup' }));
    expect(JSON.parse(none.stdout).reason).toMatch(/^sled: which hand-off\? e\.g\. \/sled pickup/);
  });
});
