import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { pickedUpAnswer } from '../../core/handoff/answer.js';
import { harnessWords } from '../../musher/handoff/harness-words.js';
import { planResume, resumeArgv, ResumePlanError, resumeWords as printedResumeArgv, type Harness, type ResumeMode, type ResumeRequest } from '../../harnesses/resume-plan.js';

/**
 * Issue 11, point 2: a session id never becomes an option. Every argv builder either refuses an id that is not a
 * session id, or — for a real one — places it where no option can be: glued (`--resume=<id>`) or after `--`.
 */

const HOSTILE = '--settings={"hooks":{}}';
const SID = '0b9c2f4a-6a5e-4a8e-9a57-1f3c9d7e2b10';
const LAUNCHER = { command: ['/usr/bin/node', '/opt/sleds/dist/cli/main.js', 'exec-env'], envFile: '/run/sleds/env/e-1.json' };

/** The id appears only glued to --resume= or after a `--` (the rest is positional there). */
function idPlacedSafely(args: readonly string[], id: string): boolean {
  const end = args.indexOf('--');
  return args.every((a, i) => (a === id ? end >= 0 && i > end : !a.includes(id) || a === `--resume=${id}`));
}

/** The harness's part of a tmux plan's argv (after tmux's and the wrapper's own options). */
function harnessPart(args: string[], bin: string): string[] {
  expect(args).toContain(bin);
  return args.slice(args.indexOf(bin));
}

const builders: Array<[string, (id: string) => string[]]> = [];
for (const harness of ['claude-code', 'codex'] as Harness[]) {
  for (const mode of ['headless', 'foreground', 'tmux'] as ResumeMode[]) {
    for (const withEnv of mode === 'tmux' ? [false, true] : [false]) {
      builders.push([
        `planResume ${harness} ${mode}${withEnv ? ' with env' : ''}`,
        (id) => {
          const req: ResumeRequest = {
            harness,
            sessionId: id,
            cwd: '/w/p',
            prompt: mode === 'headless' ? 'go on' : null,
            mode,
            tmuxPane: '%3',
            env: withEnv ? { ANTHROPIC_AUTH_TOKEN: 'sleds_gw_x' } : {},
            paneLauncher: LAUNCHER,
            claudeBin: '/bin/claude',
            codexBin: '/bin/codex',
            tmuxBin: '/usr/bin/tmux',
          };
          const plan = planResume(req);
          return plan.mode === 'tmux' ? harnessPart(plan.args, harness === 'codex' ? '/bin/codex' : '/bin/claude').slice(1) : plan.args;
        },
      ]);
    }
    builders.push([`resumeArgv ${harness} ${mode === 'headless' ? 'headless' : 'interactive'} (pickup, the tmux window)`, (id) => resumeArgv({ harness, bin: 'x', sessionId: id, headless: mode === 'headless', structured: false, prompt: mode === 'headless' ? '-p go' : null }).slice(1)]);
  }
}

describe('an id that is an option', () => {
  it.each(builders)('%s refuses it with one line', (_name, build) => {
    expect(() => build(HOSTILE)).toThrow(ResumePlanError);
    expect(() => build(HOSTILE)).toThrow(/^resume: "--settings=\{\\"hooks\\":\{\}\}" is not a session id \(a UUID\) — not passing it to (claude|codex)$/);
  });

  it.each(builders)('%s places a real id where no option can be', (_name, build) => {
    const args = build(SID);
    expect(args.some((a) => a.includes(SID))).toBe(true);
    expect(idPlacedSafely(args, SID), JSON.stringify(args)).toBe(true);
  });

  it('the command printed for a person reads back, through a real sh, as the harness with the id as a value', () => {
    for (const harness of ['claude-code', 'codex'] as const) {
      const line = pickedUpAnswer({ id: 'jd7k2m9qa41p', sender: 'sam', harness, sessionId: HOSTILE, dir: '/tmp/a $(echo pwned)', branch: 'b' }, harness, null, harnessWords).split('\n')[1]!;
      const command = /: cd (.*?)   \(or/.exec(line)![1]!.split(' && ')[1]!;
      const argv = execFileSync('/bin/sh', ['-c', `printf '%s\\0' ${command}`], { encoding: 'utf8' }).split('\0').slice(0, -1);
      expect(argv).toEqual(printedResumeArgv(harness, HOSTILE));
      expect(idPlacedSafely(argv.slice(1), HOSTILE)).toBe(true);
    }
  });
});
