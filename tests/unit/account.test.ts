import { describe, expect, it } from 'vitest';
import { claudeAccount, claudeConfigDirOfTranscript, claudeGlobalConfigPaths, codexAccount, codexHomeOfRollout } from '../../core/account.js';

describe('whose bars a reading is', () => {
  it.each([
    ['/home/a/.claude/projects/-home-a-proj/c6ef.jsonl', '/home/a/.claude'],
    ['/home/a/.claude-work/projects/-home-a-projects-x/c6ef.jsonl', '/home/a/.claude-work'],
    ['/home/a/projects/cfg/projects/-tmp/c6ef.jsonl', '/home/a/projects/cfg'],
    ['/home/a/.claude/projects/-home-a-proj/c6ef/subagents/agent-1.jsonl', '/home/a/.claude'],
    ['/home/a/.claude/c6ef.jsonl', null],
    ['/home/a/.claude/projects/c6ef.jsonl', null],
    ['relative/projects/x/y.txt', null],
  ])('the config dir of %s is %s', (path, dir) => {
    expect(claudeConfigDirOfTranscript(path)).toBe(dir);
  });

  it.each([
    ['/home/a/.codex/sessions/2026/11/29/rollout-2026-11-29T10-00-00-01a2.jsonl', '/home/a/.codex'],
    ['/srv/codex-b/sessions/2026/01/02/rollout-x.jsonl', '/srv/codex-b'],
    ['/home/a/.codex/sessions/rollout-x.jsonl', null],
  ])('the Codex home of %s is %s', (path, home) => {
    expect(codexHomeOfRollout(path)).toBe(home);
  });

  it('looks for the global config inside a CLAUDE_CONFIG_DIR, and beside the default ~/.claude', () => {
    expect(claudeGlobalConfigPaths('/home/a/.claude-work/')).toEqual(['/home/a/.claude-work/.claude.json']);
    expect(claudeGlobalConfigPaths('/home/a/.claude')).toEqual(['/home/a/.claude/.claude.json', '/home/a/.claude.json']);
  });

  it.each([
    ['a signed-in account: its uuid and org, named by e-mail', { oauthAccount: { accountUuid: 'u-1', organizationUuid: 'o-1', emailAddress: 'jake@example.com' } }, 'claude:u-1/o-1', 'jake@example.com'],
    ['the same account in another org is another seat', { oauthAccount: { accountUuid: 'u-1', organizationUuid: 'o-2' } }, 'claude:u-1/o-2', '~/.claude'],
    ['no account in the config (a token from the environment): the folder', { hasCompletedOnboarding: true }, 'claude-dir:/home/a/.claude', '~/.claude'],
    ['an unreadable config: the folder', null, 'claude-dir:/home/a/.claude', '~/.claude'],
    ['a blank uuid is no account', { oauthAccount: { accountUuid: ' ' } }, 'claude-dir:/home/a/.claude', '~/.claude'],
  ])('%s', (_name, config, key, label) => {
    expect(claudeAccount('/home/a/.claude/', config, '/home/a')).toEqual({ key, label });
  });

  it('a Codex home is its own account, shown with ~', () => {
    expect(codexAccount('/home/a/.codex', '/home/a')).toEqual({ key: 'codex-dir:/home/a/.codex', label: '~/.codex' });
    expect(codexAccount('/srv/codex', '/home/a')).toEqual({ key: 'codex-dir:/srv/codex', label: '/srv/codex' });
  });
});
