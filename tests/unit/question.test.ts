import { describe, expect, it } from 'vitest';
import { eachCase } from '../support/each-case.js';
import { AnswerRequest, answerContext, chosenOption, ParkRequest, parkedText, parseChoice, type Question } from '../../core/question/question.js';

const q: Question = {
  id: 'jd7k2m9qa45p',
  taskId: 'hx3v8w2n4k7q',
  sessionId: 's1',
  question: 'Keep the v1 endpoints as aliases?',
  options: ['Keep them: the band stays $4–11', 'Drop them: the band shrinks to $2–6'],
  state: 'answered',
  choice: 'B',
  answeredBy: 'verb',
  askedAt: 1,
  answeredAt: 2,
  deliveredAt: null,
};

describe('parked questions', () => {
  it.each([
    ['A', 'A'],
    ['b', 'B'],
    [' a ', 'A'],
    ['B)', 'B'],
    ['option a', 'A'],
    ['1', 'A'],
    ['2', 'B'],
    ['C', null],
    ['AB', null],
    ['', null],
    [null, null],
    ['yes', null],
  ] as const)('parseChoice(%j) → %j', (text, want) => {
    expect(parseChoice(text)).toBe(want);
  });

  eachCase([
    [{ question: 'Keep v1?', options: ['Keep it: band $4–11', 'Drop it: band $2–6'] }, true],
    [{ question: 'Keep v1?', options: ['Keep it: band $4–11', 'Drop it: band $2–6'], sessionId: 's', extra: 1 }, true],
    [{ question: 'Keep v1?', options: ['Keep it: band $4–11'] }, false],
    [{ question: 'Keep v1?', options: ['Keep it', 'Drop it', 'Both'] }, false],
    [{ question: 'Keep v1?', options: ['Keep it: band $4–11', '  '] }, false],
    [{ question: '', options: ['Keep it: band $4–11', 'Drop it: band $2–6'] }, false],
    [{ options: ['Keep it: band $4–11', 'Drop it: band $2–6'] }, false],
  ])('ParkRequest %j valid: %s', (body, valid) => {
    expect(ParkRequest.safeParse(body).success).toBe(valid);
  });

  it('says what to fix when the options are not two', () => {
    const r = ParkRequest.safeParse({ question: 'Keep v1?', options: ['a thing', 'b thing', 'c thing'] });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.message).toBe('options holds exactly two sentences: [A, B]');
  });

  it.each([
    [{ choice: 'a' }, 'A'],
    [{ choice: 'B', by: 'tool' }, 'B'],
    [{ choice: 'maybe' }, null],
    [{}, null],
  ] as const)('AnswerRequest %j → %j', (body, want) => {
    const r = AnswerRequest.safeParse(body);
    expect(r.success ? r.data.choice : null).toBe(want);
  });

  it('the texts carry the ids, both options, and the chosen one', () => {
    expect(chosenOption(q)).toBe('Drop them: the band shrinks to $2–6');
    expect(chosenOption({ ...q, choice: null })).toBeNull();
    expect(parkedText(q, 'Rename the billing API')).toBe(
      [
        'Parked: task hx3v8w2n4k7q (Rename the billing API) waits for an answer to question jd7k2m9qa45p: Keep the v1 endpoints as aliases?',
        'A: Keep them: the band stays $4–11',
        'B: Drop them: the band shrinks to $2–6',
        'Stop here and tell the user to answer with /sled answer jd7k2m9qa45p A or /sled answer jd7k2m9qa45p B (or the answer tool); the answer comes back to this session and the task goes on.',
      ].join('\n'),
    );
    expect(answerContext(q)).toBe(
      'sleds: the user answered parked question jd7k2m9qa45p ("Keep the v1 endpoints as aliases?") with B: Drop them: the band shrinks to $2–6 Task hx3v8w2n4k7q is open again: carry on with option B, and do not ask this again.',
    );
  });
});
