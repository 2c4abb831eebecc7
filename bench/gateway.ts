import http from 'node:http';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { requestMusher } from '../hooks/musher-client.js';

/**
 * The gateway's cost, measured on a real musher (key in the 0600 file, SQLite rail, token check, allowance check):
 * the added latency of a streamed Messages request through the gateway against the same request sent straight to
 * the fake upstream, interleaved in one run; and the throughput of 50 concurrent streams both ways.
 */
export interface GatewayBench {
  pairs: number;
  directMedianMs: number;
  gatewayMedianMs: number;
  /** Medians and p90 of the per-pair difference (gateway − direct): what the gateway adds to one request. */
  addedMedianMs: number;
  addedP90Ms: number;
  addedFirstByteMedianMs: number;
  concurrency: number;
  streams: number;
  directStreamsPerS: number;
  gatewayStreamsPerS: number;
  meteredRecords: number;
}

/** The fake upstream runs in its own process (bench/gateway-upstream.ts), as a real API would: otherwise the direct
 * calls would never leave the bench's own event loop and the comparison would charge the gateway for a process hop
 * the direct path skips. */
async function fakeUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  // From source (tsx) the upstream runs from source too: the same loader flags, the .ts file.
  const ext = import.meta.filename.endsWith('.ts') ? '.ts' : '.js';
  const child = spawn(process.execPath, [...process.execArgv, join(import.meta.dirname, `gateway-upstream${ext}`)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes('\n')) resolve(out.trim());
    });
    child.once('exit', (code) => reject(new Error(`the fake upstream exited (${code})`)));
  });
  return {
    url,
    close: () => new Promise<void>((r) => {
      child.once('exit', () => r());
      child.stdin.end();
    }),
  };
}

const BODY = JSON.stringify({ model: 'claude-opus-5-5', max_tokens: 1024, stream: true, messages: [{ role: 'user', content: 'bench' }] });

/** One streamed request read to its end: [ms to the first byte, ms to the end]. */
function timedRequest(agent: http.Agent, base: string, headers: Record<string, string>): Promise<[number, number]> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    let first = 0;
    const req = http.request(`${base}/v1/messages?beta=true`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers } }, (res) => {
      res.on('data', () => {
        if (first === 0) first = Number(process.hrtime.bigint() - t0) / 1e6;
      });
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode} from ${base}`));
        else resolve([first, Number(process.hrtime.bigint() - t0) / 1e6]);
      });
    });
    req.on('error', reject);
    req.end(BODY);
  });
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

async function throughput(agent: http.Agent, base: string, headers: Record<string, string>, concurrency: number, perWorker: number): Promise<number> {
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = 0; i < perWorker; i++) await timedRequest(agent, base, headers);
    }),
  );
  return (concurrency * perWorker) / (Number(process.hrtime.bigint() - t0) / 1e9);
}

export async function runGatewayBench(opts: { cli: string; env: NodeJS.ProcessEnv; pairs?: number; concurrency?: number; perWorker?: number }): Promise<GatewayBench> {
  const pairs = opts.pairs ?? 400;
  const concurrency = opts.concurrency ?? 50;
  const perWorker = opts.perWorker ?? 20;
  const upstream = await fakeUpstream();
  const env: NodeJS.ProcessEnv = { ...opts.env, SLEDS_KEYRING: 'file', SLEDS_SEAT: 'bench' };
  // musher takes its upstream from config.yml only (never its environment).
  mkdirSync(join(env.SLEDS_HOME!, 'config'), { recursive: true, mode: 0o700 });
  writeFileSync(join(env.SLEDS_HOME!, 'config', 'config.yml'), `upstreams:\n  anthropic: ${upstream.url}\n`, { mode: 0o600 });
  const run = (args: string[], input?: string) => {
    const r = spawnSync(process.execPath, [opts.cli, ...args], { env, input, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`sleds ${args.join(' ')}: ${r.stderr}`);
  };
  run(['key', 'set', 'anthropic'], 'sk-ant-api03-bench-key');
  run(['musher', 'start']);
  try {
    const socket = `${env.SLEDS_HOME}/run/musher.sock`;
    const minted = await requestMusher(socket, 'POST', '/v1/gateway/tokens', JSON.stringify({ sessionId: 'bench' }), {}, 5000);
    if (minted.status !== 200) throw new Error(`token: ${minted.body}`);
    const { token, baseUrl } = JSON.parse(minted.body) as { token: string; baseUrl: string };
    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    const viaGateway = { 'x-api-key': token };
    const direct = { 'x-api-key': 'sk-ant-api03-bench-key' };

    for (let i = 0; i < 50; i++) {
      await timedRequest(agent, upstream.url, direct);
      await timedRequest(agent, baseUrl, viaGateway);
    }
    const d: number[] = [];
    const g: number[] = [];
    const added: number[] = [];
    const addedFirst: number[] = [];
    for (let i = 0; i < pairs; i++) {
      // Alternate which goes first, so neither always runs on a warmer loop.
      let a: [number, number];
      let b: [number, number];
      if (i % 2 === 0) {
        a = await timedRequest(agent, upstream.url, direct);
        b = await timedRequest(agent, baseUrl, viaGateway);
      } else {
        b = await timedRequest(agent, baseUrl, viaGateway);
        a = await timedRequest(agent, upstream.url, direct);
      }
      d.push(a[1]);
      g.push(b[1]);
      added.push(b[1] - a[1]);
      addedFirst.push(b[0] - a[0]);
    }
    const directStreamsPerS = await throughput(agent, upstream.url, direct, concurrency, perWorker);
    const gatewayStreamsPerS = await throughput(agent, baseUrl, viaGateway, concurrency, perWorker);
    agent.destroy();
    const status = await requestMusher(socket, 'GET', '/v1/status', null, {}, 10_000);
    const records = (JSON.parse(status.body) as { platformKey: { bySeatModel: Array<{ records: number }> } }).platformKey.bySeatModel.reduce((a, r) => a + r.records, 0);
    return {
      pairs,
      directMedianMs: quantile(d, 0.5),
      gatewayMedianMs: quantile(g, 0.5),
      addedMedianMs: quantile(added, 0.5),
      addedP90Ms: quantile(added, 0.9),
      addedFirstByteMedianMs: quantile(addedFirst, 0.5),
      concurrency,
      streams: concurrency * perWorker,
      directStreamsPerS,
      gatewayStreamsPerS,
      meteredRecords: records,
    };
  } finally {
    spawnSync(process.execPath, [opts.cli, 'musher', 'stop'], { env });
    await upstream.close();
  }
}

export function formatGatewayBench(r: GatewayBench): string[] {
  return [
    `gateway, added per request ${r.addedMedianMs.toFixed(2)} ms median, ${r.addedP90Ms.toFixed(2)} ms p90 (first byte +${r.addedFirstByteMedianMs.toFixed(2)} ms; ${r.gatewayMedianMs.toFixed(2)} vs ${r.directMedianMs.toFixed(2)} ms direct, ${r.pairs} interleaved pairs; target < 2 ms)`,
    `gateway, ${r.concurrency} concurrent streams ${r.gatewayStreamsPerS.toFixed(0)} streams/s = ${(r.gatewayStreamsPerS / r.directStreamsPerS).toFixed(2)}× direct (${r.directStreamsPerS.toFixed(0)}/s; ${r.streams} streams each way, ${r.meteredRecords} metered)`,
  ];
}
