#!/usr/bin/env node
/**
 * The `sleds` command. Each subcommand is imported lazily: `sleds hook` and `sleds statusline` run on every
 * prompt and tool call and must load nothing but their own few modules.
 */
import { fileURLToPath } from 'node:url';

const USAGE = `sleds — keeps you moving when your AI seat runs out

Usage:
  sleds demo [--keep] [--json]  the whole story (a wall, its exits, a hand-off, the pickup) in temporary homes:
                                no seat, no key, no network; --keep leaves the homes for a look
  sleds install                 wire sleds into the harnesses it finds (plugin, hooks, statusline) and start musher
  sleds uninstall               undo everything install changed
  sleds doctor [--json]         what is wired and what is not, line by line
  sleds status [--json]         bars, today's spend, sessions, walls
  sleds bars [--json]           every bar, its source and the age of its data
  sleds walls [--json] [--horizon 24h]
                                when each bar is forecast to hit 100%, and how many dollars away
  sleds wall show <wall> [--json]
                                a wall's card: its exits, what was chosen, what came of it
  sleds go <wall>               resume the wall's session on the platform key, here in this terminal
  sleds policy explain <wall> [--json]
                                how the policy decided at a wall, rule by rule
  sleds forecast replay <trace.jsonl> [--json]
                                the forecaster over a recorded trace, one forecast per sample
  sleds snapshots [--json]      the session snapshots taken at walls
  sleds snapshot show <id> [--json]
                                one snapshot: its git state, transcript and brief
  sleds handoffs [--json]       hand-offs sent and received: state, pickup, expiry
  sleds handoffs prune          remove the expired ones from this repository's remote
  sleds pickup <id> [--harness <binary>]
                                pick up a teammate's hand-off here and start the session
  sleds jobs [--json]           held, deferred and scheduled resumes: when, state, result
  sleds tasks [--json]          the tasks: state, worth, type, title
  sleds task <id> [worth <level>|type <label>|done] [--json]  one task, set its worth or type, or end it
  sleds jobs cancel <id>        cancel a scheduled job
  sleds estimate <text> [--type T] [--model M] [--json]
                                the band for a request in this repository: dollars, minutes, fit
  sleds report daily|weekly|monthly|session [--by model|project|seat] [--since D] [--until D] [--json]
                                tokens and API-equivalent dollars by day, week, month or session, the key's spend beside
  sleds receipts [--json]       the receipts of finished tasks: actual against band, signed
  sleds receipt verify <id|file> [--json] | show <id> [--json]
                                check a receipt's signature (from musher or a teammate's file)
  sleds pick <task> [row] [--json]  the dispatcher's picker: a row per seat with band, headroom, wall and verb
  sleds policy check [path] [--json] | show [--json]
                                validate the workspace policy; show it and where each part came from
  sleds key set|status|rm anthropic|openai [--json]
                                the platform keys the gateway spends (set reads stdin, never argv)
  sleds slack set-token|set-app-token|status|rm [app-token] [--json]
                                the Slack bot token notices and parked questions are posted with, the app-level token
                                their buttons are answered through (Socket Mode); both read stdin
  sleds github set-token|status|rm|watch [--json]
                                the GitHub token for PR receipts and tracker comments (stdin; else gh auth token);
                                watch: look for the open tasks' pull requests now
  sleds tracker [poll] [--json] issues labelled sleds taken as tasks; poll runs one round now
  sleds keys init [--force] [--name N] [--json] | show [--json]
                                this seat's hand-off keys; prints the roster entry to commit
  sleds keys trust <handle> [--yes] [--json] | trusted [--json] | untrust <handle> [--json]
                                pin a teammate's keys from this checkout's roster (shows the fingerprints, asks);
                                list the pinned keys; remove a pin
  sleds routes [--json]         the routes (.sleds/routes/<key>.yml) with their line: nodes landed, time, dollars
  sleds route show <key> [--json]  the waves, each node's state, band and PR
  sleds route new <key> [--from owner/repo#12] | load [<key>] | arm <key> [node…] | mode <key> approve|auto | decisions <key> [--json]
  sleds needs [--json]          what waits for you: route nodes' parked questions (and tasks'), with how to answer
  sleds queue [--json]          the overnight jobs: state, band at ½ price, cap, spend so far, log; queue cancel <job>
  sleds digest [--json]         the last night's digest: delivered, waiting, at a wall, with links (as Slack gets it)
  sleds resume [<job>] [--json] a delivered overnight job: its branch fetched here, what it did and decided
  sleds route answer <question|route/node> A|B|<answer…>
                                answer a node's question; the engine resumes it with your answer
  sleds start <route>/<node>    let an armed node of an approve-mode route start once it is ready
  sleds engine [--once] [--every 15s] [--json]
                                run route nodes: each in its own worktree and headless session, checked, its PR
                                followed to the merge (never merged by sleds); --once: one round; --every: how
                                often it looks at GitHub when no run is writing
  sleds engine install          a user service (systemd, launchd) that keeps the engine running
                                (config.yml engine.runner: headless, tmux or terminal says where nodes run)
  sleds attach <route>/<node> [--json]
                                watch a node work: its tmux window (engine.runner: tmux), else how to follow its stream
  sleds musher [run]            run the daemon in the foreground
  sleds musher start|stop|status
  sleds hook <Event>            (called by the harness) forward a hook event
  sleds mcp                     (called by the harness) the sleds MCP server on stdio: intake, estimate, dispatch, status, handoff, pickup, park, answer
  sleds statusline [--then CMD] (called by the harness) print the status line
  sleds exec-env <file> -- <cmd>
                                (called by musher) start a resumed session with the environment in <file>
  sleds --version
`;

