import { describe, expect, it } from 'vitest';
import { deliveredLine, deliveryPendingLine, handedOffLine, NO_SLACK_TOKEN, pickedUpAnswer, pickupCommand, type PickedUp } from '../../core/handoff/answer.js';
import { harnessWords, rosterHarness } from '../../musher/handoff/harness-words.js';

const SID = '0b9c2f4a-6a5e-4a8e-9a57-1f3c9d7e2b10';

const picked = (harness: PickedUp['harness']): PickedUp => ({
  id: 'jd7k2m9qa41p',
  sender: 'sam',
  harness,
  sessionId: SID,
  dir: '/home/dana/shop-handoff-jd7k2m9qa41p',
  branch: 'sleds/handoff/jd7k2m9qa41p',
});

describe('what the teammate is told after a pickup', () => {
  it.each<[PickedUp['harness'], 'claude-code' | 'codex', RegExp]>([
    ['claude-code', 'claude-code', /The session resumes there: cd \/home\/dana\/shop-handoff-jd7k2m9qa41p && claude --resume=0b9c2f4a-6a5e-4a8e-9a57-1f3c9d7e2b10   \(or `sleds pickup jd7k2m9qa41p` in a terminal\)$/],
    ['codex', 'codex', /The session resumes there: cd \/home\/dana\/shop-handoff-jd7k2m9qa41p && codex resume -- 0b9c2f4a-6a5e-4a8e-9a57-1f3c9d7e2b10 /],
    ['claude-code', 'codex', /It came from Claude Code: `sleds pickup jd7k2m9qa41p --harness codex` in a terminal starts it there with the brief as the first prompt\./],
    ['codex', 'claude-code', /It came from Codex: `sleds pickup jd7k2m9qa41p --harness claude` in a terminal starts it there/],
  ])('sent from %s, picked up in %s', (from, here, line) => {
    const answer = pickedUpAnswer(picked(from), here, null, harnessWords);
    expect(answer.split('\n')[0]).toBe('Picked up jd7k2m9qa41p from sam: the work is in /home/dana/shop-handoff-jd7k2m9qa41p (branch sleds/handoff/jd7k2m9qa41p).');
    expect(answer).toMatch(line);
  });
});

describe('a pickup that resumed in tmux', () => {
  it('names the window, keeps the command for elsewhere, and ignores the window for the other harness', () => {
    expect(pickedUpAnswer(picked('claude-code'), 'claude-code', 'sled-jd7k2m9qa41p (work:1)', harnessWords).split('\n')[1]).toBe(
      `sam's session resumed in a new tmux window, sled-jd7k2m9qa41p (work:1), next to this one (this session stays as it was). Elsewhere: cd /home/dana/shop-handoff-jd7k2m9qa41p && claude --resume=${SID}`,
    );
    expect(pickedUpAnswer(picked('codex'), 'claude-code', 'sled-x (work:1)', harnessWords)).toMatch(/It came from Codex/);
  });
});

describe('a pickup from a hostile bundle', () => {
  it('the pasted command runs nothing but the resume: folder and id are shell-quoted, the id glued to --resume=', () => {
    const hostile: PickedUp = { ...picked('claude-code'), dir: '/home/dana/x $(touch /tmp/pwned) `id`', sessionId: '--settings={"hooks":{}}' };
    expect(pickedUpAnswer(hostile, 'claude-code', null, harnessWords).split('\n')[1]).toBe(
      `The session resumes there: cd '/home/dana/x $(touch /tmp/pwned) \`id\`' && claude '--resume=--settings={"hooks":{}}'   (or \`sleds pickup jd7k2m9qa41p\` in a terminal)`,
    );
    const codex = pickedUpAnswer({ ...hostile, harness: 'codex', dir: "/w/Bob's" }, 'codex', null, harnessWords).split('\n')[1];
    expect(codex).toBe(`The session resumes there: cd '/w/Bob'\\''s' && codex resume -- '--settings={"hooks":{}}'   (or \`sleds pickup jd7k2m9qa41p\` in a terminal)`);
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
    expect(handedOffLine('Dana', 'jd7k2m9qa41p', rosterHarness(theirs), from)).toBe(line);
  });
});

describe('the word on delivery', () => {
  it.each([
    ['Slack set up', null, 'It is being pushed to the remote now (sleds handoffs shows when it is there). Slack tells Dana once it is.'],
    ['no token', NO_SLACK_TOKEN, 'It is being pushed to the remote now (sleds handoffs shows when it is there). Not sent on Slack (no Slack bot token — sleds slack set-token): tell Dana: /sled pickup jd7k2m9qa41p.'],
  ])('as it is sealed: %s', (_name, why, want) => {
    expect(deliveryPendingLine('Dana', pickupCommand('jd7k2m9qa41p', rosterHarness([])), why)).toBe(want);
  });

  it.each([
    ['Slack told them', null, 'Pushed to git remote origin (/r.git); Slack told Dana.'],
    ['Slack refused', "Slack does not know dana's slack id U1 (channel_not_found)", "Pushed to git remote origin (/r.git); not sent on Slack (Slack does not know dana's slack id U1 (channel_not_found)): tell Dana: sled pickup jd7k2m9qa41p."],
  ])('once pushed: %s', (_name, error, want) => {
    const pickup = pickupCommand('jd7k2m9qa41p', rosterHarness(error ? ['codex'] : []));
    expect(deliveredLine('git remote origin (/r.git)', 'Dana', pickup, error)).toBe(want);
  });
});
