/**
 * A frame: one moment of the story, as the user would see it. `text` is what the product printed there (the
 * statusline's lines, the hook's answer as Claude Code shows it, a command's output), never a copy written here.
 */
export interface Frame {
  step: string;
  title: string;
  text: string;
}

export type FrameSink = (frame: Frame) => void;

const BOLD = '\x1b[1m';
const DIM = '\x1b[2m';
const RESET = '\x1b[0m';

/** `--json`: one JSON object per line. */
export function jsonSink(write: (s: string) => void): FrameSink {
  return (f) => write(`${JSON.stringify(f)}\n`);
}

/** The terminal: a numbered title, then the text indented, as it would appear in the session. */
export function textSink(write: (s: string) => void, color: boolean): FrameSink {
  let n = 0;
  return (f) => {
    n++;
    const title = `${n}. ${f.title}`;
    const body = f.text
      .split('\n')
      .map((l) => `   ${l}`)
      .join('\n');
    write(`${color ? `${BOLD}${title}${RESET}` : title}\n${body}\n\n`);
  };
}

/** A prompt typed in Claude Code and the hook's answer under it. */
export function promptAndAnswer(prompt: string, answer: string): string {
  return `❯ ${prompt}\n${answer
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n')}`;
}

/** A command typed in a terminal and its output. */
export function commandAndOutput(command: string, output: string, color: boolean): string {
  const shown = `$ ${command}`;
  return `${color ? `${DIM}${shown}${RESET}` : shown}\n${output.replace(/\n+$/, '')}`;
}

/** What a hook printed, as Claude Code shows it: a block's reason, else its message or added context. */
export function hookAnswerText(stdout: string): string {
  const raw = stdout.trim();
  if (raw === '') return '';
  try {
    const a = JSON.parse(raw) as { reason?: string; systemMessage?: string; hookSpecificOutput?: { additionalContext?: string } };
    return a.reason ?? a.systemMessage ?? a.hookSpecificOutput?.additionalContext ?? '';
  } catch {
    // Not JSON: the hook printed plain text, which Claude Code shows as it is.
    return raw;
  }
}
