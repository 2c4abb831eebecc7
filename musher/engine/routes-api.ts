import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { ApiAnswer } from '../scheduler/api.js';
import { parseBody } from '../api/parse-body.js';
import { RouteArmRequest, RouteLoadRequest, RouteModeRequest, RoutePlanRequest, RouteStartRequest, RouteNewRequest } from '../../protocol/requests.js';
import type { z } from 'zod';
import { stringify } from 'yaml';
import { routeBand } from '../../core/routes/band.js';
import { routeLine } from '../../core/routes/route-line.js';
import { receiptLineOf } from '../../core/routes/node-receipt.js';
import { ROUTE_ID, type RouteMode } from '../../core/routes/route-file.js';
import { parseRouteFile } from './route-yaml.js';
import { draftRoute } from '../../core/routes/from-item.js';
import type { ParsedRoute, RouteNode } from '../../core/routes/route-file.js';
import type { RouteBand } from '../../core/routes/band.js';
import type { ItemAnswer } from './route-from-item.js';
import { isNightJobRoute, type NodeRow, type RouteRow, type RouteStore } from './route-store.js';

/**
 * The route verbs' handlers (issue 14 § 3): `/v1/routes…`. musher reads the route files of the repository a client's
 * cwd is in (`.sleds/routes/*.yml`); the CLI loads before it shows, arms or starts, so an edited file is what it sees.
 * A file that does not pass is refused whole with its one file:line line, and nothing of it is loaded.
 */

export interface RoutesApiDeps {
  store: RouteStore;
  /** Harness ids sleds knows (the registry's), for the file check. */
  harnesses: readonly string[];
  /** The policy's `engine.mode` for a directory: the mode of a route whose file names none. */
  defaultMode(dir: string): RouteMode;
  /** The estimator's band for a node whose file gives none (null: none yet). */
  bandFor?(node: RouteNode, repoRoot: string): RouteBand | null;
  /** The tracker item a route is drafted from (`route new --from`). */
  trackerItem?(from: string, cwd: string): Promise<ItemAnswer>;
}

/** A route with every node's band: the file's, else the estimator's; the route's band their sum. */
function withBands(deps: RoutesApiDeps, route: ParsedRoute, repoRoot: string): ParsedRoute {
  if (!deps.bandFor) return route;
  const nodes = route.nodes.map((n) => (n.band === null ? { ...n, band: deps.bandFor!(n, repoRoot) } : n));
  return { ...route, nodes, band: routeBand(nodes.map((n) => n.band)) };
}

export const ROUTES_DIR = join('.sleds', 'routes');

async function repoRootOf(cwd: string): Promise<string | null> {
  try {
    return (await promisify(execFile)('git', ['rev-parse', '--show-toplevel'], { cwd, encoding: 'utf8' })).stdout.trim() || null;
  } catch {
    // not a repository (or no git): the caller says so in its own words
    return null;
  }
}

/** A route file whose key is an overnight job's (which has no file): loading it would rewrite the job, so it is refused. */
function jobRouteClash(store: RouteStore, key: string, shown: string): string | null {
  const had = store.route(key);
  return had && isNightJobRoute(had) ? `${shown}: '${key}' is an overnight job's key (sleds queue shows it) — name the route file another key` : null;
}

/** Reads and loads the route files (all, or `key`'s) of the repository `cwd` is in. */
export async function loadRoutes(deps: RoutesApiDeps, cwd: string, key?: string): Promise<ApiAnswer> {
  // An overnight job's route has no file: there is nothing to read for it (and `route show <job>` works from anywhere).
  const job = key === undefined ? null : deps.store.route(key);
  if (job && isNightJobRoute(job)) return { status: 200, body: { repoRoot: job.repoRoot, loaded: [] } };
  const root = await repoRootOf(cwd);
  if (!root) return { status: 409, body: { error: `${cwd} is not in a git repository — routes live in <repo>/.sleds/routes/<key>.yml` } };
  const dir = join(root, ROUTES_DIR);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /\.ya?ml$/.test(n)).sort();
  } catch {
    // no .sleds/routes/ yet: no route files
    names = [];
  }
  if (key !== undefined) names = names.filter((n) => n === `${key}.yml` || n === `${key}.yaml`);
  if (key !== undefined && names.length === 0) return { status: 404, body: { error: `no route file ${join(ROUTES_DIR, `${key}.yml`)} in ${root} — write one, or: sleds route new ${key}` } };
  const parsed = [];
  for (const name of names) {
    const path = join(dir, name);
    const shown = relative(root, path);
    const r = parseRouteFile(readFileSync(path, 'utf8'), { path: shown, harnesses: deps.harnesses });
    if (!r.ok) return { status: 422, body: { error: r.error } };
    const taken = jobRouteClash(deps.store, r.route.key, shown);
    if (taken) return { status: 409, body: { error: taken } };
    parsed.push({ route: r.route, path });
  }
  const mode = deps.defaultMode(root);
  for (const p of parsed) deps.store.upsertRoute(withBands(deps, p.route, root), { repoRoot: root, filePath: p.path }, mode);
  return { status: 200, body: { repoRoot: root, loaded: parsed.map((p) => p.route.key) } };
}