function flag(args: string[], name: string): string | null {
  const i = args.indexOf(name);
  if (i < 0) return null;
  const v = args[i + 1];
  return v === undefined ? '' : v;
}

/** A usage error, through the one failure path (cli/fail.ts, loaded only when a command fails this way). */
async function usage(message: string): Promise<number> {
  return (await import('./fail.js')).fail(message, 2);
}

async function main(argv: string[]): Promise<number> {
  // Flags are the command's own up to a `--` (exec-env passes what follows to the program it starts).
  const end = argv.indexOf('--');
  const json = (end < 0 ? argv : argv.slice(0, end)).includes('--json');
  // Under --json every failure is one {"error"} object on stdout, whichever module reports it (cli/fail.ts). Loaded
  // only then: the hook and the statusline never pass --json, and load nothing they do not need.
  if (json) (await import('./fail.js')).reportFailuresAsJson(true);
  try {
    const code = await dispatch(argv, json);
    // Under --json a failure is exit 1 whatever it was (a usage error is 2 otherwise): scripts test one code.
    return code === 2 && json ? 1 : code;
  } catch (e) {
    return (await import('./fail.js')).fail((e as Error).message);
  }
}

/**
 * The CLI that install links and wires into the harnesses: this one when it is the compiled CLI; run from source
 * (cli/main.ts under tsx), the package's compiled one, since a harness runs `node <cli>` without a loader.
 */
async function shippedCli(_self: string): Promise<string> {
  // Always the package's compiled dist/cli/main.js, whatever runs now (the sources under tsx, the test suite's fresh
  // compile): a harness runs the command it is given with a bare node.
  return (await import('../musher/package-root.js')).cliMainPath();
}

