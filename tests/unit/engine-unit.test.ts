import { describe, expect, it } from 'vitest';
import { engineUnit } from '../../musher/engine/service-unit.js';

const base = { home: '/home/u', node: '/usr/bin/node', cli: '/opt/sleds/dist/cli/main.js', env: { SLEDS_HOME: '/home/u/.sleds', PATH: '/usr/bin:/bin' } };

describe('sleds engine install: the user service unit', () => {
  it('Linux: a systemd user unit that runs the engine by absolute paths and leaves its harness runs alone on restart', () => {
    const u = engineUnit({ ...base, platform: 'linux' });
    if ('error' in u) throw new Error(u.error);
    expect(u.path).toBe('/home/u/.config/systemd/user/sleds-engine.service');
    expect(u.text).toContain('ExecStart="/usr/bin/node" "/opt/sleds/dist/cli/main.js" "engine"');
    expect(u.text).toContain('Environment="SLEDS_HOME=/home/u/.sleds"');
    expect(u.text).toContain('KillMode=process');
    expect(u.start).toEqual([['systemctl', '--user', 'daemon-reload'], ['systemctl', '--user', 'enable', '--now', 'sleds-engine.service']]);
  });

  it('a path with a quote, a dollar or a percent cannot break out of the unit line', () => {
    const u = engineUnit({ ...base, platform: 'linux', cli: '/opt/a"b $HOME %h/main.js' });
    if ('error' in u) throw new Error(u.error);
    expect(u.text).toContain('"/opt/a\\"b $$HOME %%h/main.js"');
  });

  it('macOS: a launchd agent with the arguments as an array (no shell) and XML escaped', () => {
    const u = engineUnit({ ...base, platform: 'darwin', cli: '/opt/<s>&/main.js' });
    if ('error' in u) throw new Error(u.error);
    expect(u.path).toBe('/home/u/Library/LaunchAgents/dev.sleds.engine.plist');
    expect(u.text).toContain('<string>/opt/&lt;s&gt;&amp;/main.js</string>');
    expect(u.text).toContain('<key>AbandonProcessGroup</key><true/>');
  });

  it('another platform is one line that says what to do', () => {
    expect(engineUnit({ ...base, platform: 'win32' })).toEqual({ error: "sleds engine install knows systemd (Linux) and launchd (macOS), not win32 — run 'sleds engine' under your own supervisor" });
  });
});
