import { describe, expect, it } from 'vitest';
import { githubIssueQuery, repoOfIssueUrl } from '../../core/tracker/github-query.js';
import { taskIdOfComment, trackerComment, trackerMark, withReceiptLine } from '../../core/tracker/comment.js';
import { resolvePolicy } from '../../core/policy/resolve.js';
import { formatIssuePath } from '../../core/policy/schema.js';

describe('githubIssueQuery', () => {
  it.each([
    [['acme/shop'], 'sleds', 'is:issue is:open label:sleds repo:acme/shop'],
    [['acme/shop', 'acme/api'], 'sleds', 'is:issue is:open label:sleds (repo:acme/shop OR repo:acme/api)'],
    [['acme/shop'], 'needs sizing', 'is:issue is:open label:"needs sizing" repo:acme/shop'],
    [['acme/shop'], 'say "hi"', 'is:issue is:open label:"say hi" repo:acme/shop'],
  ])('%j %j → %s', (repos, label, q) => {
    expect(githubIssueQuery(repos.map((r) => ({ owner: r.split('/')[0]!, name: r.split('/')[1]! })), label)).toBe(q);
  });

  it('reads the repository of an issue from its repository_url', () => {
    expect(repoOfIssueUrl('https://api.github.com/repos/acme/shop')).toEqual({ owner: 'acme', name: 'shop' });
    expect(repoOfIssueUrl('http://127.0.0.1:4000/repos/acme/shop/')).toEqual({ owner: 'acme', name: 'shop' });
    expect(repoOfIssueUrl('https://api.github.com/users/acme')).toBeNull();
  });
});

describe('trackerComment', () => {
  const base = { taskId: 'k3m9x2qa45pz', estimate: 'no band yet: 2 similar receipts (5 needed)', worth: null, worthLevels: ['high', 'normal', 'low'], picker: null, receipt: null };

  it('names the task, the band, the worth (and how to set it) and the picker, behind a mark that finds it again', () => {
    const c = trackerComment(base);
    expect(c.split('\n')[0]).toBe(trackerMark('k3m9x2qa45pz'));
    expect(c).toContain('task `k3m9x2qa45pz`');
    expect(c).toContain('- **Band:** no band yet: 2 similar receipts (5 needed)');
    expect(c).toContain('- **Worth:** not set — work with no worth is held; set it with `sleds task k3m9x2qa45pz worth high|normal|low`');
    expect(c).toContain('- **Picker:** no suggestion yet');
    expect(c).not.toContain('Receipt');
    expect(taskIdOfComment(c)).toBe('k3m9x2qa45pz');
    expect(taskIdOfComment('LGTM')).toBeNull();
  });

  it('a stated worth and a picker paragraph (several lines become one)', () => {
    const c = trackerComment({ ...base, worth: 'high', estimate: '$4–11 · 20–55 min · 81%\nfrom 12 receipts', picker: 'Dispatch here:\nclaude-opus-5-5, 62% of the bar left' });
    expect(c).toContain('- **Worth:** high');
    expect(c).toContain('- **Band:** $4–11 · 20–55 min · 81% from 12 receipts');
    expect(c).toContain('- **Picker:** Dispatch here: claude-opus-5-5, 62% of the bar left');
  });

  it('the receipt is added to the comment once, and a second receipt replaces it; the band stays as it was', () => {
    const c = trackerComment(base);
    const once = withReceiptLine(c, '31 min · $7.40 · no band · seat dana · signed');
    expect(once.startsWith(c)).toBe(true);
    expect(once.endsWith('\n- **Receipt:** 31 min · $7.40 · no band · seat dana · signed')).toBe(true);
    const again = withReceiptLine(once, '35 min · $8.00 · no band · seat dana · signed');
    expect(again.match(/Receipt/g)).toHaveLength(1);
    expect(again).toContain('35 min · $8.00');
    expect(again).toContain('- **Band:** no band yet');
  });
});

describe('policy: tracker', () => {
  it('tracker.github: repositories, a label (default sleds) and a round every 2m unless said', () => {
    const r = resolvePolicy([{ source: 'policy.yml', data: { tracker: { github: { repos: ['acme/shop', 'acme/api'] } } } }]);
    expect(r.errors).toEqual([]);
    expect(r.policy!.tracker).toEqual({ github: { repos: ['acme/shop', 'acme/api'], label: 'sleds', everyMs: 120_000 } });
    const custom = resolvePolicy([{ source: 'policy.yml', data: { tracker: { github: { repos: 'acme/shop', label: 'ai-ok', every: '5m' } } } }]);
    expect(custom.policy!.tracker.github).toEqual({ repos: ['acme/shop'], label: 'ai-ok', everyMs: 300_000 });
  });

  it('no tracker section: none', () => {
    expect(resolvePolicy([]).policy!.tracker).toEqual({ github: null });
  });

  it.each([
    [{ github: { repos: ['acme'] } }, 'tracker.github.repos[0]', /not a GitHub repository like owner\/name/],
    [{ github: { repos: ['acme/shop'], every: '10s' } }, 'tracker.github.every', /at most one round a minute/],
    [{ github: { repos: [] } }, 'tracker.github.repos', /repository like owner\/name/],
    [{ github: { label: 'sleds' } }, 'tracker.github.repos', /expected a repository like owner\/name/],
  ])('%j is refused at %s', (tracker, path, message) => {
    const r = resolvePolicy([{ source: 'policy.yml', data: { tracker } }]);
    expect(r.policy).toBeNull();
    const e = r.errors.find((x) => formatIssuePath(x.path) === path);
    expect(e?.message, JSON.stringify(r.errors)).toMatch(message);
  });

  it('an unknown tracker is named and ignored', () => {
    const r = resolvePolicy([{ source: 'policy.yml', data: { tracker: { jira: { project: 'SHOP' } } } }]);
    expect(r.warnings.map((w) => formatIssuePath(w.path))).toContain('tracker.jira');
  });
});
