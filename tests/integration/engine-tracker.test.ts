import { describe, expect, it } from 'vitest';
import { pullOf, SLUG, useEngineWorlds } from '../support/engine-world.js';

/**
 * A route whose tracker is a GitHub issue keeps one comment there (issue 14 § 12): its waves with each node's state
 * and pull request, and the route's line; edited as the route moves, never written twice.
 */
const { world } = useEngineWorlds();

describe('the route on its tracker item', { timeout: 120_000 }, () => {
  it('one comment on the issue, written when the first PR opens and edited as nodes land, ending with the route line', async () => {
    const w = await world({
      route: `title: Exports
tracker: acme/shop#1
nodes:
  - id: schema
    title: Export jobs table
    model: claude-opus-4-1
    brief: |
      @write schema.sql create table export_jobs (id int);
  - id: mailer
    title: Mailer
    depends_on: [schema]
    model: claude-opus-4-1
    brief: |
      @write mailer.ts import './schema.sql';
`,
    });
    expect(w.gh.openIssue(SLUG, { title: 'Exports', body: '- [ ] schema\n- [ ] mailer (after 1)', labels: [], createdAt: w.clock.t }).number).toBe(1);
    const comment = () => {
      const all = w.gh.comments(SLUG, 1);
      expect(all).toHaveLength(1);
      return all[0]!.body;
    };

    await w.until(() => w.state('schema') === 'AWAITING_MERGE', 'schema awaiting merge');
    const first = comment();
    expect(first).toContain('<!-- sleds:route eng-503 -->');
    expect(first).toContain(`\`schema\` Export jobs table — in review ([#${pullOf(w, 'schema')}](`);
    expect(first).toContain('`mailer` Mailer — waiting');
    expect(first).toMatch(/\*\*so far \d+ min · \$0\.02 · no band for acme\/shop#1, across 0 of 2 nodes landed and \d machines?\*\*/);

    w.gh.mergePull(SLUG, pullOf(w, 'schema')!, 'dana');
    await w.until(() => w.state('mailer') === 'AWAITING_MERGE', 'mailer awaiting merge');
    w.gh.mergePull(SLUG, pullOf(w, 'mailer')!, 'dana');
    await w.until(() => w.state('mailer') === 'COMPLETED', 'mailer landed');
    const last = comment();
    expect(last).toContain('`schema` Export jobs table — merged');
    expect(last).toContain('`mailer` Mailer — merged');
    expect(last).toMatch(/\*\*\d+ min · \$0\.05 · no band for acme\/shop#1, across 2 nodes and \d machines?\*\*/);
    expect(w.gh.mergeCalls).toEqual([]);
  });
});
