import { describe, expect, it } from 'vitest';
import { handedOffLine, pickedUpAnswer, type PickedUp } from '../../core/handoff/answer.js';

const picked = (harness: PickedUp['harness']): PickedUp => ({
  id: 'jd7k2m9qa41p',
  sender: 'sam',
  harness,
  sessionId: '0b9c-session',
  dir: '/home/dana/shop-handoff-jd7k2m9qa41p',
  branch: 'sleds/handoff/jd7k2m9qa41p',
});

describe('what the teammate is told after a pickup', () => {
  it.each<[PickedUp['harness'], 'claude-code' | 'codex', RegExp]>([
    ['claude-code', 'claude-code', /The session resumes there: cd "\/home\/dana\/shop-handoff-jd7k2m9qa41p" && claude --resume 0b9c-session/],
    ['codex', 'codex', /The session resumes there: cd "\/home\/dana\/shop-handoff-jd7k2m9qa41p" && codex resume 0b9c-session/],
    ['claude-code', 'codex', /It came from Claude Code: `sleds pickup jd7k2m9qa41p --harness codex` in a terminal starts it there with the brief as the first prompt\./],
    ['codex', 'claude-code', /It came from Codex: `sleds pickup jd7k2m9qa41p --harness claude` in a terminal starts it there/],
  ])('sent from %s, picked up in %s', (from, here, line) => {
    const answer = pickedUpAnswer(picked(from), here);
    expect(answer.split('\n')[0]).toBe('Picked up jd7k2m9qa41p from sam: the work is in /home/dana/shop-handoff-jd7k2m9qa41p (branch sleds/handoff/jd7k2m9qa41p).');
    expect(answer).toMatch(line);
  });
});

describe('a pickup that resumed in tmux', () => {
  it('names the window, keeps the command for elsewhere, and ignores the window for the other harness', () => {
    expect(pickedUpAnswer(picked('claude-code'), 'claude-code', 'sled-jd7k2m9qa41p (work:1)').split('\n')[1]).toBe(
      `sam's session resumed in a new tmux window, sled-jd7k2m9qa41p (work:1), next to this one (this session stays as it was). Elsewhere: cd "/home/dana/shop-handoff-jd7k2m9qa41p" && claude --resume 0b9c-session`,
    );
    expect(pickedUpAnswer(picked('codex'), 'claude-code', 'sled-x (work:1)')).toMatch(/It came from Codex/);
  });
});

describe('what the sender is told once it is sealed', () => {
  it.each<[string[], 'claude-code' | 'codex', string]>([
    [[], 'claude-code', 'Handed off to Dana. Dana picks it up in Claude Code with /sled pickup jd7k2m9qa41p — the session resumes there. You can keep working on something else.'],
    [['claude-code', 'codex'], 'claude-code', 'Handed off to Dana. Dana picks it up in Claude Code with /sled pickup jd7k2m9qa41p — the session resumes there. You can keep working on something else.'],
    [['codex'], 'claude-code', 'Handed off to Dana. Dana picks it up in Codex with sled pickup jd7k2m9qa41p — it starts there with the brief of this session. You can keep working on something else.'],
    [['codex'], 'codex', 'Handed off to Dana. Dana picks it up in Codex with sled pickup jd7k2m9qa41p — the session resumes there. You can keep working on something else.'],
    [['claude-code'], 'codex', 'Handed off to Dana. Dana picks it up in Claude Code with /sled pickup jd7k2m9qa41p — it starts there with the brief of this session. You can keep working on something else.'],
  ])('they use %j, sent from %s', (theirs, from, line) => {
    expect(handedOffLine('Dana', 'jd7k2m9qa41p', theirs, from)).toBe(line);
  });
});
