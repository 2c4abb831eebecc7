/**
 * The one comment sleds keeps on a route's tracker item (issue 14 § 12): its waves with each node's state and pull
 * request, and the route's line (`31 min · $7.40 · in band for ENG-503, across 8 nodes, …`). A hidden mark names
 * the route, so the comment is found again and edited, never written twice. Markdown; pure.
 */

export interface RouteCommentNode {
  nodeId: string;
  title: string;
  wave: number;
  state: string;
  prNumber: number | null;
  prUrl: string | null;
}

export function routeMark(key: string): string {
  return `<!-- sleds:route ${key} -->`;
}

export function isRouteComment(body: string | null | undefined, key: string): boolean {
  return (body ?? '').includes(routeMark(key));
}

const STATE_WORD: Record<string, string> = {
  COMPLETED: 'merged',
  AWAITING_MERGE: 'in review',
  RUNNING: 'running',
  VERIFYING: 'verifying',
  PREPARING: 'starting',
  CLAIMING: 'starting',
  QUEUED: 'waiting',
  WAITING_FOR_INPUT: 'waiting for an answer',
  WAITING_FOR_LIMIT: 'waiting for a limit',
  RECOVERY_REQUIRED: 'needs a person',
  CANCELLED: 'cancelled',
  FAILED: 'failed',
};

/** Markdown cannot be broken out of by a node's title: brackets, backticks and angle brackets are escaped. */
const escape = (s: string) => s.replace(/[\\`*_[\]<>|]/g, (c) => `\\${c}`).replace(/\s*\n\s*/g, ' ');

function nodeItem(n: RouteCommentNode): string {
  // Only a pull request's own https link is linked: a URL is never taken from anywhere else.
  const pr = n.prNumber !== null && n.prUrl && /^https:\/\/[^\s()]+$/.test(n.prUrl) ? ` ([#${n.prNumber}](${n.prUrl}))` : '';
  return `\`${n.nodeId}\` ${escape(n.title)} — ${STATE_WORD[n.state] ?? n.state.toLowerCase()}${pr}`;
}

export function routeComment(route: { key: string; title: string }, nodes: readonly RouteCommentNode[], line: string): string {
  const out = [routeMark(route.key), `**sleds** runs this as route \`${route.key}\` — ${escape(route.title)}.`, ''];
  const waves = [...new Set(nodes.map((n) => n.wave))].sort((a, b) => a - b);
  for (const w of waves) {
    const inWave = nodes.filter((n) => n.wave === w);
    out.push(`- **Wave ${w + 1}:** ${inWave.map(nodeItem).join('; ')}`);
  }
  out.push('', `**${escape(line)}**`);
  return out.join('\n');
}
