import { homedir } from 'node:os';
import { fingerprint } from '../musher/secrets/platform-keys.js';
import { cliSettings, findCliBinary } from '../musher/config/cli-settings.js';
import { ghHostnameFor, githubApiUrl } from '../musher/github/client.js';
import { GITHUB_TOKEN_SECRET, githubTokenSource } from '../musher/github/token.js';
import { fail, openStore, removeToken, saveToken, type StoredToken } from './stored-token.js';
import { askMusher, reportRefusal } from './musher-call.js';

/**
 * `sleds github set-token|status|rm|watch`: the GitHub token sleds writes receipts and tracker comments with. Like
 * `sleds slack set-token`, it comes on stdin only (never argv) and is never printed: status shows a fingerprint.
 * Without one, sleds asks `gh auth token`. `watch` runs one round of the PR watcher now.
 */
const GITHUB_TOKEN: StoredToken = { command: 'sleds github set-token', label: 'GitHub token', prompt: 'the GitHub token', secret: GITHUB_TOKEN_SECRET };

async function status(json: boolean): Promise<number> {
  const store = openStore();
  const apiUrl = githubApiUrl({ baseUrl: cliSettings(process.env, homedir()).upstream('github') });
  const ghBin = () => findCliBinary(process.env, homedir(), 'gh').bin;
  const answer = await githubTokenSource({ secrets: store, ghBin, ghHostname: ghHostnameFor(apiUrl) })();
  const source = answer.ok ? answer.source : null;
  const fp = answer.ok ? fingerprint(answer.token) : null;
  if (json) {
    process.stdout.write(`${JSON.stringify({ configured: answer.ok, source, fingerprint: fp, apiUrl, location: store.describe().location, error: answer.ok ? null : answer.error })}\n`);
    return 0;
  }
  if (!answer.ok) process.stdout.write(`GitHub token: none — ${answer.error.replace(/^no GitHub token — /, '')} (API ${apiUrl})\n`);
  else process.stdout.write(`GitHub token: ${source === 'gh' ? "from 'gh auth token'" : `set in ${store.describe().location}`} · fingerprint ${fp} (API ${apiUrl})\n`);
  return 0;
}

/** `sleds github watch`: one PR-watcher round now. */
async function watch(json: boolean): Promise<number> {
  const res = await askMusher('githubWatch', { body: {} }, 120_000);
  if (!res) return 1;
  if (!res.ok) return reportRefusal(res, json);
  const body = res.body;
  if (json) {
    process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
    return body.errors.length > 0 ? 1 : 0;
  }
  const lines = [
    body.repos.length === 0 ? 'no open task is on a branch of a GitHub checkout' : `asked ${body.repos.join(', ')}`,
    ...body.finished.map((f) => `task ${f.taskId} done: ${f.pr} opened`),
    ...body.errors,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  return body.errors.length > 0 ? 1 : 0;
}

export async function runGithub(args: string[], json: boolean): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'set-token':
      return saveToken(GITHUB_TOKEN, rest, json);
    case 'status':
      return status(json);
    case 'rm':
      return removeToken(GITHUB_TOKEN, json, " (sleds asks 'gh auth token' now)");
    case 'watch':
      return watch(json);
    default:
      return fail('github takes set-token, status, rm or watch — e.g. sleds github set-token < tokenfile', 2);
  }
}
