import type { Log } from '../../musher/log.js';
import { Accounts } from '../../musher/quota/accounts.js';

/** The account key musher gives the bars of sessions in this Claude config dir (its own, by default). */
export function claudeAccountKey(claudeDir: string, home: string): string {
  const quiet: Log = { info: () => {}, warn: () => {}, error: () => {} };
  return new Accounts({ claudeConfigDir: claudeDir, codexHome: `${home}/.codex`, homeDir: home, log: quiet }).defaultClaude().key;
}
