import { describe, expect, it } from 'vitest';
import { claudeConfigDir, resolvePaths } from '../../core/paths.js';

describe('resolvePaths', () => {
  it('SLEDS_HOME puts everything in one folder', () => {
    const p = resolvePaths({ SLEDS_HOME: '/s', XDG_RUNTIME_DIR: '/run/user/1' }, '/home/u');
    for (const v of Object.values(p)) expect(v.startsWith('/s/')).toBe(true);
  });

  it('follows XDG otherwise, with the socket in the runtime dir', () => {
    const p = resolvePaths({ XDG_RUNTIME_DIR: '/run/user/1' }, '/home/u');
    expect(p.configDir).toBe('/home/u/.config/sleds');
    expect(p.dbFile).toBe('/home/u/.local/share/sleds/sleds.db');
    expect(p.socketFile).toBe('/run/user/1/sleds/musher.sock');
    expect(p.logFile).toBe('/home/u/.local/state/sleds/musher.log');
    expect(resolvePaths({}, '/home/u').socketFile).toBe('/home/u/.local/share/sleds/run/musher.sock');
  });

  it('finds the Claude config dir', () => {
    expect(claudeConfigDir({}, '/home/u')).toBe('/home/u/.claude');
    expect(claudeConfigDir({ CLAUDE_CONFIG_DIR: '/cfg' }, '/home/u')).toBe('/cfg');
  });
});
