/**
 * The folder Claude Code keeps a launch directory's transcripts in, under `<config>/projects/` (measured on
 * 2.1.328, shared/facts/claude-code.md §4): the cwd with every character outside `[A-Za-z0-9]` made `-`; one over 200
 * characters is cut to 200 and given `-` and the base-36 absolute value of a 32-bit string hash of the whole cwd
 * (`h = h*31 + code unit`, per UTF-16 code unit, as the binary computes it). `claude --continue` looks only here.
 */
const MAX_SLUG = 200;

function stringHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = ((h << 5) - h + s.charCodeAt(i)) | 0;
  return h;
}

export function claudeProjectSlug(cwd: string): string {
  const slug = cwd.replace(/[^a-zA-Z0-9]/g, '-');
  if (slug.length <= MAX_SLUG) return slug;
  return `${slug.slice(0, MAX_SLUG)}-${Math.abs(stringHash(cwd)).toString(36)}`;
}
