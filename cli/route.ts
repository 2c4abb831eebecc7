import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { RouteShowReply } from '../protocol/schemas.js';
import type { z } from 'zod';
import { ROUTE_ID } from '../core/routes/route-file.js';
import { formatUsd } from '../core/format.js';
import { askMusher, reportRefusal } from './musher-call.js';
import { fail } from './fail.js';

/**
 * `sleds routes`, `sleds route new|load|show|arm|mode|decisions` (issue 14 § 3). show, arm and mode load the route's
 * file first (musher reads `.sleds/routes/<key>.yml` of the cwd's repository), so what they act on is the file as it
 * is now; a file that does not pass is refused with its one file:line line.
 */

const USAGE = 'route takes new <key>, load [<key>], show <key>, arm <key> [node…], mode <key> approve|auto, answer <question|route/node> A|B|C|D|<answer…>, decisions <key>';

function out(json: boolean, body: unknown, text: string): number {
  process.stdout.write(json ? `${JSON.stringify(body, null, 2)}\n` : `${text}\n`);
  return 0;
}

async function load(key: string | undefined): Promise<number | null> {
  const res = await askMusher('routeLoad', { body: { cwd: process.cwd(), ...(key ? { key } : {}) } }, 30_000);
  if (!res) return 1;
  if (!res.ok) return reportRefusal(res);
  return null;
}

type Show = z.output<typeof RouteShowReply>;
const usd = (n: number) => formatUsd(Math.round(n * 1_000_000));
const bandText = (b: { lowUsd: number; highUsd: number; lowMin: number; highMin: number } | null) => (b ? `${usd(b.lowUsd)}–${usd(b.highUsd)}, ${b.lowMin}–${b.highMin} min` : 'no band');

/** The waves drawn: a block per wave, a line per node with its state, band and PR (and its receipt's line under it). */
export function drawRoute(s: Show): string {
  const lines = [`${s.route.key}: ${s.route.title}${s.route.tracker ? ` (${s.route.tracker})` : ''} · ${s.route.mode} · ${bandText(s.band)}`];
  // An overnight job musher made has no route file: say what it is and where it is followed.
  if (s.route.filePath === '') lines.push(`${s.route.notes ?? 'an overnight job'} — no route file; sleds queue shows it`);
  s.waves.forEach((wave, i) => {
    lines.push(`wave ${i}`);
    for (const n of wave) {
      const deps = n.dependsOn.length > 0 ? ` ← ${n.dependsOn.join(', ')}` : '';
      const pr = n.prNumber !== null ? ` · PR #${n.prNumber}` : '';
      const flags = [n.armed ? 'armed' : 'not armed', s.route.mode === 'approve' && n.approved ? 'started' : ''].filter(Boolean).join(', ');
      lines.push(`  ${n.nodeId.padEnd(16)} ${String(n.state).padEnd(18)} ${bandText(n.band)}${pr} · ${flags}${deps}`);
      // Beside its PR, the receipt it landed with.
      if (n.receipt) lines.push(`  ${''.padEnd(16)} receipt: ${n.receipt}`);
    }
  });
  lines.push(s.line);
  return lines.join('\n');
}

function skeleton(key: string, title: string, brief: string, tracker: string | null): string {
  const indent = (t: string) => t.trim().split('\n').map((l) => `      ${l}`).join('\n');
  return [
    `title: ${JSON.stringify(title)}`,
    ...(tracker ? [`tracker: ${JSON.stringify(tracker)}`] : []),
    'nodes:',
    `  - id: ${key.slice(0, 40)}`,
    `    title: ${JSON.stringify(title)}`,
    '    brief: |',
    indent(brief),
    '    depends_on: []',
    '',
  ].join('\n');
}

export async function runRoutes(json: boolean): Promise<number> {
  const res = await askMusher('routes', {});
  if (!res) return 1;
  if (!res.ok) return reportRefusal(res, json);
  const text = res.body.routes.length === 0 ? 'No routes yet: write .sleds/routes/<key>.yml and run sleds route load.' : res.body.routes.map((r) => `${r.key.padEnd(16)} ${r.mode.padEnd(8)} ${r.landed}/${r.nodes} landed  ${r.title}\n  ${r.line}`).join('\n');
  return out(json, res.body, text);
}

