import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Clock } from './clock.js';

export type LogLevel = 'info' | 'warn' | 'error';

/**
 * musher's log: one line per entry, so every bad input is one line and nothing else. Secrets never go in here:
 * callers pass messages, not payloads.
 */
export interface Log {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export function fileLog(file: string, clock: Clock, echo: ((line: string) => void) | null = null): Log {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const write = (level: LogLevel, message: string): void => {
    // Newlines marked, not collapsed: a stack or a multi-line message stays readable, one entry per line.
    const flat = message.replace(/\s*\n\s*/g, ' ⏎ ').slice(0, 2000);
    const line = `${new Date(clock.now()).toISOString()} ${level.toUpperCase()} ${flat}\n`;
    try {
      appendFileSync(file, line, { mode: 0o600 });
    } catch {
      // A log that cannot be written must not take musher down.
    }
    echo?.(line);
  };
  return {
    info: (m) => write('info', m),
    warn: (m) => write('warn', m),
    error: (m) => write('error', m),
  };
}
