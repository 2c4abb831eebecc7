/**
 * An incremental Server-Sent Events reader for the gateway's tee: text goes in as it arrives (cut anywhere, even
 * inside a line), whole events come out. Pure. Framing per the SSE spec: `event:`/`data:` fields, `\n`, `\r\n` or
 * `\r` line ends, a blank line ends an event, lines starting with `:` are comments, several `data:` lines join with
 * `\n`. See shared/facts/model-apis.md §1.1 and §5.3.
 */
export interface SseEvent {
  /** The `event:` field, or "message" when the event had none. */
  event: string;
  data: string;
}

export class SseReader {
  private buffer = '';
  private event = '';
  private data: string[] = [];
  /** A `\r` ended the last chunk: a `\n` opening the next one belongs to it. */
  private pendingCr = false;

  /** Feeds decoded text; returns the events it completed. */
  push(text: string): SseEvent[] {
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = false;
    this.buffer += text;
    const out: SseEvent[] = [];
    let start = 0;
    // Where the next "\r" is, looked up again only once passed: most streams have none, and searching the whole
    // rest of the buffer for one at every line would make a chunk cost its length squared.
    let cr = this.buffer.indexOf('\r');
    for (;;) {
      const lf = this.buffer.indexOf('\n', start);
      if (cr >= 0 && cr < start) cr = this.buffer.indexOf('\r', start);
      let end: number;
      let next: number;
      if (cr >= 0 && (lf < 0 || cr < lf)) {
        end = cr;
        if (cr + 1 === this.buffer.length) {
          // Could be the first half of "\r\n": take the line, swallow a "\n" that opens the next chunk.
          next = cr + 1;
          this.pendingCr = true;
        } else {
          next = this.buffer[cr + 1] === '\n' ? cr + 2 : cr + 1;
        }
      } else if (lf >= 0) {
        end = lf;
        next = lf + 1;
      } else {
        break;
      }
      this.line(this.buffer.slice(start, end), out);
      start = next;
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  /** The event cut off by the end of the stream (no closing blank line), if any. */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    if (this.buffer.length > 0) this.line(this.buffer, out);
    this.buffer = '';
    this.line('', out);
    return out;
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.data.length > 0) out.push({ event: this.event || 'message', data: this.data.join('\n') });
      this.event = '';
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
  }
}
