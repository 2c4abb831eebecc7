/**
 * The protocol's client reads a reply the one way: the route's schema on success, `{error}` on a refusal, and a
 * typed failure (never a throw) for what is neither. And a call's path is the route's, parameters encoded.
 */
import { describe, expect, it } from 'vitest';
import { eachCase } from '../support/each-case.js';
import { NOT_JSON, readReply } from '../../protocol/client/client.js';
import { pathOf, ROUTES } from '../../protocol/routes.js';

const json = (status: number, body: unknown) => ({ status, contentType: 'application/json', body: typeof body === 'string' ? body : JSON.stringify(body) });

describe('a call\'s path', () => {
  eachCase<[string, string]>([
    [pathOf(ROUTES.tasks), '/v1/tasks'],
    [pathOf(ROUTES.task, { id: 'k3m9x2qa' }), '/v1/tasks/k3m9x2qa'],
    [pathOf(ROUTES.park, { id: 'a/b c' }), '/v1/tasks/a%2Fb%20c/park'],
    [pathOf(ROUTES.questions, {}, { task: 'k3m9', state: 'open', limit: undefined }), '/v1/questions?task=k3m9&state=open'],
    [pathOf(ROUTES.hook, { event: 'UserPromptSubmit' }), '/v1/hook/UserPromptSubmit'],
  ])('%s is %s', (got, want) => {
    expect(got).toBe(want);
  });

  it('a missing parameter is an error, not a request to the wrong route', () => {
    expect(() => pathOf(ROUTES.task, {})).toThrow(/parameter id is missing/);
  });
});

describe('a reply, read', () => {
  it('success: the body as musher sent it (its key order and the fields the schema does not list kept)', () => {
    const sent = { startedAt: 5, pid: 42, ok: true, extra: 'kept' };
    const r = readReply('health', json(200, sent));
    expect(r).toEqual({ ok: true, status: 200, body: sent });
    expect(JSON.stringify(r.ok && r.body)).toBe(JSON.stringify(sent));
  });

  it('a refusal: its error and the rest of its body (kind, handle)', () => {
    expect(readReply('pickup', json(409, { error: 'sender dana is not trusted', kind: 'untrusted-sender', handle: 'dana' }))).toEqual({
      ok: false,
      kind: 'refused',
      status: 409,
      error: 'sender dana is not trusted',
      body: { error: 'sender dana is not trusted', kind: 'untrusted-sender', handle: 'dana' },
    });
  });

  it('a refusal without {error} still says what happened', () => {
    expect(readReply('status', json(502, { nope: 1 }))).toMatchObject({ ok: false, kind: 'refused', status: 502, error: 'musher answered HTTP 502' });
  });

  it('not JSON, or not the shape the route promises: unreadable, with the first thing wrong', () => {
    expect(readReply('status', json(200, 'Internal <b>oops</b>'))).toEqual({ ok: false, kind: 'unreadable', status: 200, reason: NOT_JSON });
    expect(readReply('health', json(200, { ok: true, pid: '42', startedAt: 5 }))).toMatchObject({ ok: false, kind: 'unreadable', reason: expect.stringMatching(/^pid: /) });
    expect(readReply('tasks', json(200, { now: 1, tasks: [{ id: 'k3m9' }] }))).toMatchObject({ ok: false, kind: 'unreadable', reason: expect.stringMatching(/^tasks\.0\.title: /) });
  });

  it("the statusline's answer is its text", () => {
    expect(readReply('statusline', { status: 200, contentType: 'text/plain; charset=utf-8', body: '5h 12% · wk 40%' })).toEqual({ ok: true, status: 200, body: '5h 12% · wk 40%' });
  });
});
