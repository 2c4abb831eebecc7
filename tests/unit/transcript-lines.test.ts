import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeHistory } from '../../bench/gen-history.js';
import { chunkState, readTranscriptLine, type TranscriptItem } from '../../musher/ingest/transcript-lines.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'claude');
const S1 = '1098c3a4-5b2e-4f7a-9d61-0c3e8a7b2f45';

/** Reads a chunk of lines as the follower does, with the repeat shortcut or parsing every line. */
function read(lines: string[], skipRepeats: boolean) {
  const state = chunkState(null, skipRepeats);
  const items: TranscriptItem[] = [];
  let offset = 0;
  for (const line of lines) {
    readTranscriptLine(line, offset, 'f.jsonl', state, items);
    offset += line.length + 1;
  }
  return { items, latestReply: [...state.latestReply], known: state.known, skipped: state.repeatsSkipped };
}

function jsonlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.jsonl'))
    .map((e) => join(e.parentPath, e.name));
}

/** A block of a reply as Claude Code writes it (shared/facts/claude-code.md §4). */
function block(o: { id?: string; parent?: string; uuid?: string; ts?: string; out?: number; content?: string; stop?: string; session?: string; model?: string }): string {
  return `{"parentUuid":${o.parent ?? '"p0"'},"isSidechain":false,"message":{"id":"${o.id ?? 'msg_1'}","type":"message","role":"assistant","model":"${o.model ?? 'claude-sonnet-4-5'}","content":${o.content ?? '[{"type":"text","text":"hi"}]'}${o.stop ?? ',"stop_reason":"tool_use","stop_sequence":null'},"usage":{"input_tokens":5,"cache_read_input_tokens":100,"output_tokens":${o.out ?? 30},"service_tier":"standard"}},"requestId":"req_1","type":"assistant","uuid":"${o.uuid ?? 'u1'}","timestamp":"${o.ts ?? '2026-11-19T03:14:10.370Z'}","cwd":"/p","sessionId":"${o.session ?? S1}","version":"2.1.3"}`;
}

describe('reading a chunk: a block that only repeats the one before it is not parsed', () => {
  it('reads the fixtures and a generated history exactly as parsing every line reads them', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sl-lines-'));
    try {
      writeHistory({ projectsDir: dir, targetBytes: 2_000_000, startMs: Date.UTC(2026, 10, 1), linesPerSession: 300 });
      const files = [...jsonlFiles(FIXTURES), ...jsonlFiles(dir)];
      let repeats = 0;
      for (const file of files) {
        const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l.length > 0);
        const fast = read(lines, true);
        const slow = read(lines, false);
        expect({ ...fast, skipped: 0 }).toEqual(slow);
        repeats += fast.skipped;
      }
      // The generated history's replies are two blocks each: about one usage line in two was never parsed.
      expect(repeats).toBeGreaterThan(400);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    ['a later block with the final output count', block({ uuid: 'u2', parent: '"u1"', out: 99 })],
    ['a block of another session', block({ uuid: 'u2', session: '4e7d2c1b-8a9f-4b3c-9d2e-1f0a9b8c7d6e' })],
    ['a block of another model', block({ uuid: 'u2', model: 'claude-opus-4-1' })],
    ['a block whose timestamp is not a time', block({ uuid: 'u2', ts: 'yesterday' })],
    ['a block whose uuid has an escape', block({ uuid: 'u\\"2' })],
    ['a block whose content is not JSON', block({ uuid: 'u2', content: '[{"type":"text","text":"a\u0001"}]' })],
    ['a block whose stop fields hold an object', block({ uuid: 'u2', stop: ',"stop_details":{"a":1}' })],
    ['a block whose parentUuid is a number', block({ uuid: 'u2', parent: '7' })],
    ['the next reply', block({ id: 'msg_2', uuid: 'u2' })],
    ['a later block, 2 seconds on, with other text and stop fields', block({ uuid: 'u3', parent: '"u2"', ts: '2026-11-19T03:14:12.370Z', content: '[{"type":"tool_use","id":"t","name":"Bash","input":{"command":"ls"}}]', stop: ',"stop_reason":null,"stop_sequence":null' })],
  ])('after a first block, %s reads as parsing every line reads it', (_what, second) => {
    const lines = [block({}), second, block({ uuid: 'u9', ts: '2026-11-19T03:15:00.000Z' })];
    expect({ ...read(lines, true), skipped: 0 }).toEqual(read(lines, false));
  });

  it('keeps a skipped block’s time as its session’s latest reply', () => {
    const lines = [block({}), block({ uuid: 'u2', parent: '"u1"', ts: '2026-11-19T03:20:00.000Z' })];
    const { items, latestReply, skipped } = read(lines, true);
    expect(skipped).toBe(1);
    expect(items.filter((i) => i.kind === 'usage')).toHaveLength(1);
    expect(latestReply).toEqual([[S1, Date.parse('2026-11-19T03:20:00.000Z')]]);
  });
});
