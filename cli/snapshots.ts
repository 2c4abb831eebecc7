import { formatAge, formatClock, formatReset } from '../core/format.js';
import { shortSnapshotId, type SnapshotManifest, type SnapshotRow } from '../core/snapshot.js';
import { askMusher, reportRefusal } from './musher-call.js';
import { fail } from './fail.js';

/** `sleds snapshots [--json]` and `sleds snapshot show <id> [--json]`: the snapshots taken at walls, via musher. */

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

/** "Nov 29 4:10pm (2h ago)", in the user's time zone. */
function when(ms: number, now: number): string {
  const day = new Date(ms).toLocaleDateString('en-US', { month: 'short', day: 'numeric' });
  return `${day} ${formatClock(ms)} (${formatAge(now - ms)} ago)`;
}

export async function runSnapshots(json: boolean): Promise<number> {
  const res = await askMusher('snapshots', {}, 10_000);
  if (!res) return 1;
  if (!res.ok) return reportRefusal(res, json);
  const list = res.body;
  if (json) {
    process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
    return 0;
  }
  if (list.snapshots.length === 0) {
    process.stdout.write('No snapshots yet: one is taken when a session hits the wall.\n');
    return 0;
  }
  const now = Date.now();
  for (const s of list.snapshots) {
    const cols = [shortSnapshotId(s.id), s.sessionId.slice(0, 8), s.harness.padEnd(11), when(s.takenAtMs, now).padEnd(30), formatBytes(s.sizeBytes).padStart(8)];
    process.stdout.write(`${cols.join('  ')}${s.note !== null ? `  ${s.note}` : ''}\n`);
  }
  process.stdout.write(`\n'sleds snapshot show <id>' shows one (any unambiguous prefix of its id will do).\n`);
  return 0;
}

function describe(row: SnapshotRow, m: SnapshotManifest, now: number): string[] {
  const out: string[] = [];
  out.push(`Snapshot ${shortSnapshotId(row.id)}  (${row.id})`);
  out.push(`Session     ${m.sessionId} · ${m.harness}${m.harnessVersion !== null ? ` ${m.harnessVersion}` : ''}${m.model !== null ? ` · ${m.model}` : ''}`);
  out.push(`Cwd         ${m.cwd}`);
  out.push(`Taken       ${when(row.takenAtMs, now)}${row.wallId !== null ? ` at wall ${row.wallId}` : ''} · ${formatBytes(row.sizeBytes)}`);
  if (m.transcript.length === 0) out.push('Transcript  none kept');
  for (const t of m.transcript) out.push(`Transcript  ${t.path} (${formatBytes(t.bytes)}${t.role === 'fork-parent' ? ', fork parent' : ''})`);
  const g = m.git;
  if (g === null) out.push('Git         none (see notes)');
  else {
    out.push(`Git         ${g.remote ?? 'no remote'} · ${g.branch !== null ? `branch ${g.branch}` : 'detached HEAD'} · ${g.head !== null ? `HEAD ${g.head.slice(0, 12)}` : 'no commit yet'}`);
    const patch = g.patch !== null ? `patch ${formatBytes(g.patch.bytes)}` : 'no patch';
    out.push(`            ${patch} · ${g.numstat.length} tracked file(s) changed · ${g.untracked.length} untracked file(s) kept${g.subdir ? ` · cwd ${g.subdir}/` : ''}`);
    for (const c of g.cut) out.push(`            left out: ${c.path ?? 'the tracked-changes patch'} (${c.why})`);
  }
  if (m.bars.length > 0) {
    const bars = m.bars.map((b) => `${b.window} ${Math.round(b.usedPct)}%${b.resetsAtMs !== null ? ` resets ${formatReset(b.resetsAtMs, now)}` : ''}`);
    out.push(`Bars        ${bars.join(' · ')}${m.bindingWindow !== null ? ` · binding: ${m.bindingWindow}` : ''}`);
  }
  for (const n of m.notes) out.push(`Note        ${n}`);
  return out;
}

export async function runSnapshotCommand(args: string[], json: boolean): Promise<number> {
  const [sub, id] = args.filter((a) => a !== '--json');
  if (sub !== 'show' || id === undefined || id.length === 0) {
    return fail(`snapshot takes 'show <id>' — e.g. sleds snapshot show jd7k2m9qa41p (ids: sleds snapshots)`, 2);
  }
  const res = await askMusher('snapshot', { params: { id } }, 10_000);
  if (!res) return 1;
  if (!res.ok) return reportRefusal(res, json);
  const answer = res.body;
  if (json) {
    process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
    return 0;
  }
  process.stdout.write(`${describe(answer.snapshot, answer.manifest, Date.now()).join('\n')}\n\n${answer.brief}`);
  return 0;
}
