import { z } from 'zod';
import { isSessionId } from '../../../core/session-id.js';
import { ZERO_TOKEN_COUNTS } from '../../../core/usage.js';
import { eventText, IGNORED, jsonLine, type HarnessEvent } from '../../../harnesses/events.js';
import { checkResumable, COMMON_HOOK_DIALECT, dottedVersion, readHeadlessStream, type HarnessAdapter, type TranscriptLine } from '../../../harnesses/port.js';

/**
 * A third harness that exists only in tests: "plain", a made-up agent whose transcript and headless stream are
 * the simplest JSON lines. It shows what adding a harness takes: this one folder (the adapter and its fixtures)
 * plus one registry line (`registerHarness(plainHarness)`; a shipped harness is a line in harnesses/registry.ts).
 *
 * Transcript (`<home>/logs/<session>.jsonl`): {"t":"start","session","cwd"}, {"t":"usage","id","session","model",
 * "in","out","at"}, {"t":"limit","session","window","resetsAt","at"}. Headless (`plain run --events`, prompt on
 * stdin): {"e":"begin","session"}, {"e":"tool","name"}, {"e":"ask","text"}, {"e":"tokens","in","out"},
 * {"e":"limited","window","resetsAt"}, {"e":"end","ok","text"}.
 */

const Start = z.object({ t: z.literal('start'), session: z.string(), cwd: z.string().nullable().default(null) });
const Usage = z.object({ t: z.literal('usage'), id: z.string(), session: z.string(), model: z.string(), in: z.number().int(), out: z.number().int(), at: z.string() });
const Limit = z.object({ t: z.literal('limit'), session: z.string(), window: z.string().nullable(), resetsAt: z.number().nullable(), at: z.string() });

function readTranscriptLine(line: string): TranscriptLine {
  const json = jsonLine(line);
  if (json === null) return { kind: 'error', message: 'not a JSON line' };
  const start = Start.safeParse(json);
  if (start.success) return { kind: 'session', sessionId: start.data.session, cwd: start.data.cwd };
  const u = Usage.safeParse(json);
  if (u.success) {
    const d = u.data;
    return {
      kind: 'usage',
      usage: { ...ZERO_TOKEN_COUNTS, inputTokens: d.in, outputTokens: d.out, serviceTier: null, inferenceGeo: null, source: 'plain-log', dedupKey: d.id, sessionId: d.session, model: d.model, timestampMs: Date.parse(d.at), cwd: null },
    };
  }
  const l = Limit.safeParse(json);
  if (l.success) {
    const d = l.data;
    return { kind: 'wall', wall: { source: 'plain-log', dedupKey: `plain:wall:${d.session}:${d.at}`, sessionId: d.session, timestampMs: Date.parse(d.at), window: d.window, resetsAtMs: d.resetsAt === null ? null : d.resetsAt * 1000, message: 'limit' } };
  }
  return { kind: 'ignored' };
}

const Event = z.looseObject({ e: z.string(), session: z.string().optional(), name: z.string().optional(), text: z.string().optional(), in: z.number().int().nonnegative().optional(), out: z.number().int().nonnegative().optional(), ok: z.boolean().optional(), window: z.string().optional(), resetsAt: z.number().optional() });

function parseHeadlessLine(line: string): HarnessEvent[] {
  const json = jsonLine(line);
  if (json === null) return [{ kind: 'error', message: `not an event: ${eventText(line.slice(0, 80))}` }];
  const r = Event.safeParse(json);
  if (!r.success) return [IGNORED];
  const e = r.data;
  switch (e.e) {
    case 'begin':
      return [{ kind: 'turn_started', sessionId: e.session ?? null, model: null }];
    case 'tool':
      return [{ kind: 'tool_call', name: e.name ?? 'tool', callId: null }];
    case 'ask':
      return [{ kind: 'question', text: e.text ?? '' }];
    case 'tokens':
      return [{ kind: 'usage', inputTokens: e.in ?? 0, outputTokens: e.out ?? 0, cacheReadTokens: 0, cacheWriteTokens: 0 }];
    case 'limited':
      return [{ kind: 'rate_limited', resetsAtMs: e.resetsAt === undefined ? null : e.resetsAt * 1000, window: e.window ?? null }];
    case 'end':
      return [{ kind: 'turn_completed', sessionId: null, ok: e.ok !== false, text: e.text ?? null }];
    default:
      return [IGNORED];
  }
}

export const plainHarness: HarnessAdapter = {
  id: 'plain',
  displayName: 'Plain',
  provider: 'anthropic',
  binary: { name: 'plain', installs: 'Plain', readVersion: dottedVersion },
  transcriptSource: 'plain-log',
  transcriptReader: () => ({ read: readTranscriptLine }),
  signalSources: ['plain-log'],
  login: { statusArgs: ['whoami'], loggedOut: (output) => /^anonymous$/m.test(output) },
  hooks: COMMON_HOOK_DIALECT,
  sessions: {
    home: (env, homeDir) => env.PLAIN_HOME || `${homeDir}/.plain`,
    transcriptDir: (home) => `${home}/logs`,
    isTranscriptOf: (fileName, sessionId) => fileName === `${sessionId}.jsonl`,
    sessionIdFromPath: (path) => {
      const stem = (path.split('/').pop() ?? '').replace(/\.jsonl$/, '');
      return isSessionId(stem) ? stem : null;
    },
    installedPath: (senderPath) => senderPath,
  },
  resumeArgv: (r) => {
    checkResumable(r, 'plain', isSessionId);
    return [r.bin, ...(r.headless ? ['run', '--events'] : []), `--session=${r.sessionId}`, ...(r.prompt !== null ? ['--', r.prompt] : [])];
  },
  resumeWords: (sessionId) => ['plain', `--session=${sessionId}`],
  headlessArgv: (r) => {
    if (r.resumeSessionId != null && !isSessionId(r.resumeSessionId)) throw new Error('not a session id');
    return { argv: [r.bin, 'run', '--events', ...(r.resumeSessionId ? [`--session=${r.resumeSessionId}`] : []), ...(r.model ? [`--model=${r.model}`] : [])], stdin: r.prompt };
  },
  parseHeadlessLine,
  readHeadlessResult: (stdout) => {
    const events = readHeadlessStream({ parseHeadlessLine }, stdout);
    const end = [...events].reverse().find((e) => e.kind === 'turn_completed');
    if (!end || end.kind !== 'turn_completed') return null;
    return { text: end.text, isError: !end.ok, sessionId: end.sessionId, costUsd: null, error: end.ok ? null : (end.text ?? 'failed') };
  },
  gatewayLaunch: (t) => ({ ok: true, env: { PLAIN_API_URL: t.anthropicBaseUrl, PLAIN_API_TOKEN: t.token, ...(t.slow ? { PLAIN_SLOW: 'wait' } : {}) }, args: [] }),
  gatewayNeedsSessionProvider: false,
  continuesItselfAtReset: false,
  resumesInPane: false,
};
