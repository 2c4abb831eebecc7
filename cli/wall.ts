import { spawn } from 'node:child_process';
import { homedir } from 'node:os';
import { resolvePaths } from '../core/paths.js';
import { requestMusher } from '../hooks/musher-client.js';

/** `sleds wall show <id>`, `sleds go <wall>` and `sleds policy explain <wall>`: a wall, as musher keeps it. */

const AWAY = `sleds: musher is not running — start it with 'sleds musher start' or let the next hook start it\n`;

async function ask(method: 'GET' | 'POST', path: string): Promise<{ status: number; body: Record<string, unknown> } | null> {
  const paths = resolvePaths(process.env, homedir());
  try {
    const res = await requestMusher(paths.socketFile, method, path, method === 'POST' ? '{}' : null, { 'content-type': 'application/json' }, 10_000);
    return { status: res.status, body: JSON.parse(res.body) as Record<string, unknown> };
  } catch {
    return null;
  }
}

function need(id: string | undefined, usage: string): id is string {
  if (id && !id.startsWith('-')) return true;
  process.stderr.write(`sleds: which wall? e.g. ${usage} (sleds status lists them)\n`);
  return false;
}

export async function runWallShow(id: string | undefined, json: boolean): Promise<number> {
  if (!need(id, 'sleds wall show jd7k2m9qa45p')) return 2;
  const r = await ask('GET', `/v1/wall/${encodeURIComponent(id)}`);
  if (!r) return (process.stderr.write(AWAY), 1);
  if (r.status !== 200) return (process.stderr.write(`sleds: ${String(r.body.error)}\n`), 1);
  process.stdout.write(json ? `${JSON.stringify(r.body, null, 2)}\n` : `${String(r.body.card)}\n`);
  return 0;
}

export async function runPolicyExplain(id: string | undefined, json: boolean): Promise<number> {
  if (!need(id, 'sleds policy explain jd7k2m9qa45p')) return 2;
  const r = await ask('GET', `/v1/wall/${encodeURIComponent(id)}/explain`);
  if (!r) return (process.stderr.write(AWAY), 1);
  if (r.status !== 200) return (process.stderr.write(`sleds: ${String(r.body.error)}\n`), 1);
  process.stdout.write(json ? `${JSON.stringify(r.body, null, 2)}\n` : `${String(r.body.text)}\n`);
  return 0;
}

/** Runs the wall's session on the platform key in this terminal; exits with the harness's own code. */
export async function runGo(id: string | undefined, json: boolean): Promise<number> {
  if (!need(id, 'sleds go jd7k2m9qa45p')) return 2;
  const r = await ask('POST', `/v1/wall/${encodeURIComponent(id)}/go`);
  if (!r) return (process.stderr.write(AWAY), 1);
  if (r.status !== 200) return (process.stderr.write(`sleds: ${String(r.body.error)}\n`), 1);
  const cmd = r.body.cmd as { file: string; args: string[]; env: Record<string, string>; cwd: string };
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
