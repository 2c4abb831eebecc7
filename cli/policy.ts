import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { resolvePaths } from '../core/paths.js';
import { describePolicy } from '../core/policy/describe.js';
import { PolicyDecisionSchema } from '../core/policy/decision.js';
import { renderPolicyExplanation } from '../core/policy/explain.js';
import { zodProblem } from '../core/record-parse.js';
import { PolicyLoader, type PolicyLoadResult } from '../musher/policy/loader.js';
import { fail } from './fail.js';

/**
 * `sleds policy check [path] [--json]` and `sleds policy show [--json]`: the workspace policy read straight from the
 * files (no musher needed). `printPolicyExplanation` is the rendering half of `sleds policy explain <wall>`.
 */

function loader(): PolicyLoader {
  const paths = resolvePaths(process.env, homedir());
  return new PolicyLoader({ configDir: paths.configDir, homeDir: homedir() });
}

function positional(args: string[]): string | null {
  return args.find((a) => !a.startsWith('--')) ?? null;
}

function files(result: PolicyLoadResult, home: string): string {
  if (result.sources.length === 0) return 'no policy file: the built-in defaults apply';
  return result.sources.map((s) => (s.startsWith(`${home}/`) ? `~/${s.slice(home.length + 1)}` : s)).join(', ');
}

export async function runPolicy(args: string[], json: boolean): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'check') return runCheck(rest, json);
  if (sub === 'show') return runShow(json);
  return fail(`policy takes check [path] or show — e.g. sleds policy check .sleds/policy.yml`, 2);
}

function runCheck(args: string[], json: boolean): number {
  const target = positional(args);
  let result: PolicyLoadResult;
  if (target === null) {
    result = loader().forDirectory(process.cwd());
  } else {
    const abs = resolve(target);
    let isDir: boolean;
    try {
      isDir = statSync(abs).isDirectory();
    } catch {
      return fail(`no such file: ${target} — give a policy file's path, or none to check this directory's policy`);
    }
    result = isDir ? loader().forDirectory(abs) : loader().forFile(abs, target);
  }
  const ok = result.errors.length === 0;
  if (json) {
    const n = result.errors.length;
    // A failed check carries { error } like every --json failure, beside the errors themselves.
    const error = ok ? {} : { error: `the policy has ${n} error${n === 1 ? '' : 's'} — fix them and run 'sleds policy check' again` };
    const out = { ok, ...error, sources: result.sources, errors: result.errors, warnings: result.warnings, policy: ok ? result.policy : null };
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return ok ? 0 : 1;
  }
  for (const w of result.warnings) process.stderr.write(`warning: ${w}\n`);
  if (!ok) {
    for (const e of result.errors) process.stderr.write(`${e}\n`);
    const n = result.errors.length;
    return fail(`the policy has ${n} error${n === 1 ? '' : 's'} — fix the line${n === 1 ? '' : 's'} above and run 'sleds policy check' again`);
  }
  const rules = result.policy.rules.length;
  process.stdout.write(`policy ok: ${files(result, homedir())} (${rules} rule${rules === 1 ? '' : 's'}, then ask)\n`);
  return 0;
}

function runShow(json: boolean): number {
  const result = loader().forDirectory(process.cwd());
  if (json) {
    const { policy, sources, provenance, errors, warnings, fallback, repoRoot } = result;
    process.stdout.write(`${JSON.stringify({ repoRoot, sources, provenance, errors, warnings, fallback, policy }, null, 2)}\n`);
    return 0;
  }
  const home = homedir();
  const lines: string[] = [];
  lines.push(`Policy for ${result.repoRoot ?? `${process.cwd()} (not in a repository)`}`);
  lines.push(`  files: ${files(result, home)}`);
  if (result.fallback === 'last-good') lines.push('  (a file has errors: the last good policy applies)');
  else if (result.fallback === 'good-files-only') lines.push('  (a file has errors: only the files without errors apply)');
  else if (result.fallback === 'defaults') lines.push('  (a file has errors: the built-in defaults apply)');
  const described = describePolicy(result.policy);
  const from = (key: string) => (result.provenance[key] ?? ['defaults']).join(' + ');
  const width = Math.max(...described.parts.map((p) => p.key.length), 'rules'.length);
  for (const p of described.parts) lines.push(`${p.key.padEnd(width)}  ${p.text}  [${from(p.key)}]`);
  lines.push(`${'rules'.padEnd(width)}  [${from('rules')}]`);
  for (const r of described.rules) lines.push(`  ${r}`);
  process.stdout.write(`${lines.join('\n')}\n`);
  for (const w of result.warnings) process.stderr.write(`warning: ${w}\n`);
  for (const e of result.errors) process.stderr.write(`${e}\n`);
  return 0;
}

/**
 * `sleds policy explain <wall>`, once the caller has the wall's stored decision (JSON as kept with the wall): the
 * evaluation in words, or the decision itself with --json.
 */
export function printPolicyExplanation(decision: unknown, wallId: string, json: boolean, ruleCount: number | null = null): number {
  const parsed = PolicyDecisionSchema.safeParse(decision);
  if (!parsed.success) {
    return fail(`wall ${wallId} has no readable policy decision (${zodProblem(parsed.error)}) — it was recorded by an older sleds or asked without a policy`);
  }
  if (json) {
    process.stdout.write(`${JSON.stringify({ wall: wallId, decision: parsed.data }, null, 2)}\n`);
    return 0;
  }
  process.stdout.write(renderPolicyExplanation(parsed.data, { wallId, ruleCount }));
  return 0;
}
