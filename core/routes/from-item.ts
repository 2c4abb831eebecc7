import { parseRepoSlug, type GithubRepo } from '../github/remote.js';

/**
 * `sleds route new <key> --from <tracker item>` (issue 14 § 1): a tracker item drafted as a route. Each top-level
 * task-list line of the item (`- [ ] Export jobs table`) is a node; the lines indented under it are its brief; a
 * trailing `(after schema, api)` (ids or 1-based item numbers) its dependencies. An item with no task list is one
 * node whose brief is the item. The draft is written as a route file and reviewed like code, so it stays plain: no
 * guessing of dependencies the item does not state. The item's text is someone else's: control characters are
 * dropped, sizes capped. Pure.
 */

export interface ItemRef {
  repo: GithubRepo;
  number: number;
}

/** `owner/repo#12`, `https://github.com/owner/repo/issues/12`, or `#12` / `12` with the checkout's repository. */
export function parseItemRef(text: string, checkoutRepo: GithubRepo | null): ItemRef | { error: string } {
  const t = text.trim();
  const url = /^https:\/\/github\.com\/([^/\s]+)\/([^/\s]+)\/(?:issues|pull)\/(\d{1,9})\/?(?:[#?].*)?$/i.exec(t);
  const slugged = /^([^/\s#]+\/[^/\s#]+)#(\d{1,9})$/.exec(t);
  const bare = /^#?(\d{1,9})$/.exec(t);
  let repo: GithubRepo | null = null;
  let num: string | undefined;
  if (url) {
    repo = parseRepoSlug(`${url[1]}/${url[2]}`);
    num = url[3];
  } else if (slugged) {
    repo = parseRepoSlug(slugged[1]!);
    num = slugged[2];
  } else if (bare) {
    if (!checkoutRepo) return { error: `'${t}' names no repository and this checkout has no GitHub remote — say owner/repo#${bare[1]}` };
    repo = checkoutRepo;
    num = bare[1];
  }
  const n = Number(num);
  if (!repo || !Number.isInteger(n) || n < 1) return { error: `'${t.slice(0, 80)}' is not a tracker item — say owner/repo#12, #12, or the issue's URL` };
  return { repo, number: n };
}

export interface DraftItem {
  /** How the route names its tracker item: `acme/shop#12`. */
  key: string;
  title: string;
  body: string;
}

export interface DraftNode {
  id: string;
  title: string;
  brief: string;
  depends_on: string[];
}

export interface RouteDraft {
  title: string;
  tracker: string;
  notes: string;
  nodes: DraftNode[];
}

const MAX_NODES = 40;
const MAX_BRIEF = 8_000;
const MAX_TITLE = 120;

// Control characters other than tab and newline: a hostile item must not put escapes into a terminal or a file.
// eslint-disable-next-line no-control-regex
const clean = (s: string) => s.replace(/\r\n?/g, '\n').replace(/[\u0000-\u0008\u000b-\u001f\u007f\u202a-\u202e\u2066-\u2069]/g, '');

/** A node id from a title: lowercase words joined by '-', at most 40 characters, unique in the route. */
function idFrom(title: string, taken: Set<string>): string {
  const base =
    title
      .toLowerCase()
      .normalize('NFKD')
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 36)
      .replace(/-+$/, '') || 'node';
  let id = /^[a-z]/.test(base) ? base : `n-${base}`.slice(0, 36);
  for (let k = 2; taken.has(id); k++) id = `${base.slice(0, 33)}-${k}`;
  taken.add(id);
  return id;
}

const TASK = /^[-*]\s+\[[ xX]\]\s+(.+)$/;
const AFTER = /\s*\((?:after|depends on)[:\s]+([^)]+)\)\s*$/i;

export function draftRoute(item: DraftItem): RouteDraft | { error: string } {
  const title = clean(item.title).trim().slice(0, MAX_TITLE) || item.key;
  const lines = clean(item.body).split('\n');
  const tasks: Array<{ title: string; after: string[]; brief: string[] }> = [];
  const preamble: string[] = [];
  for (const line of lines) {
    const task = TASK.exec(line);
    if (task) {
      const text = task[1]!.trim();
      const after = AFTER.exec(text);
      tasks.push({ title: (after ? text.slice(0, after.index) : text).trim().slice(0, MAX_TITLE), after: after ? after[1]!.split(/[,\s]+/).filter(Boolean) : [], brief: [] });
    } else if (tasks.length > 0 && /^\s+\S/.test(line)) {
      tasks.at(-1)!.brief.push(line.trim());
    } else if (tasks.length === 0) {
      preamble.push(line);
    }
  }
  const context = preamble.join('\n').trim();
  if (tasks.length === 0) {
    const brief = `${title}\n\n${context}`.trim().slice(0, MAX_BRIEF);
    return { title, tracker: item.key, notes: `Drafted from ${item.key}.`, nodes: [{ id: idFrom(title, new Set()), title, brief, depends_on: [] }] };
  }
  if (tasks.length > MAX_NODES) return { error: `${item.key} has ${tasks.length} tasks; a route holds at most ${MAX_NODES} — split the item` };
  const taken = new Set<string>();
  const ids = tasks.map((t) => idFrom(t.title, taken));
  const nodes: DraftNode[] = [];
  for (const [i, t] of tasks.entries()) {
    const deps: string[] = [];
    for (const ref of t.after) {
      const byNumber = /^#?(\d+)$/.exec(ref);
      const dep = byNumber ? ids[Number(byNumber[1]) - 1] : ids.find((id) => id === ref.toLowerCase());
      if (!dep) return { error: `${item.key}: task ${i + 1} ("${t.title}") is after '${ref}', which is no task of the item — name a task by its number or id` };
      if (dep !== ids[i] && !deps.includes(dep)) deps.push(dep);
    }
    const brief = [t.title, ...(t.brief.length > 0 ? ['', ...t.brief] : [])].join('\n').slice(0, MAX_BRIEF);
    nodes.push({ id: ids[i]!, title: t.title, brief, depends_on: deps });
  }
  return { title, tracker: item.key, notes: [`Drafted from ${item.key}.`, context].filter(Boolean).join('\n\n').slice(0, MAX_BRIEF), nodes };
}
