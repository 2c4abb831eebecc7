import { describe, expect, it } from 'vitest';
import { RECEIPT_END, RECEIPT_START, receiptLineIn, withReceiptBlock } from '../../core/receipt/pr-block.js';

const LINE = '31 min · $7.40 · in band · seat dana · claude-opus-5-5 · signed';
const LINE2 = '44 min · $9.10 · over band · seat dana · claude-opus-5-5 · signed';
const BLOCK = `${RECEIPT_START}\n${LINE}\n${RECEIPT_END}`;

describe('withReceiptBlock', () => {
  it.each<[string, string | null, string]>([
    ['no body: the block alone', null, BLOCK],
    ['an empty body: the block alone', '', BLOCK],
    ['a body: the block after a blank line', 'Fixes the login.', `Fixes the login.\n\n${BLOCK}`],
    ['a body ending in a newline', 'Fixes the login.\n', `Fixes the login.\n\n${BLOCK}`],
    ['a body ending in a blank line', 'Fixes the login.\n\n', `Fixes the login.\n\n${BLOCK}`],
    ['a block already there: replaced in place', `Intro\n\n${RECEIPT_START}\nold line\n${RECEIPT_END}\n\n## Tests\nran them`, `Intro\n\n${BLOCK}\n\n## Tests\nran them`],
    ['markers spaced by an editor: still the block', `Intro\n<!--sleds:receipt-->\nold\n<!--  /sleds:receipt  -->`, `Intro\n${BLOCK}`],
    ['a copy pasted by hand: one block remains', `A\n\n${RECEIPT_START}\nx\n${RECEIPT_END}\n\nB\n\n${RECEIPT_START}\ny\n${RECEIPT_END}`, `A\n\n${BLOCK}\n\nB`],
    ['CRLF bodies (edited on the web) keep CRLF', 'Line one\r\nLine two', `Line one\r\nLine two\r\n\r\n${RECEIPT_START}\r\n${LINE}\r\n${RECEIPT_END}`],
    ['an opening marker with no end is not a block: a block is added', `A ${RECEIPT_START} B`, `A ${RECEIPT_START} B\n\n${BLOCK}`],
  ])('%s', (_what, body, want) => {
    expect(withReceiptBlock(body, LINE)).toBe(want);
  });

  it('rerunning never duplicates the block, and the rest of the body stays as written', () => {
    const body = '## What\nFixes the flaky login test.\n\n- [x] tests\n';
    const once = withReceiptBlock(body, LINE);
    const twice = withReceiptBlock(once, LINE);
    expect(twice).toBe(once);
    expect(twice.split(RECEIPT_START)).toHaveLength(2);
    const updated = withReceiptBlock(twice, LINE2);
    expect(updated.split(RECEIPT_START)).toHaveLength(2);
    expect(receiptLineIn(updated)).toBe(LINE2);
    expect(updated.startsWith(body)).toBe(true);
  });

  it('the line cannot break out of its comment markers or span lines', () => {
    const out = withReceiptBlock('', 'a --> b\n<!-- /sleds:receipt --> c');
    expect(out.split('\n')).toHaveLength(3);
    expect(receiptLineIn(out)).toBe('a  b  /sleds:receipt  c');
  });

  it('receiptLineIn reads the line back; null without a block', () => {
    expect(receiptLineIn(`x\n\n${BLOCK}`)).toBe(LINE);
    expect(receiptLineIn('no block here')).toBeNull();
    expect(receiptLineIn(null)).toBeNull();
  });
});
