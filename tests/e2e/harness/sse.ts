import { expect } from 'vitest';

/**
 * Parses a whole SSE body into {event, data} pairs, asserting the framing on the way: `event: <name>` then one
 * `data: <JSON>` line, frames split by a blank line, and the JSON's `type` equal to the event name (both the
 * Anthropic Messages and the OpenAI Responses streams frame this way).
 */
export function parseSse(text: string): Array<{ event: string; data: any }> {
  expect(text.endsWith('\n\n')).toBe(true);
  return text
    .slice(0, -2)
    .split('\n\n')
    .map((frame) => {
      const lines = frame.split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/^event: [\w.]+$/);
      expect(lines[1]).toMatch(/^data: \{.*\}$/);
      const event = lines[0]!.slice('event: '.length);
      const data = JSON.parse(lines[1]!.slice('data: '.length));
      expect(data.type).toBe(event);
      return { event, data };
    });
}
