import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, resolveConfig, type SledsConfig } from '../../musher/config/schema.js';

const withUpstream = (over: Partial<SledsConfig['upstreams']>): SledsConfig => ({ ...DEFAULT_CONFIG, upstreams: { ...DEFAULT_CONFIG.upstreams, ...over } });

describe("config.yml's settings", () => {
  it.each<[string, unknown, SledsConfig]>([
    ['no file (or an empty one): the defaults', null, DEFAULT_CONFIG],
    ['an empty mapping: the defaults', {}, DEFAULT_CONFIG],
    ['empty sections: the defaults', { upstreams: null, binaries: null, retention: null }, DEFAULT_CONFIG],
    ['an upstream over its default, the others left', { upstreams: { anthropic: 'http://127.0.0.1:4100' } }, withUpstream({ anthropic: 'http://127.0.0.1:4100' })],
    ['every upstream', { upstreams: { anthropic: 'https://a.example', openai: 'https://o.example', claudeUsage: 'https://u.example', slack: 'https://s.example/api/', github: 'https://ghe.example/api/v3' } },
      withUpstream({ anthropic: 'https://a.example', openai: 'https://o.example', claudeUsage: 'https://u.example', slack: 'https://s.example/api/', github: 'https://ghe.example/api/v3' })],
    ['binaries by absolute path', { binaries: { claude: '/opt/claude/bin/claude', notifySend: '/usr/bin/notify-send' } },
      { ...DEFAULT_CONFIG, binaries: { ...DEFAULT_CONFIG.binaries, claude: '/opt/claude/bin/claude', notifySend: '/usr/bin/notify-send' } }],
    ['the retention', { retention: { rawEventsDays: 7 } }, { ...DEFAULT_CONFIG, retention: { rawEventsDays: 7 } }],
    ['the tmux runner', { engine: { runner: 'tmux' } }, { ...DEFAULT_CONFIG, engine: { runner: 'tmux', terminal: null } }],
    ['a terminal command template', { engine: { runner: 'terminal', terminal: { command: ['wezterm', 'start', '--', '{run}'] } } }, { ...DEFAULT_CONFIG, engine: { runner: 'terminal', terminal: { command: ['wezterm', 'start', '--', '{run}'] } } }],
    ['the batch route\'s pace', { gateway: { batchPollMs: 200, batchKeepaliveMs: 1000 } }, { ...DEFAULT_CONFIG, gateway: { batchPollMs: 200, batchMaxPollMs: null, batchKeepaliveMs: 1000 } }],
    ['unknown keys are ignored', { theme: 'dark', upstreams: { antropic: 'https://typo.example' } }, DEFAULT_CONFIG],
  ])('%s', (_name, data, want) => {
    const r = resolveConfig(data);
    expect(r.errors).toEqual([]);
    expect(r.config).toEqual(want);
  });

  it.each<[string, unknown, Array<string | number>, RegExp]>([
    ['a file:// upstream', { upstreams: { anthropic: 'file:///etc/passwd' } }, ['upstreams', 'anthropic'], /http:\/\/ or https:\/\//],
    ['an ftp upstream', { upstreams: { github: 'ftp://ghe.example' } }, ['upstreams', 'github'], /http:\/\/ or https:\/\//],
    ['not a URL', { upstreams: { slack: 'slack.com' } }, ['upstreams', 'slack'], /http:\/\/ or https:\/\//],
    ['a bare binary name', { binaries: { tmux: 'tmux' } }, ['binaries', 'tmux'], /absolute path/],
    ['a relative binary path', { binaries: { gh: './bin/gh' } }, ['binaries', 'gh'], /absolute path/],
    ['a binary that is not a string', { binaries: { claude: 42 } }, ['binaries', 'claude'], /absolute path/],
    ['zero days', { retention: { rawEventsDays: 0 } }, ['retention', 'rawEventsDays'], /at least 1 day/],
    ['half a day', { retention: { rawEventsDays: 0.5 } }, ['retention', 'rawEventsDays'], /whole number of days/],
    ['a runner sleds does not know', { engine: { runner: 'screen' } }, ['engine', 'runner'], /must be one of headless, tmux, terminal/],
    ['the terminal runner without its command', { engine: { runner: 'terminal' } }, ['engine', 'terminal'], /needs terminal: \{ command/],
    ['a terminal command that is a string', { engine: { terminal: { command: 'gnome-terminal -- {run}' } } }, ['engine', 'terminal', 'command'], /list of strings/],
    ['{run} twice', { engine: { terminal: { command: ['kitty', '{run}', '{run}'] } } }, ['engine', 'terminal', 'command'], /once/],
    ['a batch poll of no time at all', { gateway: { batchPollMs: 0 } }, ['gateway', 'batchPollMs'], /at least 1 ms/],
    ['a batch poll as a string', { gateway: { batchPollMs: '5s' } }, ['gateway', 'batchPollMs'], /whole number of milliseconds/],
    ['a section that is a list', { upstreams: ['https://a.example'] }, ['upstreams'], /./],
  ])('%s is an error, and the defaults stand for the whole file', (_name, data, path, message) => {
    const r = resolveConfig(data);
    expect(r.config).toEqual(DEFAULT_CONFIG);
    expect(r.errors[0]).toEqual({ path, message: expect.stringMatching(message) });
  });

  it('a file that is not a mapping is an error', () => {
    expect(resolveConfig(['a', 'b']).errors).toEqual([{ path: [], message: expect.stringMatching(/must be a mapping/) }]);
  });

  it('unknown keys are warnings naming them', () => {
    expect(resolveConfig({ theme: 'dark', upstreams: { antropic: 'https://typo.example' } }).warnings).toEqual([
      { path: ['theme'], message: 'unknown key (ignored); known: upstreams, binaries, retention, handle, engine, gateway' },
      { path: ['upstreams', 'antropic'], message: 'unknown key (ignored); known: anthropic, openai, claudeUsage, slack, github' },
    ]);
  });
});
