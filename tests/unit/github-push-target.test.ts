import { describe, expect, it } from 'vitest';
import { linkOf } from '../../core/github/link.js';
import { parseConfigZ, parseRemoteList, pushConfigOf, pushTarget, type PushConfig } from '../../core/github/push-target.js';

describe('linkOf (GitHub pagination)', () => {
  const first = '<https://api.github.com/search/issues?q=label%3Asleds&per_page=100&page=2>; rel="next", <https://api.github.com/search/issues?q=label%3Asleds&per_page=100&page=4>; rel="last"';
  const middle = '<https://api.github.com/repositories/1/issues/7/comments?per_page=100&page=1>; rel="prev", <https://api.github.com/repositories/1/issues/7/comments?per_page=100&page=3>; rel="next", <https://api.github.com/repositories/1/issues/7/comments?per_page=100&page=3>; rel="last", <https://api.github.com/repositories/1/issues/7/comments?per_page=100&page=1>; rel="first"';
  const last = '<https://api.github.com/repos/acme/shop/pulls?page=1>; rel="prev", <https://api.github.com/repos/acme/shop/pulls?page=1>; rel="first"';
  it.each([
    [first, 'next', 'https://api.github.com/search/issues?q=label%3Asleds&per_page=100&page=2'],
    [first, 'last', 'https://api.github.com/search/issues?q=label%3Asleds&per_page=100&page=4'],
    [middle, 'next', 'https://api.github.com/repositories/1/issues/7/comments?per_page=100&page=3'],
    [middle, 'prev', 'https://api.github.com/repositories/1/issues/7/comments?per_page=100&page=1'],
    [last, 'next', null],
    ['<https://x.test/a?page=2>;rel=next', 'next', 'https://x.test/a?page=2'],
    ['<https://x.test/a?page=2>; rel="next last"', 'last', 'https://x.test/a?page=2'],
    ['<https://x.test/a?page=2>; title="next"; rel="prev"', 'next', null],
    ['', 'next', null],
    [null, 'next', null],
  ])('%j rel=%s → %s', (header, rel, url) => {
    expect(linkOf(header, rel)).toBe(url);
  });
});

