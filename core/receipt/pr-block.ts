/**
 * The receipt's place in a pull request's body: one block between two HTML comments (invisible when GitHub renders
 * the body). Writing it again replaces the block in place, so a rerun never adds a second one; the rest of the body
 * is left as the author wrote it. Pure.
 */

export const RECEIPT_START = '<!-- sleds:receipt -->';
export const RECEIPT_END = '<!-- /sleds:receipt -->';

// Tolerant of the spacing an editor might give the markers; `[\s\S]*?` keeps each block to its own end marker.
const BLOCK = /<!--\s*sleds:receipt\s*-->[\s\S]*?<!--\s*\/sleds:receipt\s*-->/g;

/** What may stand between the markers: one line, with nothing that could close a comment or fake a marker. */
function clean(line: string): string {
  return line.replace(/\s*\r?\n\s*/g, ' ').replace(/<!--|-->/g, '').trim();
}

/** The body with the receipt line in its block: the block replaced where it is, else appended after a blank line. */
export function withReceiptBlock(body: string | null | undefined, line: string): string {
  const text = body ?? '';
  const nl = text.includes('\r\n') ? '\r\n' : '\n';
  const block = `${RECEIPT_START}${nl}${clean(line)}${nl}${RECEIPT_END}`;
  let seen = 0;
  // The first block takes the new line; any later one (a copy pasted by hand) goes, with the blank line before it.
  const replaced = text.replace(new RegExp(`(?:\\r?\\n){0,2}${BLOCK.source}`, 'g'), (match) => {
    seen += 1;
    if (seen > 1) return '';
    const lead = /^(?:\r?\n){0,2}/.exec(match)![0];
    return `${lead}${block}`;
  });
  if (seen > 0) return replaced;
  if (text === '') return block;
  const sep = text.endsWith(`${nl}${nl}`) ? '' : text.endsWith(nl) ? nl : `${nl}${nl}`;
  return `${text}${sep}${block}`;
}

/** The receipt line in a body's block, or null when it has none. */
export function receiptLineIn(body: string | null | undefined): string | null {
  const m = new RegExp(BLOCK.source).exec(body ?? '');
  if (!m) return null;
  return m[0].replace(/^<!--\s*sleds:receipt\s*-->/, '').replace(/<!--\s*\/sleds:receipt\s*-->$/, '').trim();
}