export async function runRoute(args: string[], json: boolean): Promise<number> {
  // `--from <item>` takes a value: it is not one of the words.
  const words = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--from');
  const [sub, key, ...rest] = words;
  if (sub === undefined) return fail(USAGE, 2);
  if (sub === 'answer') {
    // `<route>/<node>` (or a node id only one route has): checked by musher, which knows the routes.
    const answer = [...rest].join(' ').trim();
    if (!key || !answer) return fail('route answer takes a question (or node) and the answer — e.g. sleds route answer eng-503/mailer A, or "send a link, not the file" (sleds needs lists them)', 2);
    const res = await askMusher('routeAnswer', { body: { node: key, answer, by: process.env.SLEDS_SEAT || process.env.USER || undefined } });
    if (!res) return 1;
    if (!res.ok) return reportRefusal(res, json);
    return out(json, res.body, `${res.body.key}/${res.body.node}: answered — the engine resumes it with your answer`);
  }
  if (key !== undefined && !ROUTE_ID.test(key)) return fail(`'${key}' is not a route key (lowercase letters, digits and '-', e.g. eng-503)`, 2);
  switch (sub) {
    case 'new': {
      const fromAt = args.indexOf('--from');
      if (fromAt >= 0) {
        const from = args[fromAt + 1];
        if (!key || !from || from.startsWith('--')) return fail('route new --from takes a tracker item — e.g. sleds route new eng-503 --from acme/shop#12', 2);
        const res = await askMusher('routeNew', { body: { cwd: process.cwd(), key, from } }, 30_000);
        if (!res) return 1;
        if (!res.ok) return reportRefusal(res, json);
        const waves = res.body.waves.map((w, i) => `  wave ${i}: ${w.join(', ')}`).join('\n');
        return out(json, res.body, `wrote ${res.body.file} from ${from}:\n${waves}\nreview it like code (edit the briefs and depends_on), then sleds route show ${key}`);
      }
      if (!key || rest.length > 0) return fail('route new takes a key — e.g. sleds route new eng-503', 2);
      let root: string;
      try {
        root = execFileSync('git', ['rev-parse', '--show-toplevel'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
      } catch {
        // git says why on its stderr (ignored): here it means no repository
        return fail('not in a git repository: routes live in <repo>/.sleds/routes/<key>.yml');
      }
      const file = join(root, '.sleds', 'routes', `${key}.yml`);
      if (existsSync(file)) return fail(`${join('.sleds', 'routes', `${key}.yml`)} is there already — edit it, or pick another key`);
      mkdirSync(join(root, '.sleds', 'routes'), { recursive: true });
      writeFileSync(file, skeleton(key, key, 'What this node should do, in a few sentences an agent can act on.', null), { flag: 'wx' });
      return out(json, { key, file }, `wrote ${file}: fill in the nodes, then sleds route show ${key}`);
    }
    case 'load': {
      const res = await askMusher('routeLoad', { body: { cwd: process.cwd(), ...(key ? { key } : {}) } }, 30_000);
      if (!res) return 1;
      if (!res.ok) return reportRefusal(res, json);
      return out(json, res.body, res.body.loaded.length === 0 ? `no route files in ${join(res.body.repoRoot, '.sleds', 'routes')}` : `loaded ${res.body.loaded.join(', ')}`);
    }
    case 'show': {
      if (!key || rest.length > 0) return fail('route show takes a key — e.g. sleds route show eng-503', 2);
      const bad = await load(key);
      if (bad !== null) return bad;
      const res = await askMusher('route', { params: { key } });
      if (!res) return 1;
      if (!res.ok) return reportRefusal(res, json);
      return out(json, res.body, drawRoute(res.body));
    }
    case 'arm': {
      if (!key) return fail('route arm takes a key and optionally nodes — e.g. sleds route arm eng-503 schema', 2);
      const bad = await load(key);
      if (bad !== null) return bad;
      const res = await askMusher('routeArm', { params: { key }, body: { nodes: rest.length > 0 ? rest : null } });
      if (!res) return 1;
      if (!res.ok) return reportRefusal(res, json);
      const next = res.body.mode === 'approve' ? ` (approve mode: nothing starts until sleds start ${key}/<node>)` : ' (auto: they start as they become ready)';
      return out(json, res.body, `armed ${res.body.armed.join(', ')}${next}`);
    }
    case 'mode': {
      const mode = rest[0];
      if (!key || (mode !== 'approve' && mode !== 'auto') || rest.length > 1) return fail('route mode takes a key and approve or auto — e.g. sleds route mode eng-503 auto', 2);
      const bad = await load(key);
      if (bad !== null) return bad;
      const res = await askMusher('routeMode', { params: { key }, body: { mode } });
      if (!res) return 1;
      if (!res.ok) return reportRefusal(res, json);
      return out(json, res.body, `${key} is ${mode}`);
    }
    case 'decisions': {
      if (!key) return fail('route decisions takes a key — e.g. sleds route decisions eng-503', 2);
      const res = await askMusher('routeDecisions', { params: { key } });
      if (!res) return 1;
      if (!res.ok) return reportRefusal(res, json);
      const text = res.body.decisions.length === 0 ? `no decisions on ${key} yet` : res.body.decisions.map((d) => `${new Date(d.answeredAt).toISOString()}  ${d.nodeId}: ${d.question} → ${d.answer} (${d.answeredBy}, ${d.source}${d.rung ? ` · ${d.rung}${d.reason ? `: ${d.reason}` : ''}` : ''})`).join('\n');
      return out(json, res.body, text);
    }
    default:
      return fail(USAGE, 2);
  }
}
