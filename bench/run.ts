import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { writeHistory } from './gen-history.js';
import { formatGatewayBench, runGatewayBench } from './gateway.js';
import { formatCalibrationAccuracy, runCalibrationAccuracy } from './calibration-accuracy.js';
import { formatForecastAccuracy, formatSeedSummary, runForecastAccuracy } from './forecast-accuracy.js';
import { formatFirstPromptBench, runFirstPromptBench } from './first-prompt.js';
import { formatFamilies, runFamilies } from './forecast-families.js';
import { resolvePaths } from '../core/paths.js';
import { CCUSAGE_VERSION, ccusageEntry, compareDaily, peakRssMb, runCcusage } from './peer-ccusage.js';

/**
 * `npm run bench [-- --gb 1 --runs 30 --json] [-- --only gateway]` (from source, through tsx, on the built dist/): the hook and the statusline against a bare node start, measured
 * in the same run, plus ingestion throughput and the statusline's cost on a large history.
 */
const args = process.argv.slice(2);
const opt = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const GB = opt('--gb', 1);
const RUNS = opt('--runs', 30);
const JSON_OUT = args.includes('--json');
/** `--only gateway`: that part alone (the others share one generated history and run together). */
const ONLY = args.includes('--only') ? (args[args.indexOf('--only') + 1] ?? '') : null;
// What is measured is always the built product (dist/), whether this file runs from dist/bench or from source (tsx).
const BUILT = import.meta.filename.endsWith('.ts') ? resolve(import.meta.dirname, '..', 'dist') : resolve(import.meta.dirname, '..');
const CLI = join(BUILT, 'cli', 'main.js');
// The entries the harness runs (plugin/hooks/hooks.json, the installed statusLine).
const HOOK = join(BUILT, 'hook.cjs');
const STATUSLINE = join(BUILT, 'statusline.cjs');

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function timeRun(argv: string[], env: NodeJS.ProcessEnv, input: string): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, argv, { env, input, stdio: ['pipe', 'ignore', 'ignore'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}`);
  return ms;
}

/**
 * Interleaves the runs of each case so that machine noise hits them alike. Returns each case's median time and
 * its median ratio to the `node` case of the same round (pairing cancels the slow drift of a shared machine).
 */
function measure(cases: Record<string, () => number>, runs: number): Record<string, number> {
  const samples: Record<string, number[]> = {};
  for (const name of Object.keys(cases)) samples[name] = [];
  for (const fn of Object.values(cases)) fn(); // warm the page cache
  for (let i = 0; i < runs; i++) for (const [name, fn] of Object.entries(cases)) samples[name]!.push(fn());
  const out: Record<string, number> = {};
  for (const [name, xs] of Object.entries(samples)) {
    out[name] = median(xs);
    out[`${name}Ratio`] = median(xs.map((x, i) => x / samples.node![i]!));
  }
  return out;
}

function world() {
  const root = mkdtempSync(join(tmpdir(), 'slb-'));
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: join(root, 'h'), SLEDS_HOME: join(root, 's'), TZ: process.env.TZ ?? 'UTC' };
  mkdirSync(join(root, 'h', '.claude', 'projects'), { recursive: true });
  return { root, env, projects: join(root, 'h', '.claude', 'projects') };
}

type MusherStatus = { ingest: { backfilling: boolean; bytesRead: number }; totals: { usageRecords: number }; musher: { pid: number } };

/**
 * musher's status straight from its socket (GET /v1/status). Waiting on a backfill by spawning `sleds status` every
 * 200 ms cost the backfill about a core on two (6.0 → 4.5 s on 250 MB); the bench measures musher, not its own polling.
 */
function musherStatus(env: NodeJS.ProcessEnv): Promise<MusherStatus> {
  const socketPath = resolvePaths(env, env.HOME!).socketFile;
  return new Promise((done, fail) => {
    const req = request({ socketPath, path: '/v1/status', headers: { host: 'musher' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        if (res.statusCode !== 200) return fail(new Error(`musher status: HTTP ${res.statusCode}: ${body.slice(0, 200)}`));
        try {
          done(JSON.parse(body) as MusherStatus);
        } catch (err) {
          fail(new Error(`musher status: ${(err as Error).message}`));
        }
      });
    });
    req.on('error', (err) => fail(new Error(`musher status over ${socketPath}: ${err.message}`)));
    req.end();
  });
}

function startMusher(env: NodeJS.ProcessEnv): void {
  const r = spawnSync(process.execPath, [CLI, 'musher', 'start'], { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`musher start: ${r.stderr}`);
}

function stopMusher(env: NodeJS.ProcessEnv): void {
  spawnSync(process.execPath, [CLI, 'musher', 'stop'], { env });
}

/** ccusage scans timed: the median is the one compared. */
const PEER_RUNS = 3;
/** Cold backfills timed, each into a store of its own: the median is the one compared, as ccusage's is. */
const MUSHER_RUNS = 3;

/** The machine's CPU time so far, and how much of it the host took (Linux /proc/stat's steal); null elsewhere. */
function cpuTicks(): { steal: number; total: number } | null {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    return { steal: f[7] ?? 0, total: f.slice(0, 8).reduce((a, b) => a + b, 0) };
  } catch {
    return null; // not Linux: the share is not printed
  }
}

/** The run with the median time (of an odd number), and the range of all their times: "2.60–3.42 s". */
function medianRun<T>(runs: readonly T[], seconds: (r: T) => number): { median: T; spread: string } {
  const sorted = [...runs].sort((a, b) => seconds(a) - seconds(b));
  return { median: sorted[Math.floor(sorted.length / 2)]!, spread: `${seconds(sorted[0]!).toFixed(2)}–${seconds(sorted[sorted.length - 1]!).toFixed(2)} s` };
}

/** The share of the machine's CPU time its host took between two readings ("" when it cannot be told). */
function stolenSince(from: ReturnType<typeof cpuTicks>): string {
  const to = cpuTicks();
  if (from === null || to === null || to.total <= from.total) return '';
  return `${((100 * (to.steal - from.steal)) / (to.total - from.total)).toFixed(0)}% stolen by the host`;
}

const results: Record<string, number | string> = {};
const lines: string[] = [];
const say = (s: string): void => {
  lines.push(s);
  if (!JSON_OUT) process.stdout.write(`${s}\n`);
};

async function gatewayBench(): Promise<void> {
  const gw = world();
  const gateway = await runGatewayBench({ cli: CLI, env: gw.env });
  for (const l of formatGatewayBench(gateway)) say(l);
  results.gatewayAddedMedianMs = gateway.addedMedianMs;
  results.gatewayAddedP90Ms = gateway.addedP90Ms;
  results.gatewayStreamsPerS = gateway.gatewayStreamsPerS;
  results.gatewayThroughputRatio = gateway.gatewayStreamsPerS / gateway.directStreamsPerS;
  rmSync(gw.root, { recursive: true, force: true });
}

async function main(): Promise<void> {
  if (ONLY === 'gateway') {
    await gatewayBench();
    if (JSON_OUT) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
    return;
  }
  if (ONLY !== null) throw new Error(`--only takes gateway (the other parts run together), not '${ONLY}'`);
  // 1. Hot paths against a bare node start, on a small history.
  const small = world();
  startMusher(small.env);
  const hookInput = JSON.stringify({ session_id: 'bench', transcript_path: '/nowhere.jsonl', cwd: '/tmp', hook_event_name: 'PostToolUse', tool_name: 'Bash' });
  const slInput = JSON.stringify({ session_id: 'bench', model: { id: 'claude-opus-5-5', display_name: 'Opus 5.5' }, rate_limits: { five_hour: { used_percentage: 62, resets_at: Math.floor(Date.now() / 1000) + 3600 } } });
  const away = { ...small.env, SLEDS_HOME: join(small.root, 'away'), SLEDS_NO_AUTOSTART: '1' };
  const hot = measure(
    {
      node: () => timeRun(['-e', '0'], small.env, ''),
      hook: () => timeRun([HOOK, 'PostToolUse'], small.env, hookInput),
      statusline: () => timeRun([STATUSLINE], small.env, slInput),
      hookAway: () => timeRun([HOOK, 'UserPromptSubmit'], away, hookInput),
    },
    RUNS,
  );
  stopMusher(small.env);
  results.nodeMs = hot.node!;
  results.hookMs = hot.hook!;
  results.statuslineMs = hot.statusline!;
  results.hookAwayMs = hot.hookAway!;
  results.hookRatio = hot.hookRatio!;
  results.statuslineRatio = hot.statuslineRatio!;
  say(`bare node -e 0            ${hot.node!.toFixed(1)} ms (median of ${RUNS}; ratios are medians of same-round pairs)`);
  say(`hook round trip           ${hot.hook!.toFixed(1)} ms  = ${hot.hookRatio!.toFixed(2)}× node`);
  say(`statusline render         ${hot.statusline!.toFixed(1)} ms  = ${hot.statuslineRatio!.toFixed(2)}× node`);
  say(`hook, musher away         ${hot.hookAway!.toFixed(1)} ms  = ${hot.hookAwayRatio!.toFixed(2)}× node (spooled)`);
  rmSync(small.root, { recursive: true, force: true });

  // 1b. A session's first prompt (it starts a task, which is sized from the receipts) on a long history.
  const first = await runFirstPromptBench({ cli: CLI, hook: HOOK, receipts: 5000, runs: Math.min(RUNS, 20) });
  for (const l of formatFirstPromptBench(first)) say(l);
  results.firstPromptSocketMs = first.socketFirstMs;
  results.firstPromptAddedSocketMs = first.socketAddedMs;
  results.firstPromptHookMs = first.hookFirstMs;

  // 2. Ingestion throughput on a generated history.
  const big = world();
  const t0 = Date.now();
  // About 4.4 KB per turn: spread the turns so the whole history falls in the last 30 days, today included.
  const turns = (GB * 1024 ** 3) / 4400;
  const written = writeHistory({ projectsDir: big.projects, targetBytes: GB * 1024 ** 3, startMs: Date.now() - 30 * 86_400_000, linesPerSession: 2000, stepMs: Math.floor((30 * 86_400_000) / turns) });
  say(`generated history         ${(written.bytes / 1e9).toFixed(2)} GB in ${written.files.length} files (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  // The peer on the same history first (both then read it from a warm page cache): ccusage's full scan.
  const peerEnv = { ...big.env, CLAUDE_CONFIG_DIR: join(big.env.HOME!, '.claude') };
  const ccusage = ccusageEntry();
  // Three scans, the median: one run of a few seconds on this machine swings by a second or more either way.
  const peerRuns: Array<Awaited<ReturnType<typeof runCcusage>>> = [];
  const peerTicks = cpuTicks();
  if (ccusage) for (let i = 0; i < PEER_RUNS; i++) peerRuns.push(await runCcusage(ccusage.entry, ['daily', '--json', '--offline'], peerEnv));
  const peerStolen = stolenSince(peerTicks);
  const peerMedian = peerRuns.length > 0 ? medianRun(peerRuns, (r) => r.ms / 1000) : null;
  const peer = peerMedian?.median ?? null;
  if (peer && ccusage) {
    results.ccusageScanMs = peer.ms;
    results.ccusagePeakMb = peer.peakMb ?? -1;
    const spread = peerMedian!.spread;
    say(`ccusage ${ccusage.version} full scan   ${(peer.ms / 1000).toFixed(2)} s, median of ${PEER_RUNS} (${spread}; ${peer.peakMb === null ? 'peak memory not measurable here' : `${peer.peakMb.toFixed(0)} MB peak`}${peerStolen ? `; ${peerStolen}` : ''})`);
  } else say(`ccusage                   not installed — it is a dev dependency (ccusage@${CCUSAGE_VERSION}): npm ci installs it`);
  /** Waits out a cold backfill of the whole history, and checks it counted every reply once. */
  const backfilled = async (env: NodeJS.ProcessEnv): Promise<void> => {
    for (;;) {
      const s = await musherStatus(env);
      if (!s.ingest.backfilling && s.ingest.bytesRead >= written.bytes) {
        if (s.totals.usageRecords !== written.messages) throw new Error(`counted ${s.totals.usageRecords} messages, expected ${written.messages}`);
        return;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  // Timed alone, as ccusage's scans are: nothing else of the bench runs on the machine's cores meanwhile. The first
  // run's musher stays up (the report and the statusline below read its store); the others are stopped as they end.
  const musherTicks = cpuTicks();
  const musherRuns: Array<{ s: number; peakMb: number | null }> = [];
  for (let i = 0; i < MUSHER_RUNS; i++) {
    const env: NodeJS.ProcessEnv = i === 0 ? big.env : { ...big.env, SLEDS_HOME: `${big.env.SLEDS_HOME!}-run${i + 1}` };
    const t1 = process.hrtime.bigint();
    startMusher(env);
    await backfilled(env);
    musherRuns.push({ s: Number(process.hrtime.bigint() - t1) / 1e9, peakMb: peakRssMb((await musherStatus(env)).musher.pid) });
    if (i > 0) {
      stopMusher(env);
      rmSync(env.SLEDS_HOME!, { recursive: true, force: true });
    }
  }
  const musherStolen = stolenSince(musherTicks);
  const { median: musherMedian, spread: musherSpread } = medianRun(musherRuns, (r) => r.s);
  const ingestS = musherMedian.s;
  const musherPeak = musherMedian.peakMb;
  // Hooks while a backfill runs, musher must keep answering: a second cold backfill of the same history (its own store).
  const again: NodeJS.ProcessEnv = { ...big.env, SLEDS_HOME: `${big.env.SLEDS_HOME!}-again` };
  startMusher(again);
  const during = measure(
    {
      node: () => timeRun(['-e', '0'], again, ''),
      hookDuringBackfill: () => timeRun([HOOK, 'PostToolUse'], again, hookInput),
    },
    Math.min(RUNS, 15),
  );
  const stillBackfilling = (await musherStatus(again)).ingest.backfilling;
  await backfilled(again);
  stopMusher(again);
  results.backfillS = ingestS;
  results.backfillPeakMb = musherPeak ?? -1;
  if (peer) results.backfillVsCcusage = (ingestS * 1000) / peer.ms;
  say(
    `musher cold backfill      ${ingestS.toFixed(2)} s, median of ${MUSHER_RUNS} (${musherSpread}; ${musherPeak === null ? 'peak memory not measurable here' : `${musherPeak.toFixed(0)} MB peak`}${musherStolen ? `; ${musherStolen}` : ''})` +
      `${peer ? ` = ${((ingestS * 1000) / peer.ms).toFixed(1)}× ccusage's full scan (goal ≤ 2×)` : ''}`,
  );
  // The reports on the same history: tokens must be identical day by day; dollars are each tool's own price table.
  const report = spawnSync(process.execPath, [CLI, 'report', 'daily', '--json', '--tz', big.env.TZ!], { env: big.env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (report.status !== 0) throw new Error(`sleds report daily: ${report.stderr || report.stdout}`);
  const cmp = peer ? compareDaily(peer.stdout, report.stdout) : null;
  if (cmp) {
    results.reportTokenMismatchDays = cmp.tokenMismatches.length;
    results.reportSledsUsd = cmp.sledsUsd;
    results.reportCcusageUsd = cmp.ccusageUsd;
    say(
      `report daily vs ccusage   ${cmp.days} days, tokens ${cmp.tokenMismatches.length === 0 ? 'identical on every day' : `differ on ${cmp.tokenMismatches.length} (${cmp.tokenMismatches.slice(0, 3).join(', ')})`}; ` +
        `$${cmp.sledsUsd.toFixed(2)} sleds vs $${cmp.ccusageUsd.toFixed(2)} ccusage` +
        (cmp.ccusageUnpriced.length > 0 ? ` (ccusage counts ${cmp.ccusageUnpriced.join(', ')} as $0)` : '') +
        (cmp.sledsUnpriced.length > 0 ? ` (sleds names ${cmp.sledsUnpriced.join(', ')} unpriced)` : ''),
    );
  }
  results.hookDuringBackfillMs = during.hookDuringBackfill!;
  results.hookDuringBackfillRatio = during.hookDuringBackfillRatio!;
  say(`hook during backfill      ${during.hookDuringBackfill!.toFixed(1)} ms  = ${during.hookDuringBackfillRatio!.toFixed(2)}× node${stillBackfilling ? '' : ' (backfill ended before the runs did)'}`);
  results.ingestMBps = written.bytes / 1e6 / ingestS;
  say(`ingestion                 ${(written.bytes / 1e6 / ingestS).toFixed(0)} MB/s (${ingestS.toFixed(1)} s for ${(written.bytes / 1e6).toFixed(0)} MB, ${written.messages} messages)`);

  // 3. The statusline right after a new transcript line lands, on that history.
  const file = written.files[written.files.length - 1]!;
  const sessionId = file.slice(file.lastIndexOf('/') + 1, -'.jsonl'.length);
  let n = 0;
  const line = () =>
    `${JSON.stringify({ type: 'assistant', sessionId, cwd: '/tmp', timestamp: new Date().toISOString(), requestId: `req_b${n}`, uuid: `b${n}`, message: { id: `msg_b${n++}`, model: 'claude-opus-5-5', role: 'assistant', content: [{ type: 'text', text: 'x' }], usage: { input_tokens: 10, output_tokens: 10 } } })}\n`;
  const slBig = JSON.stringify({ session_id: sessionId, transcript_path: file, model: { id: 'claude-opus-5-5', display_name: 'Opus 5.5' } });
  const after = measure(
    {
      node: () => timeRun(['-e', '0'], big.env, ''),
      statuslineAfterLine: () => {
        appendFileSync(file, line());
        return timeRun([STATUSLINE], big.env, slBig);
      },
    },
    RUNS,
  );
  stopMusher(big.env);
  results.statuslineBigMs = after.statuslineAfterLine!;
  results.statuslineBigRatio = after.statuslineAfterLineRatio!;
  say(`statusline after new line ${after.statuslineAfterLine!.toFixed(1)} ms  = ${after.statuslineAfterLineRatio!.toFixed(2)}× node (on the ${(written.bytes / 1e9).toFixed(2)} GB history)`);
  rmSync(big.root, { recursive: true, force: true });

  // 4. The platform-key gateway against calling the fake upstream directly, on a real musher.
  await gatewayBench();

  // 5. Forecast accuracy: simulated traces replayed through the forecaster and two baselines (bench/trace-sim.ts),
  // seed 1 in full and the targets over seeds 1–5; then the $→% calibration (bench/calibration-accuracy.ts).
  const accuracy = [1, 2, 3, 4, 5].map((seed) => runForecastAccuracy({ seed }));
  for (const l of formatForecastAccuracy(accuracy[0]!)) say(l);
  for (const l of formatSeedSummary(accuracy)) say(l);
  results.forecastTargets = JSON.stringify(Object.fromEntries(accuracy.map((r) => [r.seed, r.targets])));
  // Every trace family and seed (bench/forecast-families.ts): the families it was tuned on and the one held out of
  // all tuning (taper), scored against linear pace.
  const families = runFamilies({ seeds: [1, 2, 3, 4, 5], families: ['switch', 'bursts'], heldOut: true });
  for (const l of formatFamilies(families)) say(l);
  results.forecastFamilies = JSON.stringify(families.map((f) => ({ family: f.family, role: f.role, seeds: f.seeds.map((x) => ({ seed: x.seed, targets: x.report.targets })) })));
  const calibration = runCalibrationAccuracy({ seed: 1 });
  for (const l of formatCalibrationAccuracy(calibration)) say(l);
  results.calibration = JSON.stringify(calibration.plain);
  if (JSON_OUT) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
}

main().catch((e: Error) => {
  process.stderr.write(`bench: ${e.message}\n`);
  process.exitCode = 1;
});
