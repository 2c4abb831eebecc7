/**
 * A fake Gemini API (generativelanguage v1beta) on 127.0.0.1 for driving the real Gemini CLI in end-to-end tests.
 * It speaks the wire format Gemini CLI 0.61 uses with API-key auth and GOOGLE_GEMINI_BASE_URL
 * (shared/facts/gemini-cli.md §1):
 *
 *  - POST /v1beta/models/<model>:streamGenerateContent?alt=sse   SSE, one `data: <GenerateContentResponse>` frame
 *        per chunk, frames split by CRLF CRLF; the last chunk carries finishReason STOP and usageMetadata. A turn
 *        is text (sent in two pieces) or one functionCall (the CLI runs the tool and sends a functionResponse).
 *  - POST /v1beta/models/<model>:generateContent                 one GenerateContentResponse (the CLI's side
 *        requests: the model router's classifier when no model is named)
 *  - POST /v1beta/models/<model>:countTokens                     {"totalTokens": n}
 *  - anything else                                               404 with Google's error envelope
 *
 * A quota refusal answers with 429 RESOURCE_EXHAUSTED, its QuotaFailure and RetryInfo details as Google sends them.
 * The key arrives in `x-goog-api-key`. Turns are queued (queueTurn); with none queued the fake answers
 * `defaultText`. Every request is recorded.
 */
import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import type http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';

import { cleanEnv, makeRealTempDir } from './child.js';

import { startRecordingServer, type RecordedRequest } from './fake-http.js';

const execFileP = promisify(execFile);

export type FakeGeminiTurn =
  | { kind: 'text'; text: string }
  | { kind: 'call'; name: string; args: Record<string, unknown> }
  | { kind: 'quota'; quotaId: string; retryDelaySeconds: number };

export interface FakeGeminiUsage {
  promptTokenCount: number;
  candidatesTokenCount: number;
  cachedContentTokenCount: number;
}

export interface FakeGemini {
  /** The base URL to put in GOOGLE_GEMINI_BASE_URL ("http://127.0.0.1:<port>"). */
  url: string;
  requests: RecordedRequest[];
  /** The streamGenerateContent requests, in order. */
  turnRequests(): RecordedRequest[];
  queueTurn(turn: FakeGeminiTurn): void;
  close(): Promise<void>;
}

const MODEL_PATH = /^\/v1beta\/models\/([\w.-]+):(streamGenerateContent|generateContent|countTokens)$/;

function googleError(res: http.ServerResponse, rec: RecordedRequest, code: number, status: string, message: string, details: unknown[] = []): void {
  rec.status = code;
  res.writeHead(code, { 'content-type': 'application/json; charset=UTF-8' });
  res.end(JSON.stringify({ error: { code, message, status, details } }));
}

function response(model: string, responseId: string, parts: unknown[], finish: boolean, usage: FakeGeminiUsage | null): unknown {
  const usageMetadata = usage
    ? { promptTokenCount: usage.promptTokenCount, candidatesTokenCount: usage.candidatesTokenCount, totalTokenCount: usage.promptTokenCount + usage.candidatesTokenCount, cachedContentTokenCount: usage.cachedContentTokenCount }
    : undefined;
  return { candidates: [{ content: { role: 'model', parts }, ...(finish ? { finishReason: 'STOP' } : {}), index: 0 }], ...(usageMetadata ? { usageMetadata } : {}), modelVersion: model, responseId };
}

