import { mkdirSync, renameSync, writeFileSync } from 'node:fs';

/**
 * The hook spool: one file per event that musher has not (yet) acknowledged. Written to a temp name and renamed,
 * so musher never reads half a file. musher drains the folder on start and whenever it changes.
 */
export interface SpoolEnvelope {
  eventId: string;
  event: string;
  harness: string;
  receivedAt: number;
  /** The hook's stdin exactly as received (it may not even be JSON). */
  raw: string;
}

export function spoolFileName(env: SpoolEnvelope): string {
  return `${env.receivedAt}-${env.eventId}.json`;
}

export function writeSpool(spoolDir: string, envelope: SpoolEnvelope): string {
  mkdirSync(spoolDir, { recursive: true, mode: 0o700 });
  const name = spoolFileName(envelope);
  const tmp = `${spoolDir}/.${name}.tmp`;
  writeFileSync(tmp, JSON.stringify(envelope), { mode: 0o600 });
  renameSync(tmp, `${spoolDir}/${name}`);
  return name;
}
