import { askMusher, reportRefusal } from './musher-call.js';
import { findRepoRoot } from '../musher/policy/repo-root.js';
import { fail } from './fail.js';

/** `sleds estimate <text> [--type T] [--model M] [--json]`: the band for a request, from this folder's repository. */

const VALUE_FLAGS = new Set(['--type', '--model']);

export async function runEstimate(args: string[], json: boolean): Promise<number> {
  const words: string[] = [];
  const opts: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (VALUE_FLAGS.has(a)) {
      const v = args[++i];
      if (v === undefined || v.startsWith('--')) {
        return fail(`${a} needs a value, e.g. sleds estimate "fix the login test" ${a === '--type' ? '--type bugfix' : '--model claude-opus-5-5'}`, 2);
      }
      opts[a.slice(2)] = v;
    } else if (a === '--json') continue;
    else if (a.startsWith('--')) {
      return fail(`estimate takes --type, --model and --json, not '${a}'`, 2);
    } else words.push(a);
  }
  const text = words.join(' ').trim();
  if (!text) {
    return fail('estimate what? e.g. sleds estimate "fix the flaky login test" --type bugfix', 2);
  }
  const cwd = process.cwd();
  const body = { text, repo: findRepoRoot(cwd) ?? cwd, ...(opts.type ? { type: opts.type } : {}), ...(opts.model ? { model: opts.model } : {}) };
  const res = await askMusher('estimate', { body });
  if (!res) return 1;
  if (!res.ok) return reportRefusal(res, json);
  const answer = res.body;
  process.stdout.write(json ? `${JSON.stringify(answer, null, 2)}\n` : `${answer.text}\n`);
  return 0;
}
