import { spawn } from 'node:child_process';
import { fail } from './fail.js';
import { askMusher, reportRefusal } from './musher-call.js';
import { renderWallCardForTerminal } from './wall-view.js';

/** `sleds wall show <id>`, `sleds go <wall>` and `sleds policy explain <wall>`: a wall, as musher keeps it. */

function need(id: string | undefined, usage: string): id is string {
  if (id && !id.startsWith('-')) return true;
  fail(`which wall? e.g. ${usage} (sleds status lists them)`, 2);
  return false;
}

export async function runWallShow(id: string | undefined, json: boolean): Promise<number> {
  if (!need(id, 'sleds wall show jd7k2m9qa45p')) return 2;
  const r = await askMusher('wall', { params: { id } }, 10_000);
  if (!r) return 1;
  if (!r.ok) return reportRefusal(r, json);
  // --json carries the reply as it is: the wall's row, the prompt's card, and the wallCard model itself.
  process.stdout.write(json ? `${JSON.stringify(r.body, null, 2)}\n` : `${renderWallCardForTerminal(r.body.wallCard)}\n`);
  return 0;
}

export async function runPolicyExplain(id: string | undefined, json: boolean): Promise<number> {
  if (!need(id, 'sleds policy explain jd7k2m9qa45p')) return 2;
  const r = await askMusher('wallExplain', { params: { id } }, 10_000);
  if (!r) return 1;
  if (!r.ok) return reportRefusal(r, json);
  process.stdout.write(json ? `${JSON.stringify(r.body, null, 2)}\n` : `${r.body.text}\n`);
  return 0;
}

/** Runs the wall's session on the platform key in this terminal; exits with the harness's own code. */
export async function runGo(id: string | undefined, json: boolean): Promise<number> {
  if (!need(id, 'sleds go jd7k2m9qa45p')) return 2;
  const r = await askMusher('wallGo', { params: { id }, body: {} }, 10_000);
  if (!r) return 1;
  if (!r.ok) return reportRefusal(r, json);
  const cmd = r.body.cmd;
  if (json) {
    // The plan without the gateway token: a --json output never carries a secret.
    const env = Object.fromEntries(Object.entries(cmd.env).map(([k, v]) => [k, /TOKEN|KEY/.test(k) ? '<redacted>' : v]));
    process.stdout.write(`${JSON.stringify({ ...cmd, env }, null, 2)}\n`);
    return 0;
  }
  return new Promise((resolve) => {
    const child = spawn(cmd.file, cmd.args, { cwd: cmd.cwd, env: { ...process.env, ...cmd.env }, stdio: 'inherit' });
    child.on('error', (e) => {
      process.stderr.write(`sleds: could not start ${cmd.file}: ${e.message}\n`);
      resolve(1);
    });
    child.on('exit', (code) => resolve(code ?? 1));
  });
}
