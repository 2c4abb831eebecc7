import { ROUTES, routeOf, type RouteName } from '../../protocol/routes.js';

/** A request matched to its route in protocol/routes.ts: the route's name and its path parameters. */
export interface MatchedRoute {
  name: RouteName;
  /** Each `:name` of the route's path, decoded. */
  params: Record<string, string>;
  /** The same, as the path spelt them (a refusal that names the id repeats what was sent). */
  rawParams: Record<string, string>;
}

const captures = new Map<string, { names: string[]; pattern: RegExp }>();

/** A route's path → its parameters' names and a pattern that captures each (built once per route). */
function capturesOf(path: string): { names: string[]; pattern: RegExp } {
  let c = captures.get(path);
  if (!c) {
    const names: string[] = [];
    const escaped = path.split('/').map((seg) => {
      if (!seg.startsWith(':')) return seg.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
      names.push(seg.slice(1));
      return '([^/]+)';
    });
    c = { names, pattern: new RegExp(`^${escaped.join('\\/')}$`) };
    captures.set(path, c);
  }
  return c;
}

/** The route a method and path name, with its parameters; null when the table has none. */
export function matchRoute(method: string, pathname: string): MatchedRoute | null {
  const name = routeOf(method, pathname);
  if (!name) return null;
  const { names, pattern } = capturesOf(ROUTES[name].path);
  const m = pattern.exec(pathname);
  const params: Record<string, string> = {};
  const rawParams: Record<string, string> = {};
  names.forEach((n, i) => {
    rawParams[n] = m![i + 1]!;
    params[n] = decodeURIComponent(m![i + 1]!);
  });
  return { name, params, rawParams };
}
