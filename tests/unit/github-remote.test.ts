import { describe, expect, it } from 'vitest';
import { githubRepoOfRemote, parseRepoSlug, splitRemote } from '../../core/github/remote.js';

describe('githubRepoOfRemote', () => {
  it.each([
    ['https://github.com/acme/shop.git', 'acme/shop'],
    ['https://github.com/acme/shop', 'acme/shop'],
    ['https://github.com/acme/shop/', 'acme/shop'],
    ['https://GitHub.com/Acme/Shop.git', 'Acme/Shop'],
    ['http://github.com/acme/shop.git', 'acme/shop'],
    ['https://x-access-token:ghp_secret@github.com/acme/shop.git', 'acme/shop'],
    ['https://dana@github.com/acme/shop.git', 'acme/shop'],
    ['https://www.github.com/acme/shop', 'acme/shop'],
    ['git@github.com:acme/shop.git', 'acme/shop'],
    ['git@github.com:acme/shop', 'acme/shop'],
    ['github.com:acme/shop.git', 'acme/shop'],
    ['ssh://git@github.com/acme/shop.git', 'acme/shop'],
    ['ssh://git@github.com:22/acme/shop.git', 'acme/shop'],
    ['ssh://git@ssh.github.com:443/acme/shop.git', 'acme/shop'],
    ['git+ssh://git@github.com/acme/shop.git', 'acme/shop'],
    ['git://github.com/acme/shop.git', 'acme/shop'],
    ['  git@github.com:acme/my.repo_name-2.git\n', 'acme/my.repo_name-2'],
    // Not GitHub, or not a repository
    ['git@gitlab.com:acme/shop.git', null],
    ['https://bitbucket.org/acme/shop.git', null],
    ['/srv/git/shop.git', null],
    ['../shop', null],
    ['file:///srv/git/shop.git', null],
    ['C:/repos/shop', null],
    ['https://github.com/acme', null],
    ['https://github.com/acme/shop/tree/main', null],
    ['git@github.com:-acme/shop.git', null],
    ['https://github.com/acme/.git', null],
    ['', null],
  ])('%j → %s', (url, slug) => {
    const r = githubRepoOfRemote(url);
    expect(r ? `${r.owner}/${r.name}` : null).toBe(slug);
  });

  it('a GitHub Enterprise host counts when named', () => {
    expect(githubRepoOfRemote('git@ghe.acme.dev:platform/api.git')).toBeNull();
    expect(githubRepoOfRemote('git@ghe.acme.dev:platform/api.git', ['ghe.acme.dev'])).toEqual({ owner: 'platform', name: 'api' });
    expect(githubRepoOfRemote('https://GHE.acme.dev/platform/api', ['ghe.acme.dev'])).toEqual({ owner: 'platform', name: 'api' });
  });

  it('splitRemote keeps credentials out of the host', () => {
    expect(splitRemote('https://u:p@github.com:8443/a/b.git')).toEqual({ host: 'github.com', path: 'a/b.git' });
  });
});

describe('parseRepoSlug', () => {
  it.each([
    ['acme/shop', { owner: 'acme', name: 'shop' }],
    [' acme/shop.git ', { owner: 'acme', name: 'shop' }],
    ['acme/shop.js', { owner: 'acme', name: 'shop.js' }],
    ['acme', null],
    ['acme/shop/extra', null],
    ['acme shop/x', null],
    ['https://github.com/acme/shop', null],
  ])('%j → %j', (text, want) => {
    expect(parseRepoSlug(text)).toEqual(want);
  });
});
