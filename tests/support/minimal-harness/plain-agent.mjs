#!/usr/bin/env node
// The "plain" agent (tests only): `plain run --events [--session=<id>]`, the prompt on stdin. It obeys directives in
// the prompt, one a line, so a test scripts what the agent does through the node's brief, as a model would through
// tool calls:
//   @write <path> <text>            write a file in the cwd (its tool call)
//   @after <marker> @write <p> <t>  only when the prompt holds <marker> (e.g. feedback from failed checks)
//   @unless <marker> @write <p> <t> only when the prompt does not hold <marker> (a first run, not its resume)
//   @ask <question>                 ask, and end the turn, unless the prompt says its question was answered
//   @limit <resetsAt epoch s> [m]   refused at a limit, unless the prompt holds "limit has reset" (or, given a model
//                                   m, unless this run's --model is another)
//   @hold <file>                    before ending, wait until <file> exists (the test lets it finish)
// Every start is logged to $PLAIN_HOME/starts.log ("<session> new|resume"), each session's prompts to
// $PLAIN_HOME/sessions/<id>.log, so a test sees what was started twice and what a resume was told.
import { appendFileSync, existsSync, mkdirSync, readFileSync, watch, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { dirname, join, resolve, sep } from 'node:path';

const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const args = process.argv.slice(2);
if (args[0] === '--version') {
  console.log('plain 1.0.0');
  process.exit(0);
}
const resumeArg = args.find((a) => a.startsWith('--session='));
const session = resumeArg ? resumeArg.slice('--session='.length) : randomUUID();
const home = process.env.PLAIN_HOME ?? join(process.env.HOME ?? '.', '.plain');
mkdirSync(join(home, 'sessions'), { recursive: true });
const prompt = readFileSync(0, 'utf8');
appendFileSync(join(home, 'starts.log'), `${session} ${resumeArg ? 'resume' : 'new'} ${process.cwd()}\n`);
// Where its model requests would go (the gateway, for an overnight node) and whether it was told to wait for slow answers.
appendFileSync(join(home, 'env.log'), `${session} ${process.env.PLAIN_API_URL ?? '-'} ${process.env.PLAIN_API_TOKEN ? 'token' : '-'} ${process.env.PLAIN_SLOW ?? '-'}\n`);
appendFileSync(join(home, 'sessions', `${session}.log`), `--- prompt\n${prompt}\n`);
out({ e: 'begin', session });

const history = existsSync(join(home, 'sessions', `${session}.log`)) ? readFileSync(join(home, 'sessions', `${session}.log`), 'utf8') : prompt;
const lines = history.split('\n').map((l) => l.trim());
// A marker counts only outside the directives (the brief that carries `@after <marker>` is in the prompt too).
const said = prompt.split('\n').filter((l) => !l.trim().startsWith('@')).join('\n');
const has = (marker) => said.includes(marker);
const inCwd = (p) => {
  const full = resolve(process.cwd(), p);
  if (!full.startsWith(process.cwd() + sep)) throw new Error(`refusing to write outside the cwd: ${p}`);
  return full;
};

async function main() {
  for (const line of new Set(lines)) {
    let l = line;
    const after = /^@after (\S+) (@.*)$/.exec(l);
    const unless = /^@unless (\S+) (@.*)$/.exec(l);
    if (after) {
      if (!has(after[1])) continue;
      l = after[2];
    } else if (unless) {
      if (has(unless[1]) || !prompt.split('\n').map((x) => x.trim()).includes(l)) continue;
      l = unless[2];
    } else if (!prompt.split('\n').map((x) => x.trim()).includes(l)) {
      // Directives of earlier prompts in the session were done already.
      continue;
    }
    const w = /^@write (\S+) (.*)$/.exec(l);
    if (w) {
      const p = inCwd(w[1]);
      mkdirSync(dirname(p), { recursive: true });
      writeFileSync(p, w[2] + '\n');
      out({ e: 'tool', name: 'write_file' });
      continue;
    }
    const a = /^@ask (.*)$/.exec(l);
    if (a && !has('question was answered')) {
      out({ e: 'ask', text: a[1] });
      out({ e: 'end', ok: true, text: 'waiting for an answer' });
      return;
    }
    const lim = /^@limit (\d+)(?: (\S+))?$/.exec(l);
    const model = args.find((a) => a.startsWith('--model='))?.slice('--model='.length) ?? null;
    if (lim && !has('limit has reset') && (!lim[2] || lim[2] === model)) {
      out({ e: 'limited', window: 'five_hour', resetsAt: Number(lim[1]) });
      process.exit(1);
    }
    const h = /^@hold (.+)$/.exec(l);
    if (h && !existsSync(h[1])) {
      await new Promise((done) => {
        const dir = dirname(h[1]);
        const w2 = watch(dir, () => existsSync(h[1]) && (w2.close(), done()));
        if (existsSync(h[1])) (w2.close(), done());
      });
    }
  }
  out({ e: 'tokens', in: 1200, out: 80 });
  out({ e: 'end', ok: true, text: 'done' });
}
main().catch((e) => {
  out({ e: 'end', ok: false, text: String(e.message ?? e) });
  process.exit(1);
});
