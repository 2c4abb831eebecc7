import { describe, expect, it } from 'vitest';
import { manifestProblem, symlinkTargetProblem, transcriptPathProblem, worktreePathProblem } from '../../core/handoff/confine.js';
import type { SnapshotManifest } from '../../core/snapshot.js';

const ID = '7f3e9a21-4c8b-4d2e-9f10-2b3c4d5e6f70';
const OTHER = '019ad105-0b2a-7d41-8e6f-1a2b3c4d5e6f';

describe('a transcript path in a bundle: only the harness’s own shape', () => {
  it.each([
    ['claude-code', `projects/-home-u-shop/${ID}.jsonl`, 'session', ID, null],
    ['claude-code', `projects/-Users-alice-code-elsewhere/${ID.toUpperCase()}.jsonl`, 'session', ID, null],
    ['claude-code', `projects/../../${ID}.jsonl`, 'session', ID, /is not projects\/<slug>\/<session uuid>\.jsonl/],
    ['claude-code', `/home/dana/.claude/projects/x/${ID}.jsonl`, 'session', ID, /is not projects/],
    ['claude-code', `projects/a/b/${ID}.jsonl`, 'session', ID, /is not projects/],
    ['claude-code', `projects/-x/${ID}.json`, 'session', ID, /is not projects/],
    ['claude-code', `projects/with space/${ID}.jsonl`, 'session', ID, /is not projects/],
    ['claude-code', `projects/-x/${OTHER}.jsonl`, 'session', OTHER, /is not session 7f3e9a21-.*'s/],
    ['claude-code', `projects/-x/${ID}.jsonl`, 'fork-parent', ID, /Claude Code sessions have no fork-parent file/],
    ['codex', `sessions/2026/11/29/rollout-2026-11-29T20-05-00-${ID}.jsonl`, 'session', ID, null],
    ['codex', `sessions/2026/11/29/rollout-2026-11-29T20-05-00-${OTHER}.jsonl`, 'fork-parent', OTHER, null],
    ['codex', `sessions/2026/11/29/rollout-2026-11-28T20-05-00-${ID}.jsonl`, 'session', ID, /its folder's date is not its name's/],
    ['codex', `sessions/rollout-2026-11-29T20-05-00-${ID}.jsonl`, 'session', ID, /is not sessions\/YYYY\/MM\/DD/],
    ['codex', `sessions/2026/11/29/../../../../config.toml`, 'session', ID, /is not sessions\/YYYY\/MM\/DD/],
    ['codex', `sessions/2026/11/29/rollout-2026-11-29T20-05-00-${OTHER}.jsonl`, 'session', ID, /is named for another thread|is not session/],
  ] as const)('%s %s (%s) → %s', (harness, path, role, sessionId, problem) => {
    const got = transcriptPathProblem(harness, { path, role, sessionId }, ID);
    if (problem === null) expect(got).toBeNull();
    else expect(got).toMatch(problem);
  });
});

describe('a worktree file path in a bundle', () => {
  it.each([
    ['src/cart.ts', null],
    ['.env.test', null],
    ['a/.github/workflows/ci.yml', null],
    ['', /an empty file path/],
    ['/etc/passwd', /is absolute/],
    ['../x', /not a plain relative path/],
    ['a/../../x', /not a plain relative path/],
    ['a//b', /not a plain relative path/],
    ['./a', /not a plain relative path/],
    ['.git/hooks/pre-commit', /reaches into \.git/],
    ['sub/.GIT/config', /reaches into \.git/],
    ['a\\b', /holds a backslash/],
    ['name\u001b[2J', /holds a control character/],
    ['x'.repeat(5000), /a file path of 5000 bytes/],
  ] as const)('%j → %s', (path, problem) => {
    const got = worktreePathProblem(path);
    if (problem === null) expect(got).toBeNull();
    else expect(got).toMatch(problem);
  });

  it.each([
    ['docs/link', 'guide.md', null],
    ['docs/link', '../README.md', null],
    ['docs/deep/link', '../../src/a.ts', null],
    ['link', '../outside', /points outside the worktree/],
    ['docs/link', '../../outside', /points outside the worktree/],
    ['link', '/etc/passwd', /points outside the worktree/],
    ['link', '.git/config', /points into \.git/],
    ['link', '', /an unusable target/],
  ] as const)('symlink %s → %s: %s', (path, target, problem) => {
    const got = symlinkTargetProblem(path, target);
    if (problem === null) expect(got).toBeNull();
    else expect(got).toMatch(problem);
  });
});

describe('the whole manifest', () => {
  const hash = (c: string) => c.repeat(64);
  const base = (): SnapshotManifest => ({
    format: 'sleds-snapshot/1',
    sessionId: ID,
    harness: 'claude-code',
    harnessVersion: null,
    model: null,
    cwd: '/home/sam/shop',
    transcript: [{ role: 'session', sessionId: ID, path: `projects/-home-sam-shop/${ID}.jsonl`, sourcePath: '/x', hash: hash('a'), bytes: 1 }],
    git: { root: '/home/sam/shop', subdir: '', remote: null, branch: 'main', head: 'f'.repeat(40), patch: null, numstat: [], untracked: [], cut: [] },
    pack: { v: 1 } as unknown as SnapshotManifest['pack'],
    bars: [],
    bindingWindow: null,
    notes: [],
  });
  const targets: Record<string, string> = { [hash('b')]: 'src', [hash('c')]: '../../up' };

  type Edit = (m: SnapshotManifest) => void;
  it.each<[string, Edit, RegExp | null]>([
    ['an honest one', () => undefined, null],
    ['a session id that is an option', (m: SnapshotManifest) => void (m.sessionId = '--settings={}'), /session id "--settings=\{\}" is not a UUID/],
    ['a base that is not a commit id', (m: SnapshotManifest) => void (m.git!.head = 'HEAD~1'), /its base commit "HEAD~1" is not a commit id/],
    ['a subdir that climbs', (m: SnapshotManifest) => void (m.git!.subdir = '../x'), /its folder in the repository "\.\.\/x"/],
    ['the same transcript twice', (m: SnapshotManifest) => void m.transcript.push({ ...m.transcript[0]! }), /is named twice/],
    ['the same file twice', (m: SnapshotManifest) => void m.git!.untracked.push({ path: 'a', mode: '100644', hash: hash('d'), bytes: 1 }, { path: 'a', mode: '100755', hash: hash('d'), bytes: 1 }), /file "a" is named twice/],
    ['a symlink inside', (m: SnapshotManifest) => void m.git!.untracked.push({ path: 'lnk', mode: '120000', hash: hash('b'), bytes: 3 }), null],
    ['a symlink out', (m: SnapshotManifest) => void m.git!.untracked.push({ path: 'lnk', mode: '120000', hash: hash('c'), bytes: 3 }), /symlink "lnk" points outside/],
    ['a file below a symlink', (m: SnapshotManifest) => void m.git!.untracked.push({ path: 'lnk', mode: '120000', hash: hash('b'), bytes: 3 }, { path: 'lnk/x', mode: '100644', hash: hash('d'), bytes: 1 }), /file "lnk\/x" lies below the symlink "lnk"/],
    ['a file below a file', (m: SnapshotManifest) => void m.git!.untracked.push({ path: 'f', mode: '100644', hash: hash('d'), bytes: 1 }, { path: 'f/x', mode: '100644', hash: hash('d'), bytes: 1 }), /lies below the file "f"/],
  ])('%s', (_what, edit, problem) => {
    const m = base();
    edit(m);
    const got = manifestProblem(m, (h) => targets[h] ?? null);
    if (problem === null) expect(got).toBeNull();
    else expect(got).toMatch(problem);
  });
});
