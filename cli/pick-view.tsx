import { useEffect, useRef, useState } from 'react';
import { Box, render, Text, useApp, useInput } from 'ink';
import type { DispatchAnswer, PickerAnswer, PickerRow } from '../core/picker/row.js';
import { rowTitle } from '../core/picker/words.js';

/**
 * `sleds pick <task>`: the picker's rows as an ink view. Arrow keys move, enter takes the row's verb, q quits.
 * Loaded only by `sleds pick` without --json (ink and React stay off every other command's path).
 */

export interface PickViewProps {
  answer: PickerAnswer;
  /** False under NO_COLOR or when stdout is no terminal: no colour at all, the selection marked by "›". */
  color: boolean;
  /** Takes the row's verb (musher does it) and gives the line that says what happened. */
  onTake(row: PickerRow): Promise<DispatchAnswer>;
  /** Called with the last answer when the view closes (the caller prints it for the scrollback). */
  onDone?(result: DispatchAnswer | null): void;
}

const VERB_WIDTH = 10;
const TITLE_WIDTH = 27;

function cell(text: string, width: number): string {
  return text.length > width - 1 ? `${text.slice(0, width - 2)}… ` : text.padEnd(width);
}

/** A row in two lines, to fit a terminal of 100 columns: the verb, seat and band; then headroom, wall and the reason. */
export function rowLines(r: PickerRow): [string, string] {
  const first = [cell(r.verb, VERB_WIDTH), cell(rowTitle(r), TITLE_WIDTH), [r.bandText, r.fit].filter(Boolean).join(' · ')].join('');
  // A held task's rows all carry the same reason: the header says it once, each row just "held".
  const reason = r.reason?.startsWith('held: ') ? 'held' : r.reason;
  const second = [r.headroom, r.wall, reason].filter(Boolean).join(' · ');
  return [first, `${' '.repeat(VERB_WIDTH)}${second}`];
}

export function PickView({ answer, color, onTake, onDone }: PickViewProps) {
  const { exit } = useApp();
  const [selected, setSelected] = useState(() => Math.max(0, answer.rows.findIndex((r) => r.verb !== '—')));
  // The key handler reads refs: a key may arrive after a frame is drawn but before the handler of that render is in place.
  const at = useRef(selected);
  const taking = useRef(false);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<DispatchAnswer | null>(null);
  const c = (name: string): string | undefined => (color ? name : undefined);

  // A verb taken: close once the frame that says what it did is on the screen (it stays in the scrollback).
  useEffect(() => {
    if (result?.ok) {
      onDone?.(result);
      exit();
    }
  }, [result]);

  useInput((input, key) => {
    if (taking.current) return;
    if (input === 'q' || key.escape) {
      onDone?.(result);
      exit();
      return;
    }
    const n = answer.rows.length;
    if (key.upArrow || input === 'k') setSelected((at.current = (at.current + n - 1) % n));
    if (key.downArrow || input === 'j') setSelected((at.current = (at.current + 1) % n));
    if (key.return) {
      const row = answer.rows[at.current];
      if (!row) return;
      if (row.verb === '—') {
        setResult({ ok: false, line: `${rowTitle(row)} is not offered: ${row.reason ?? 'no verb'}` });
        return;
      }
      taking.current = true;
      setBusy(true);
      onTake(row)
        .catch((e: Error) => ({ ok: false, line: e.message }))
        .then((r) => {
          taking.current = false;
          setResult(r);
          setBusy(false);
        });
    }
  });

  return (
    <Box flexDirection="column">
      <Text bold={color}>
        task {answer.task.id}: {answer.task.title} · worth {answer.task.worth ?? 'not set'}
      </Text>
      {answer.held ? <Text color={c('yellow')}>held: {answer.held} — sleds task {answer.task.id} worth high|normal|low</Text> : null}
      {answer.wallLine ? <Text>wall: {answer.wallLine}</Text> : null}
      {answer.rows.map((r, i) => {
        const on = i === selected;
        const closed = r.verb === '—';
        const [first, second] = rowLines(r);
        return (
          <Box key={r.index} flexDirection="column">
            <Text color={on ? c('cyan') : closed ? c('gray') : undefined} bold={on && color} wrap="truncate-end">
              {`${on ? '›' : ' '} ${first}`}
            </Text>
            <Text color={r.crosses ? c('red') : undefined} dimColor={color && !r.crosses} wrap="truncate-end">
              {`  ${second}`}
            </Text>
          </Box>
        );
      })}
      <Text dimColor={color}>{busy ? 'taking it…' : '↑/↓ choose · enter takes the verb · q quits'}</Text>
      {result ? <Text color={result.ok ? c('green') : c('red')}>{result.line}</Text> : null}
    </Box>
  );
}

/** Renders the view in this terminal until the user takes a verb or quits; the last answer, if any. */
export async function showPickView(props: Omit<PickViewProps, 'onDone'>): Promise<DispatchAnswer | null> {
  let last: DispatchAnswer | null = null;
  const app = render(<PickView {...props} onDone={(r) => (last = r)} />, { exitOnCtrlC: true });
  await app.waitUntilExit();
  return last;
}