async function dispatch(argv: string[], json: boolean): Promise<number> {
  const [command, ...rest] = argv;
  const self = fileURLToPath(import.meta.url);
  switch (command) {
    case 'hook': {
      const event = rest[0];
      if (!event) {
        return usage('which event? e.g. sleds hook UserPromptSubmit');
      }
      const { runHook } = await import('../hooks/client.js');
      return runHook(event, flag(rest, '--harness') || undefined, self);
    }
    case 'mcp': {
      const { packageVersion } = await import('../musher/package-root.js');
      const { runMcp } = await import('../mcp-server/server.js');
      return runMcp(self, packageVersion());
    }
    case 'exec-env': {
      // A pane musher restarts: node builtins only, nothing else loaded.
      const { runExecEnv } = await import('./exec-env.js');
      return runExecEnv(rest);
    }
    case 'statusline': {
      const { runStatusline } = await import('../statusline/client.js');
      return runStatusline(flag(rest, '--then') || null);
    }
    case 'musher': {
      const sub = rest[0] ?? 'run';
      if (sub === 'run' || sub.startsWith('--')) {
        const { runMusher } = await import('../musher/main.js');
        return runMusher({ background: rest.includes('--background') });
      }
      const control = await import('./musher-control.js');
      if (sub === 'start') return control.start(self, json);
      if (sub === 'stop') return control.stop(json);
      if (sub === 'status') return control.status(json);
      return usage(`unknown musher command '${sub}' — use run, start, stop or status`);
    }
    case 'status': {
      const { runStatus } = await import('./status.js');
      return runStatus(json);
    }
    case 'bars': {
      const { runBars } = await import('./bars.js');
      return runBars(json);
    }
    case 'walls': {
      const { runWalls } = await import('./walls.js');
      return runWalls(rest, json);
    }
    case 'wall': {
      if (rest[0] !== 'show') {
        return usage(`wall takes 'show <wall>' — e.g. sleds wall show jd7k2m9qa45p`);
      }
      const { runWallShow } = await import('./wall.js');
      return runWallShow(rest[1], json);
    }
    case 'pickup': {
      const { runPickup } = await import('./pickup.js');
      return runPickup(rest, json);
    }
    case 'handoffs': {
      const { runHandoffs } = await import('./handoffs.js');
      return runHandoffs(rest, json);
    }
    case 'go': {
      const { runGo } = await import('./wall.js');
      return runGo(rest[0], json);
    }
    case 'snapshots': {
      const { runSnapshots } = await import('./snapshots.js');
      return runSnapshots(json);
    }
    case 'snapshot': {
      const { runSnapshotCommand } = await import('./snapshots.js');
      return runSnapshotCommand(rest, json);
    }
    case 'tasks': {
      const { runTasks } = await import('./tasks.js');
      return runTasks(rest, json);
    }
    case 'task': {
      const { runTask } = await import('./tasks.js');
      return runTask(rest, json);
    }
    case 'estimate': {
      const { runEstimate } = await import('./estimate.js');
      return runEstimate(rest, json);
    }
    case 'report':
      return (await import('./report.js')).runReport(rest, json);
    case 'receipts': {
      const { runReceipts } = await import('./receipts.js');
      return runReceipts(rest, json);
    }
    case 'receipt': {
      const { runReceipt } = await import('./receipts.js');
      return runReceipt(rest, json);
    }
    case 'pick': {
      const { runPick } = await import('./pick.js');
      return runPick(rest, json);
    }
    case 'jobs': {
      const { runJobs } = await import('./jobs.js');
      return runJobs(rest, json);
    }
    case 'forecast': {
      if (rest[0] !== 'replay') {
        return usage(`forecast takes 'replay <trace.jsonl>' — e.g. sleds forecast replay trace.jsonl --json`);
      }
      const { runForecastReplay } = await import('./forecast-replay.js');
      return runForecastReplay(rest.slice(1), json);
    }
    case 'policy': {
      if (rest[0] === 'explain') {
        const { runPolicyExplain } = await import('./wall.js');
        return runPolicyExplain(rest[1], json);
      }
      const { runPolicy } = await import('./policy.js');
      return runPolicy(rest, json);
    }
    case 'key': {
      const { runKey } = await import('./key.js');
      return runKey(rest, json);
    }
    case 'slack': {
      const { runSlack } = await import('./slack.js');
      return runSlack(rest, json);
    }
    case 'github': {
      const { runGithub } = await import('./github.js');
      return runGithub(rest, json);
    }
    case 'needs':
      return (await import('./needs.js')).runNeeds(json);
    case 'queue':
      return (await import('./queue.js')).runQueue(rest, json);
    case 'digest':
      return (await import('./digest.js')).runDigest(rest, json);
    case 'resume':
      return (await import('./resume.js')).runResume(rest, json);
    case 'routes':
      return (await import('./route.js')).runRoutes(json);
    case 'route':
      return (await import('./route.js')).runRoute(rest, json);
    case 'start':
      return (await import('./start.js')).runStart(rest, json);
    case 'engine': {
      // The engine is its own process beside musher (its runs outlive it); it opens the store itself.
      const { runEngine } = await import('../musher/engine/main.js');
      return runEngine(rest, json);
    }
    case 'attach':
      return (await import('./attach.js')).runAttach(rest, json);
    case 'tracker': {
      const { runTracker } = await import('./tracker.js');
      return runTracker(rest, json);
    }
    case 'keys': {
      const { runKeys } = await import('./keys.js');
      return runKeys(rest, json);
    }
    case 'demo':
      return (await import('./demo/index.js')).runDemo(rest, json);
    case 'install': {
      const { runInstall } = await import('./install.js');
      return runInstall(await shippedCli(self), rest, self);
    }
    case 'uninstall': {
      const { runUninstall } = await import('./install.js');
      return runUninstall(await shippedCli(self), rest);
    }
    case 'doctor': {
      const { runDoctor } = await import('./doctor.js');
      return runDoctor(await shippedCli(self), json);
    }
    case '--version':
    case '-v':
    case 'version': {
      const { packageVersion } = await import('../musher/package-root.js');
      process.stdout.write(`${packageVersion()}\n`);
      return 0;
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    default:
      return usage(`unknown command '${command}' — run 'sleds help' for the list`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: Error) => {
    process.stderr.write(`sleds: ${e.message}\n`);
    process.exitCode = 1;
  },
);
