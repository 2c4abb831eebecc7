import { describe, expect, it } from 'vitest';
import { isRouteComment, routeComment } from '../../core/routes/route-comment.js';

describe('routeComment: the route on its tracker item', () => {
  const node = (nodeId: string, wave: number, state: string, pr: number | null = null, title = nodeId) => ({ nodeId, title, wave, state, prNumber: pr, prUrl: pr ? `https://github.com/acme/shop/pull/${pr}` : null });

  it('draws a line per wave with each node’s state and PR, then the route line; its mark finds it again', () => {
    const body = routeComment({ key: 'eng-503', title: 'Exports' }, [node('schema', 0, 'COMPLETED', 2), node('api', 1, 'AWAITING_MERGE', 3), node('ui', 1, 'WAITING_FOR_INPUT')], '31 min · $7.40 · in band for ENG-503');
    expect(body).toBe(
      [
        '<!-- sleds:route eng-503 -->',
        '**sleds** runs this as route `eng-503` — Exports.',
        '',
        '- **Wave 1:** `schema` schema — merged ([#2](https://github.com/acme/shop/pull/2))',
        '- **Wave 2:** `api` api — in review ([#3](https://github.com/acme/shop/pull/3)); `ui` ui — waiting for an answer',
        '',
        '**31 min · $7.40 · in band for ENG-503**',
      ].join('\n'),
    );
    expect(isRouteComment(body, 'eng-503')).toBe(true);
    expect(isRouteComment(body, 'eng-50')).toBe(false);
  });

  it.each([
    ['a title that tries to close the comment or link elsewhere', node('x', 0, 'RUNNING', null, '--> [click](https://evil.example) <img src=x>'), '`x` --\\> \\[click\\](https://evil.example) \\<img src=x\\> — running'],
    ['a PR URL that is not https is not linked', { ...node('y', 0, 'AWAITING_MERGE', 4), prUrl: 'javascript:alert(1)' }, '`y` y — in review'],
  ])('%s', (_what, n, want) => {
    expect(routeComment({ key: 'k', title: 't' }, [n], 'line').split('\n')[3]).toBe(`- **Wave 1:** ${want}`);
  });
});