/**
 * The MCP `plan` verb: the nodes an agent gives, written as `.sleds/routes/<key>.yml` and checked exactly as a file
 * is (the text written is the text checked), then loaded. An existing file is never overwritten: it is reviewed code.
 */
export async function planRoute(deps: RoutesApiDeps, plan: z.output<typeof RoutePlanRequest>, header = '# Written by the sleds plan verb: review it like code.'): Promise<ApiAnswer> {
  const root = await repoRootOf(plan.cwd);
  if (!root) return { status: 409, body: { error: `${plan.cwd} is not in a git repository — routes live in <repo>/.sleds/routes/<key>.yml` } };
  const shown = join(ROUTES_DIR, `${plan.key}.yml`);
  const { cwd: _cwd, key: _key, ...doc } = plan;
  const text = `${header}\n${stringify(doc, { lineWidth: 0 })}`;
  const r = parseRouteFile(text, { path: shown, harnesses: deps.harnesses });
  if (!r.ok) return { status: 422, body: { error: r.error } };
  const taken = jobRouteClash(deps.store, r.route.key, shown);
  if (taken) return { status: 409, body: { error: taken } };
  const path = join(root, shown);
  mkdirSync(join(root, ROUTES_DIR), { recursive: true });
  try {
    writeFileSync(path, text, { flag: 'wx' });
  } catch (e) {
    return { status: 409, body: { error: (e as NodeJS.ErrnoException).code === 'EEXIST' ? `${shown} is there already: edit it, or plan under another key` : `could not write ${shown}: ${(e as Error).message}` } };
  }
  deps.store.upsertRoute(withBands(deps, r.route, root), { repoRoot: root, filePath: path }, deps.defaultMode(root));
  return { status: 200, body: { key: r.route.key, file: path, waves: r.route.waves } };
}

/** `sleds route new <key> --from <item>`: the tracker item drafted as a route file (core/routes/from-item.ts), written and loaded as `plan` does. */
export async function routeFromItem(deps: RoutesApiDeps, req: { cwd: string; key: string; from: string }): Promise<ApiAnswer> {
  if (!deps.trackerItem) return { status: 503, body: { error: 'this musher reads no tracker — sleds github set-token < tokenfile, then try again' } };
  const item = await deps.trackerItem(req.from, req.cwd);
  if (!item.ok) return { status: item.status, body: { error: item.error } };
  const draft = draftRoute(item.item);
  if ('error' in draft) return { status: 422, body: { error: draft.error } };
  return planRoute(deps, { cwd: req.cwd, key: req.key, ...draft }, `# Drafted by sleds route new --from ${item.item.key}: review it like code, then sleds route arm ${req.key}.`);
}

function nodeView(n: NodeRow) {
  return {
    nodeId: n.nodeId,
    title: n.title,
    dependsOn: n.dependsOn,
    wave: n.wave,
    state: n.run.state,
    reason: n.run.reason,
    armed: n.armed,
    approved: n.approved,
    band: n.band,
    harness: n.harness,
    model: n.model,
    area: n.area,
    branch: n.branch,
    prNumber: n.prNumber,
    prUrl: n.prUrl,
    /** Its signed receipt's line once it was verified ("12 min · $0.43 · in band · seat dana · …"), else null. */
    receipt: receiptLineOf(n.receipt),
    lastError: n.lastError,
  };
}

function lineOf(store: RouteStore, route: RouteRow, nodes: NodeRow[]): string {
  return routeLine(
    nodes.map((n) => ({ state: n.run.state, band: n.band, receipt: n.receipt })),
    route,
    store.decisions(route.key),
  );
}

function showRoute(store: RouteStore, key: string): ApiAnswer {
  const route = store.route(key);
  if (!route) return { status: 404, body: { error: `no route '${key}' — sleds routes lists them; sleds route load reads .sleds/routes/` } };
  const nodes = store.nodes(key);
  const waves: ReturnType<typeof nodeView>[][] = [];
  for (const n of nodes) (waves[n.wave] ??= []).push(nodeView(n));
  return { status: 200, body: { route, waves: waves.filter(Boolean), band: routeBand(nodes.map((n) => n.band)), line: lineOf(store, route, nodes) } };
}

