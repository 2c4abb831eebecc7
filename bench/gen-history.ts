import { mkdirSync, openSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Writes a realistic Claude Code history (projects/<slug>/<session>.jsonl) for tests and benchmarks: user
 * prompts, tool results, and assistant replies written the way Claude Code writes them (one record per content
 * block, usage repeated). Deterministic for a given seed.
 */
export interface HistorySpec {
  projectsDir: string;
  /** Stop once about this many bytes are written. */
  targetBytes: number;
  /** Lines per session file. */
  linesPerSession?: number;
  /** Timestamps run from here, one turn a minute, across days. */
  startMs: number;
  seed?: number;
  models?: string[];
  /** Time between turns (default one minute). */
  stepMs?: number;
}

export interface HistoryWritten {
  bytes: number;
  files: string[];
  /** Distinct assistant messages (message.id + requestId): what a correct reader counts. */
  messages: number;
  lines: number;
}

function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}

function uuid(r: () => number): string {
  const h = () => Math.floor(r() * 0x10000).toString(16).padStart(4, '0');
  return `${h()}${h()}-${h()}-4${h().slice(1)}-a${h().slice(1)}-${h()}${h()}${h()}`;
}

const FILLER = 'The quick brown fox reads the transcript and prices every token it finds along the way. ';

export function writeHistory(spec: HistorySpec): HistoryWritten {
  const r = rng(spec.seed ?? 42);
  const models = spec.models ?? ['claude-opus-5-5', 'claude-sonnet-4-6', 'claude-haiku-4-5'];
  const perSession = spec.linesPerSession ?? 400;
  const out: HistoryWritten = { bytes: 0, files: [], messages: 0, lines: 0 };
  let t = spec.startMs;
  let project = 0;
  while (out.bytes < spec.targetBytes) {
    const cwd = `/home/dev/code/project-${project % 7}`;
    const slug = cwd.replace(/[^A-Za-z0-9]/g, '-');
    const dir = join(spec.projectsDir, slug);
    mkdirSync(dir, { recursive: true });
    const sessionId = uuid(r);
    const file = join(dir, `${sessionId}.jsonl`);
    const fd = openSync(file, 'w');
    out.files.push(file);
    // In Claude Code's own field order (shared/facts/claude-code.md §4): the session's fields come last, after the message.
    const base = { userType: 'external', entrypoint: 'cli', cwd, sessionId, version: '2.1.328', gitBranch: 'main' };
    let parent: string | null = null;
    let lines = 0;
    const model = models[project % models.length]!;
    const write = (rec: object): void => {
      const line = `${JSON.stringify(rec)}\n`;
      writeSync(fd, line);
      out.bytes += Buffer.byteLength(line);
      out.lines++;
      lines++;
    };
    while (lines < perSession && out.bytes < spec.targetBytes) {
      t += spec.stepMs ?? 60_000;
      const userUuid = uuid(r);
      write({ parentUuid: parent, isSidechain: false, promptId: uuid(r), type: 'user', message: { role: 'user', content: `Please fix the failing test number ${Math.floor(r() * 1000)}. ${FILLER.repeat(1 + Math.floor(r() * 6))}` }, uuid: userUuid, timestamp: new Date(t).toISOString(), permissionMode: 'default', ...base });
      const msgId = `msg_${uuid(r).replace(/-/g, '')}`;
      const requestId = `req_${uuid(r).replace(/-/g, '')}`;
      const usage = {
        input_tokens: 1 + Math.floor(r() * 5000),
        cache_creation_input_tokens: Math.floor(r() * 3000),
        cache_read_input_tokens: Math.floor(r() * 60000),
        output_tokens: 1 + Math.floor(r() * 2000),
        service_tier: 'standard',
        cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: 0 },
      };
      usage.cache_creation.ephemeral_5m_input_tokens = usage.cache_creation_input_tokens;
      const textUuid = uuid(r);
      const message = (content: object[]) => ({ id: msgId, type: 'message', role: 'assistant', model, content, stop_reason: 'tool_use', usage });
      write({ parentUuid: userUuid, isSidechain: false, message: message([{ type: 'text', text: FILLER.repeat(1 + Math.floor(r() * 8)) }]), requestId, requestedModel: model, type: 'assistant', uuid: textUuid, timestamp: new Date(t + 5_000).toISOString(), ...base });
      const toolUuid = uuid(r);
      const toolId = `toolu_${uuid(r).replace(/-/g, '')}`;
      write({ parentUuid: textUuid, isSidechain: false, message: message([{ type: 'tool_use', id: toolId, name: 'Bash', input: { command: 'npm test', description: 'run the tests' } }]), requestId, requestedModel: model, type: 'assistant', uuid: toolUuid, timestamp: new Date(t + 6_000).toISOString(), ...base });
      out.messages++;
      parent = uuid(r);
      write({ parentUuid: toolUuid, isSidechain: false, type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolId, content: FILLER.repeat(2 + Math.floor(r() * 20)) }] }, uuid: parent, timestamp: new Date(t + 30_000).toISOString(), ...base });
    }
    closeSync(fd);
    project++;
  }
  return out;
}
