/**
 * GitHub's REST lists paginate with an RFC 8288 `Link` header: `<https://api.github.com/…&page=2>; rel="next",
 * <…&page=5>; rel="last"` (plus `prev`/`first` past page one). The last page has no `next`. Pure.
 */

/** The URL of a relation (`next` by default) in a Link header, or null when there is none. */
export function linkOf(header: string | null | undefined, rel = 'next'): string | null {
  if (!header) return null;
  // One link: <url> followed by ;-separated params. A URL never holds '>' unescaped, so the split is safe.
  for (const m of header.matchAll(/<([^>]*)>((?:\s*;\s*[^;,]+)*)/g)) {
    const params = m[2]!;
    const rels = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(params);
    const names = (rels?.[1] ?? rels?.[2] ?? '').toLowerCase().split(/\s+/);
    if (names.includes(rel.toLowerCase())) return m[1]!.trim();
  }
  return null;
}
