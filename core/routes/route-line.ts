import { z } from 'zod';
import { formatUsd } from '../format.js';
import { SignedReceipt } from '../receipt/receipt.js';
import { routeBand, type RouteBand } from './band.js';

/**
 * The route's one line (issue 14 § 12): `31 min · $7.40 · in band for ENG-503, across 8 nodes, 2 machines and 1
 * person's phone`. Minutes and dollars are the sums of the landed nodes' receipts (active minutes, API-equivalent
 * dollars), held against the route's band (the nodes' bands summed); machines are the distinct hosts the engine
 * recorded with each receipt; a person's phone is someone who answered a parked question from Slack. Pure.
 */

/**
 * What the engine keeps on a node's row when it lands: the signed receipt, the host of the engine that ran it, and the
 * models whose tokens the price table could not price (named, never counted as $0; not in the body's costMicros).
 */
export const NodeReceipt = SignedReceipt.extend({ host: z.string().min(1), unpriced: z.array(z.string()).default([]) });
export type NodeReceipt = z.infer<typeof NodeReceipt>;

export interface RouteLineNode {
  state: string;
  band: RouteBand | null;
  receipt: unknown;
}

export interface RouteLineDecision {
  answeredBy: string;
  source: string;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export function routeLine(nodes: readonly RouteLineNode[], route: { key: string; tracker: string | null }, decisions: readonly RouteLineDecision[]): string {
  const receipts = nodes.map((n) => NodeReceipt.safeParse(n.receipt)).flatMap((r) => (r.success ? [r.data] : []));
  const micros = receipts.reduce((s, r) => s + r.body.costMicros, 0);
  const minutes = Math.round(receipts.reduce((s, r) => s + r.body.activeMinutes, 0));
  const landed = nodes.filter((n) => n.state === 'COMPLETED').length;
  const band = routeBand(nodes.map((n) => n.band));
  const usd = micros / 1_000_000;
  // Models a receipt could not price are named beside the dollars: the sum leaves them out, so no band is judged on it.
  const unpriced = [...new Set(receipts.flatMap((r) => r.unpriced))].sort();
  const word =
    band === null ? 'no band' : unpriced.length > 0 ? 'band not judged' : usd > band.highUsd || minutes > band.highMin ? 'over band' : usd < band.lowUsd && minutes < band.lowMin ? 'under band' : 'in band';
  const machines = new Set(receipts.map((r) => r.host)).size;
  const phones = new Set(decisions.filter((d) => d.source === 'slack').map((d) => d.answeredBy)).size;
  const across = [landed === nodes.length ? plural(nodes.length, 'node') : `${landed} of ${plural(nodes.length, 'node')} landed`, plural(machines, 'machine')];
  if (phones > 0) across.push(`${phones} ${phones === 1 ? "person's phone" : "people's phones"}`);
  const last = across.pop()!;
  const lead = landed === nodes.length ? '' : 'so far ';
  // a route still on its way is not judged against the whole route's band
  const judged = landed === nodes.length ? word : band === null ? 'no band' : `band ${formatUsd(band.lowUsd * 1e6)}–${formatUsd(band.highUsd * 1e6)}`;
  const dollars = `${formatUsd(micros)}${unpriced.length > 0 ? ` + ${unpriced.join(', ')} unpriced` : ''}`;
  return `${lead}${minutes} min · ${dollars} · ${judged} for ${route.tracker ?? route.key}, across ${across.length > 0 ? `${across.join(', ')} and ${last}` : last}`;
}
