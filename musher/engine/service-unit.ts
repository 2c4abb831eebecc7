/**
 * `sleds engine install`: a user service that keeps the engine running — a systemd user unit on Linux, a launchd
 * agent on macOS. Pure: the file's path and text; the caller writes it and says how to start it. The command is the
 * absolute node and CLI paths (no shell, no PATH lookup at boot); the environment the engine needs (SLEDS_HOME, PATH
 * for the harness binaries) is written in, never a secret.
 */

export interface UnitInput {
  platform: NodeJS.Platform;
  home: string;
  node: string;
  cli: string;
  env: Record<string, string>;
}

export interface UnitFile {
  path: string;
  text: string;
  /** What the person runs next. */
  start: string[][];
}

const LABEL = 'dev.sleds.engine';

function systemdQuote(s: string): string {
  // systemd's own quoting: double quotes, backslash and dollar escaped (a `$` would be expanded), `%` doubled.
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\$/g, '$$$$').replace(/%/g, '%%')}"`;
}

function xml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function engineUnit(i: UnitInput): UnitFile | { error: string } {
  if (i.platform === 'linux') {
    const env = Object.entries(i.env).map(([k, v]) => `Environment=${systemdQuote(`${k}=${v}`)}`);
    const text = [
      '[Unit]',
      'Description=sleds engine: runs armed route nodes, follows their pull requests (never merges)',
      '',
      '[Service]',
      `ExecStart=${[i.node, i.cli, 'engine'].map(systemdQuote).join(' ')}`,
      ...env,
      'Restart=on-failure',
      'RestartSec=10',
      // Its harness runs are detached and outlive a restart of the engine (it reattaches to them).
      'KillMode=process',
      '',
      '[Install]',
      'WantedBy=default.target',
      '',
    ].join('\n');
    return { path: `${i.home}/.config/systemd/user/sleds-engine.service`, text, start: [['systemctl', '--user', 'daemon-reload'], ['systemctl', '--user', 'enable', '--now', 'sleds-engine.service']] };
  }
  if (i.platform === 'darwin') {
    const args = [i.node, i.cli, 'engine'].map((a) => `    <string>${xml(a)}</string>`);
    const env = Object.entries(i.env).map(([k, v]) => `    <key>${xml(k)}</key><string>${xml(v)}</string>`);
    const text = [
      '<?xml version="1.0" encoding="UTF-8"?>',
      '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
      '<plist version="1.0">',
      '<dict>',
      `  <key>Label</key><string>${LABEL}</string>`,
      '  <key>ProgramArguments</key>',
      '  <array>',
      ...args,
      '  </array>',
      '  <key>EnvironmentVariables</key>',
      '  <dict>',
      ...env,
      '  </dict>',
      '  <key>RunAtLoad</key><true/>',
      '  <key>KeepAlive</key><dict><key>SuccessfulExit</key><false/></dict>',
      `  <key>StandardErrorPath</key><string>${xml(`${i.home}/Library/Logs/sleds-engine.log`)}</string>`,
      '  <key>AbandonProcessGroup</key><true/>',
      '</dict>',
      '</plist>',
      '',
    ].join('\n');
    return { path: `${i.home}/Library/LaunchAgents/${LABEL}.plist`, text, start: [['launchctl', 'load', '-w', `${i.home}/Library/LaunchAgents/${LABEL}.plist`]] };
  }
  return { error: `sleds engine install knows systemd (Linux) and launchd (macOS), not ${i.platform} — run 'sleds engine' under your own supervisor` };
}
