import { existsSync, readFileSync, statSync } from 'node:fs';
import type { SignedReceipt } from '../core/receipt/receipt.js';
import { askMusher, reportRefusal } from './musher-call.js';
import { keyFingerprint } from '../musher/handoff/keys.js';
import { verifyReceipt } from '../musher/receipts/sign.js';
import { RosterReader } from '../musher/roster/reader.js';
import { checkSigner } from '../core/receipt/signer.js';
import { formatUsdCents } from '../core/format.js';
import type { Log } from '../musher/log.js';
import { fail } from './fail.js';

/** The roster reader's complaints are musher's to log; here a broken roster just means no check. */
const SILENT: Log = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** `sleds receipts [--json]` and `sleds receipt show|verify <id|file> [--json]`. */

export async function runReceipts(args: string[], json: boolean): Promise<number> {
  const positional = args.filter((a) => !a.startsWith('--'));
  if (positional.length > 0) {
    return fail(`receipts takes no '${positional[0]}' — 'sleds receipt show <id>' shows one`, 2);
  }
  const res = await askMusher('receipts', {});
  if (!res) return 1;
  if (!res.ok) return reportRefusal(res, json);
  const list = res.body;
  if (json) {
    process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
    return 0;
  }
  if (list.receipts.length === 0) {
    process.stdout.write('No receipts yet: a task gets one when it ends (/sled done, its sessions end, or its PR opens).\n');
    return 0;
  }
  process.stdout.write(`${list.receipts.map((r) => `${r.receipt.body.id}  task ${r.receipt.body.taskId}  ${r.line}  ${r.receipt.body.title}`).join('\n')}\n`);
  return 0;
}

/** A receipt from a file (as `sleds receipt show --json` or `sleds receipts --json` wrote it), or from musher by id. */
async function load(ref: string): Promise<{ raw: unknown; from: string } | { error: string; code: number }> {
  if (existsSync(ref) && statSync(ref).isFile()) {
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(ref, 'utf8'));
    } catch {
      return { error: `${ref} is not JSON — save a receipt with 'sleds receipt show <id> --json > file'`, code: 1 };
    }
    const wrapped = json as { receipt?: unknown; receipts?: Array<{ receipt?: unknown }> };
    if (wrapped && typeof wrapped === 'object' && 'receipt' in wrapped) return { raw: wrapped.receipt, from: ref };
    return { raw: json, from: ref };
  }
  const res = await askMusher('receipt', { params: { id: ref } });
  if (!res) return { error: '', code: 1 };
  if (!res.ok) return { error: res.error, code: 1 };
  return { raw: res.body.receipt, from: 'musher' };
}

export async function runReceipt(args: string[], json: boolean): Promise<number> {
  const [sub, ref] = args.filter((a) => !a.startsWith('--'));
  if ((sub !== 'verify' && sub !== 'show') || !ref) {
    return fail(`receipt takes 'verify <id|file>' or 'show <id>' — e.g. sleds receipt verify k3m9x2qa4bn7`, 2);
  }
  const loaded = await load(ref);
  if ('error' in loaded) {
    if (loaded.error) fail(loaded.error);
    return loaded.code;
  }
  const id = (loaded.raw as { body?: { id?: unknown } } | null)?.body?.id;
  const name = typeof id === 'string' ? id : ref;
  if (sub === 'show') {
    if (json) process.stdout.write(`${JSON.stringify({ receipt: loaded.raw }, null, 2)}\n`);
    else {
      const r = loaded.raw as SignedReceipt;
      const b = r.body;
      process.stdout.write(
        [
          `receipt ${b.id} for task ${b.taskId}: ${b.title}`,
          `  ${b.activeMinutes} active min · ${formatUsdCents(b.costMicros)} (of which key ${formatUsdCents(b.keyMicros)}) · seat ${b.seat} · ${b.harness} · ${b.models.join('+') || 'no model'}`,
          `  prompt ${b.promptChars} chars · ${b.filesTouched} file(s) · ${b.turns} turn(s) · band ${b.band ? b.band.basis : 'none'} · ${b.inBand === null ? 'no band' : b.inBand ? 'in band' : 'out of band'}`,
          `  ${r.signature ? `signed by ${keyFingerprint(r.signer!)}` : 'unsigned — run sleds keys init'}`,
        ].join('\n') + '\n',
      );
    }
    return 0;
  }
  const verdict = verifyReceipt(loaded.raw);
  // A good signature proves some key signed it; the roster of the repository here says whether it is the seat's.
  const seat = (loaded.raw as SignedReceipt).body?.seat ?? '';
  const who = verdict.ok ? checkSigner(new RosterReader(SILENT).rosterAt(process.cwd()), seat, verdict.signer) : null;
  const forged = who?.kind === 'other-key';
  if (json) {
    process.stdout.write(
      `${JSON.stringify(
        verdict.ok
          ? {
              ok: !forged,
              // A failed verification carries { error } like every --json failure.
              ...(forged ? { error: `receipt ${name} is signed, but not with ${seat}'s key in .sleds/roster.yml` } : {}),
              id: name,
              signer: verdict.signer,
              fingerprint: keyFingerprint(verdict.signer),
              seat,
              seatKey: who!.kind === 'seat-key' ? true : forged ? false : null,
            }
          : { ok: false, error: `receipt ${name} does not verify: ${verdict.why}`, id: name, why: verdict.why },
        null,
        2,
      )}\n`,
    );
    return verdict.ok && !forged ? 0 : 1;
  }
  if (!verdict.ok) {
    return fail(`receipt ${name} does not verify: ${verdict.why}`);
  }
  if (who?.kind === 'other-key') {
    process.stderr.write(
      `sleds: receipt ${name} is signed, but not with ${who.handle}'s key in .sleds/roster.yml (signer ${keyFingerprint(verdict.signer)}, roster ${keyFingerprint(who.rosterKey)}) — it was not signed by that seat, or ${who.handle}'s keys changed: pull the roster and ask them\n`,
    );
    return 1;
  }
  if (who?.kind === 'seat-key') process.stdout.write(`receipt ${name} verifies: signed with ${who.handle}'s key in .sleds/roster.yml (${keyFingerprint(verdict.signer)})\n`);
  else process.stdout.write(`receipt ${name} verifies: signed by the Ed25519 key ${keyFingerprint(verdict.signer)} (${who?.kind === 'unknown' ? who.why : 'no roster'}: compare with the seat's entry in .sleds/roster.yml)\n`);
  return 0;
}