export async function startFakeGemini(opts: { defaultText?: string; usage?: FakeGeminiUsage } = {}): Promise<FakeGemini> {
  const queue: FakeGeminiTurn[] = [];
  const usage = opts.usage ?? { promptTokenCount: 1200, candidatesTokenCount: 40, cachedContentTokenCount: 200 };
  let n = 0;
  const server = await startRecordingServer<RecordedRequest>({
    serverError: (_rec, err) => ({ headers: {}, body: JSON.stringify({ error: { code: 500, message: String(err), status: 'INTERNAL', details: [] } }) }),
    handle(rec, res) {
      const m = rec.method === 'POST' ? MODEL_PATH.exec(rec.pathname) : null;
      if (!m) return googleError(res, rec, 404, 'NOT_FOUND', `fake gemini: no route ${rec.method} ${rec.pathname}`);
      const [, model, method] = m as unknown as [string, string, string];
      if (method === 'countTokens') {
        rec.status = 200;
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ totalTokens: 42 }));
      }
      if (method === 'generateContent') {
        // The router's classifier asks for a JSON verdict; a simple task keeps the model the CLI picked.
        rec.status = 200;
        res.writeHead(200, { 'content-type': 'application/json' });
        const verdict = JSON.stringify({ complexity_reasoning: 'a simple task', complexity_score: 10 });
        return void res.end(JSON.stringify(response(model, `side-${n++}`, [{ text: verdict }], true, { promptTokenCount: 10, candidatesTokenCount: 5, cachedContentTokenCount: 0 })));
      }
      const turn = queue.shift() ?? { kind: 'text', text: opts.defaultText ?? 'Done.' };
      if (turn.kind === 'quota') {
        return googleError(res, rec, 429, 'RESOURCE_EXHAUSTED', 'You exceeded your current quota, please check your plan and billing details.', [
          { '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [{ quotaMetric: 'generativelanguage.googleapis.com/generate_content_requests', quotaId: turn.quotaId, quotaDimensions: { location: 'global', model }, quotaValue: '1000' }] },
          { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${turn.retryDelaySeconds}s` },
        ]);
      }
      const id = `fake-resp-${n++}`;
      rec.status = 200;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const frame = (body: unknown) => res.write(`data: ${JSON.stringify(body)}\r\n\r\n`);
      if (turn.kind === 'call') {
        frame(response(model, id, [{ functionCall: { name: turn.name, args: turn.args } }], true, usage));
      } else {
        const half = Math.ceil(turn.text.length / 2);
        frame(response(model, id, [{ text: turn.text.slice(0, half) }], false, null));
        frame(response(model, id, [{ text: turn.text.slice(half) }], true, usage));
      }
      res.end();
    },
  });
  return {
    url: server.origin,
    requests: server.requests,
    turnRequests: () => server.requests.filter((r) => r.pathname.endsWith(':streamGenerateContent')),
    queueTurn: (turn) => void queue.push(turn),
    close: () => server.close(),
  };
}

/** The texts of a request's user turns (functionResponses left out), oldest first: what the model was told. */
export function userTexts(rec: RecordedRequest): string[] {
  const contents = (rec.body?.contents ?? []) as Array<{ role?: string; parts?: Array<{ text?: string }> }>;
  return contents.filter((c) => c.role === 'user').flatMap((c) => (c.parts ?? []).flatMap((p) => (typeof p.text === 'string' ? [p.text] : [])));
}

export interface GeminiHome {
  home: string;
  /** A fresh git repository to run in (Gemini keys its sessions by this folder). */
  cwd: string;
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

/**
 * An isolated Gemini home for a test, with API-key auth selected in its settings.json: GOOGLE_GEMINI_BASE_URL alone
 * makes Gemini pick its "gateway" auth, which a headless run refuses ("Invalid auth method selected.", measured).
 */
export async function makeGeminiHome(fakeUrl: string): Promise<GeminiHome> {
  const home = await makeRealTempDir('gemini-home-');
  const cwd = await makeRealTempDir('gemini-repo-');
  await mkdir(path.join(home, '.gemini'), { recursive: true });
  await writeFile(path.join(home, '.gemini', 'settings.json'), JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }));
  await execFileP('git', ['init', '-q', cwd]);
  // TMPDIR: a refused request writes a full error report (gemini-client-error-*.json) into the temp dir.
  const env = { ...cleanEnv(home, ['GEMINI_', 'GOOGLE_']), GEMINI_CLI_HOME: home, GEMINI_API_KEY: 'fake-gemini-key', GOOGLE_GEMINI_BASE_URL: fakeUrl, NO_COLOR: '1', TMPDIR: home };
  return { home, cwd, env, cleanup: async () => (await rm(home, { recursive: true, force: true }), await rm(cwd, { recursive: true, force: true })) };
}