/** `<route>/<node>`, or a node id that exactly one route has. */
export function resolveNode(store: RouteStore, spec: string): { ok: true; key: string; id: string } | { ok: false; status: number; error: string } {
  const [a, b, ...more] = spec.split('/');
  if (more.length > 0 || !a) return { ok: false, status: 400, error: `'${spec}' is not <route>/<node> or <node>` };
  if (b !== undefined) return { ok: true, key: a, id: b };
  if (!ROUTE_ID.test(a)) return { ok: false, status: 400, error: `'${spec}' is not a node id` };
  const having = store.routes().filter((r) => store.node(r.key, a) !== null);
  if (having.length === 0) return { ok: false, status: 404, error: `no route has a node '${a}' — sleds routes lists them` };
  if (having.length > 1) return { ok: false, status: 409, error: `node '${a}' is in ${having.map((r) => r.key).join(' and ')}: say which, e.g. sleds start ${having[0]!.key}/${a}` };
  return { ok: true, key: having[0]!.key, id: a };
}

/** The route verbs, one function a route (musher/api/handlers.ts binds them to protocol/routes.ts). Bodies are raw JSON text. */
export function routeVerbs(deps: RoutesApiDeps) {
  const store = deps.store;
  const known = (key: string): ApiAnswer | null => (store.route(key) ? null : { status: 404, body: { error: `no route '${key}' — sleds routes lists them; sleds route load reads .sleds/routes/` } });
  return {
    list: (): ApiAnswer => ({
      status: 200,
      body: {
        routes: store.routes().map((r) => {
          const nodes = store.nodes(r.key);
          return { ...r, nodes: nodes.length, landed: nodes.filter((n) => n.run.state === 'COMPLETED').length, band: routeBand(nodes.map((n) => n.band)), line: lineOf(store, r, nodes) };
        }),
      },
    }),
    load: async (raw: string): Promise<ApiAnswer> => {
      const body = parseBody(raw, RouteLoadRequest, '{cwd, key?}');
      if (!body.ok) return body.answer;
      return loadRoutes(deps, body.value.cwd, body.value.key);
    },
    plan: async (raw: string): Promise<ApiAnswer> => {
      const body = parseBody(raw, RoutePlanRequest, '{cwd, key, title, nodes: [{id, brief, depends_on?}]}');
      if (!body.ok) return body.answer;
      return planRoute(deps, body.value);
    },
    fromItem: async (raw: string): Promise<ApiAnswer> => {
      const body = parseBody(raw, RouteNewRequest, '{cwd, key, from}');
      if (!body.ok) return body.answer;
      return routeFromItem(deps, body.value);
    },
    start: (raw: string): ApiAnswer => {
      const body = parseBody(raw, RouteStartRequest, '{node}');
      if (!body.ok) return body.answer;
      const which = resolveNode(store, body.value.node);
      if (!which.ok) return { status: which.status, body: { error: which.error } };
      const approved = store.approve(which.key, which.id);
      if (!approved.ok) return { status: 409, body: { error: approved.error } };
      const node = store.node(which.key, which.id)!;
      const waitingFor = node.dependsOn.filter((d) => store.node(which.key, d)?.run.state !== 'COMPLETED');
      return { status: 200, body: { key: which.key, node: which.id, state: node.run.state, ready: node.run.state === 'QUEUED' && waitingFor.length === 0, waitingFor } };
    },
    show: (key: string): ApiAnswer => showRoute(store, key),
    decisions: (key: string): ApiAnswer => known(key) ?? { status: 200, body: { key, decisions: store.decisions(key) } },
    arm: (key: string, raw: string): ApiAnswer => {
      const missing = known(key);
      if (missing) return missing;
      const body = parseBody(raw, RouteArmRequest, '{nodes?}');
      if (!body.ok) return body.answer;
      const nodes = body.value.nodes ?? null;
      const armed = store.arm(key, nodes && nodes.length > 0 ? nodes : null);
      if (!armed.ok) return { status: 404, body: { error: armed.error } };
      return { status: 200, body: { key, armed: armed.armed, mode: store.route(key)!.mode } };
    },
    mode: (key: string, raw: string): ApiAnswer => {
      const missing = known(key);
      if (missing) return missing;
      const body = parseBody(raw, RouteModeRequest, '{mode: approve|auto}');
      if (!body.ok) return body.answer;
      store.setMode(key, body.value.mode);
      return { status: 200, body: { key, armed: store.nodes(key).filter((n) => n.armed).map((n) => n.nodeId), mode: body.value.mode } };
    },
  };
}