describe('pushTarget: where a branch is pushed and where its pull request lives', () => {
  const remotes = (entries: Record<string, string | [string, string]>) =>
    parseRemoteList(
      Object.entries(entries)
        .flatMap(([name, url]) => (Array.isArray(url) ? [`${name}\t${url[0]} (fetch)`, `${name}\t${url[1]} (push)`] : [`${name}\t${url} (fetch)`, `${name}\t${url} (push)`]))
        .join('\n'),
    );
  const config = (c: Partial<PushConfig> & { remotes: PushConfig['remotes'] }): PushConfig => ({ branch: 'feature/login', ghResolvedBase: [], pushRemote: null, upstreamRemote: null, upstreamRef: null, pushDefault: null, ...c });
  const slug = (r: { owner: string; name: string } | null | undefined) => (r ? `${r.owner}/${r.name}` : null);
  const FORK = 'git@github.com:dana/shop.git';
  const TEAM = 'https://github.com/acme/shop.git';

  it.each<[string, Partial<PushConfig> & { remotes: PushConfig['remotes'] }, string | null, string | null]>([
    ['origin only: the team repository, pushed there', { remotes: remotes({ origin: TEAM }) }, 'acme/shop', 'acme:feature/login'],
    ['origin = fork, upstream = team (gh repo fork): PR on the team repo, head on the fork', { remotes: remotes({ origin: FORK, upstream: TEAM }) }, 'acme/shop', 'dana:feature/login'],
    ['tracking the fork: git names origin as the push remote', { remotes: remotes({ origin: FORK, upstream: TEAM }), pushRemote: 'origin', upstreamRemote: 'origin', upstreamRef: 'refs/heads/feature/login' }, 'acme/shop', 'dana:feature/login'],
    ['origin = team, pushRemote = a fork with its own name', { remotes: remotes({ origin: TEAM, mine: 'git@github.com:dana/shop-fork.git' }), pushRemote: 'mine' }, 'acme/shop', 'dana:feature/login'],
    ['gh repo set-default wins over upstream', { remotes: remotes({ origin: 'git@github.com:acme/shop.git', upstream: 'https://github.com/oss/shop.git' }), ghResolvedBase: ['origin'] }, 'acme/shop', 'acme:feature/login'],
    ['a remote named github before origin', { remotes: remotes({ origin: FORK, github: TEAM }) }, 'acme/shop', 'dana:feature/login'],
    ['pushurl differs from the fetch URL: the push goes to the pushurl', { remotes: remotes({ origin: [TEAM, FORK] }) }, 'acme/shop', 'dana:feature/login'],
    ['push.default upstream pushes to the tracked branch', { remotes: remotes({ origin: TEAM }), pushRemote: 'origin', upstreamRemote: 'origin', upstreamRef: 'refs/heads/dana/login', pushDefault: 'upstream' }, 'acme/shop', 'acme:dana/login'],
    ['push.default simple keeps the branch name', { remotes: remotes({ origin: TEAM }), pushRemote: 'origin', upstreamRemote: 'origin', upstreamRef: 'refs/heads/main' }, 'acme/shop', 'acme:feature/login'],
    ['upstream not on GitHub: origin is the base', { remotes: remotes({ origin: TEAM, upstream: 'git@gitlab.com:acme/shop.git' }) }, 'acme/shop', 'acme:feature/login'],
    ['pushed to a remote that is not GitHub: no head', { remotes: remotes({ origin: TEAM, backup: '/srv/git/shop.git' }), pushRemote: 'backup' }, 'acme/shop', null],
    ['detached HEAD: no head', { remotes: remotes({ origin: TEAM }), branch: null }, 'acme/shop', null],
    ['no GitHub remote at all', { remotes: remotes({ origin: 'git@gitlab.com:acme/shop.git' }) }, null, null],
    ['no origin: another remote is the base, the push has nowhere to go', { remotes: remotes({ team: TEAM }) }, 'acme/shop', null],
  ])('%s', (_, c, base, head) => {
    const t = pushTarget(config(c));
    expect(slug(t.base)).toBe(base);
    expect(t.head ? `${t.head.repo.owner}:${t.head.branch}` : null).toBe(head);
  });

  it('reads git remote -v', () => {
    const list = parseRemoteList('origin\tgit@github.com:dana/shop.git (fetch)\norigin\tgit@github.com:dana/shop.git (push)\nupstream\thttps://github.com/acme/shop.git (fetch)\nupstream\tno_push (push)\n');
    expect([...list.entries()]).toEqual([
      ['origin', { fetch: 'git@github.com:dana/shop.git', push: 'git@github.com:dana/shop.git' }],
      ['upstream', { fetch: 'https://github.com/acme/shop.git', push: 'no_push' }],
    ]);
  });

  it.each<[string, string, Partial<PushConfig>]>([
    ['nothing set', '', { pushRemote: null, upstreamRemote: null, upstreamRef: null, pushDefault: null, ghResolvedBase: [] }],
    ['tracking origin', 'branch.fix/cart.remote\norigin\0branch.fix/cart.merge\nrefs/heads/fix/cart\0', { pushRemote: 'origin', upstreamRemote: 'origin', upstreamRef: 'refs/heads/fix/cart' }],
    ['remote.pushDefault beats branch.<b>.remote', 'branch.fix/cart.remote\nupstream\0remote.pushdefault\nmine\0', { pushRemote: 'mine', upstreamRemote: 'upstream' }],
    ['branch.<b>.pushRemote beats remote.pushDefault', 'remote.pushdefault\nmine\0branch.fix/cart.pushremote\norigin\0', { pushRemote: 'origin' }],
    ["another branch's settings do not count", 'branch.main.pushremote\nmine\0branch.fix/cart-2.remote\nx\0', { pushRemote: null }],
    ['the last value wins; gh-resolved base marks', 'push.default\nsimple\0push.default\nupstream\0remote.upstream.gh-resolved\nbase\0remote.origin.gh-resolved\nacme/shop\0', { pushDefault: 'upstream', ghResolvedBase: ['upstream'] }],
  ])('push settings: %s', (_, z, want) => {
    expect(pushConfigOf('fix/cart', new Map(), parseConfigZ(z))).toMatchObject(want);
  });
});
