import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The benchmark's fake Anthropic API, in its own process: every POST answers a realistic stream (message_start,
 * 40 text deltas, message_delta, message_stop; about 6 KB) with a fresh request-id. Prints its URL, then serves
 * until stdin closes.
 */
const ev = (type: string, data: object): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

/** A realistic streamed answer: message_start, 40 text deltas, message_delta, message_stop (about 6 KB). */
function answer(n: number): string[] {
  const out = [
    ev('message_start', {
      message: { id: `msg_bench_${n}`, type: 'message', role: 'assistant', model: 'claude-opus-5-5', content: [], stop_reason: null,
        usage: { input_tokens: 2000, cache_creation_input_tokens: 500, cache_read_input_tokens: 10_000, cache_creation: { ephemeral_5m_input_tokens: 500, ephemeral_1h_input_tokens: 0 }, output_tokens: 1, service_tier: 'standard' } },
    }),
    ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    ev('ping', {}),
  ];
  for (let i = 0; i < 40; i++) out.push(ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: `token run ${i} of the benchmark answer, about this long. ` } }));
  out.push(ev('content_block_stop', { index: 0 }));
  out.push(ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { input_tokens: 2000, cache_creation_input_tokens: 500, cache_read_input_tokens: 10_000, output_tokens: 300 } }));
  out.push(ev('message_stop', {}));
  return out;
}

async function main(): Promise<void> {
  let n = 0;
  const server = http.createServer({ noDelay: true }, (req, res) => {
    req.resume();
    req.on('end', () => {
      const id = ++n;
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'request-id': `req_bench_${id}` });
      for (const e of answer(id)) res.write(e);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => {
    server.close();
    server.closeAllConnections();
  });
}

main().catch((e: Error) => {
  process.stderr.write(`bench upstream: ${e.message}\n`);
  process.exitCode = 1;
});
