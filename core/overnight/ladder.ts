import { oneLine } from '../format.js';

/**
 * The ladder (issue 15 § 5): what sleds does with an agent's question so one question at 11 pm stalls nothing. Pure.
 * Rungs, in order, each with the reason it was taken:
 *   1. resolve from context: an earlier decision on the same question (this route's or another route's of the same
 *      repository) whose answer is one of the options; else one paragraph of the spec (SPEC.md, docs, README, the
 *      route's brief and notes) on the question's topic that names one option's distinctive words and no other's;
 *   2. decide: a reversible, low-risk choice takes the agent's first (recommended) option;
 *   3. escalate to the overnight on-call (an overnight job with an on-call in its policy);
 *   4. park for a person (no on-call, or not an overnight job).
 * Matching is on normalized words (lower case, a light stem, no stop words), so every resolution can say what it read.
 */

export type Rung = 'context' | 'decided' | 'on-call' | 'person';

export interface LadderQuestion {
  question: string;
  /** 2–4 sentences; the agent's recommended one first. */
  options: readonly string[];
  reversible: boolean;
  risk: 'low' | 'high';
}

/** A text the answer may be in: `SPEC.md`, a file under docs/, the node’s brief, the route’s notes. */
export interface LadderSource {
  name: string;
  text: string;
}

/** An earlier decision: of this route or of another route of the same repository (`where`: `route eng-503`). */
export interface EarlierDecision {
  question: string;
  answer: string;
  where: string;
}

export interface LadderContext {
  sources: readonly LadderSource[];
  decisions: readonly EarlierDecision[];
  /** The overnight policy's on-call (a handle, a Slack id or a channel); null: none. */
  onCall: string | null;
  overnight: boolean;
}

export type Resolution = { ok: true; option: number; where: string; quote: string; reason: string } | { ok: false; why: string };

export type LadderOutcome =
  | { rung: 'context'; option: number; where: string; reason: string }
  | { rung: 'decided'; option: number; reason: string }
  | { rung: 'escalate'; to: string; reason: string }
  | { rung: 'park'; reason: string };

export const LETTERS = ['A', 'B', 'C', 'D'] as const;

const STOP = new Set(
  'the a an and or but if then else of to in on at by for with from into onto as is are was were be been being it its this that these those there here we you they he she i our your their my me us them do does did done should would could can will shall may might must not no yes so than too very just also only what which who whom whose when where why how all any each both either neither other some such own same more most less few use using used via per one two new old'.split(
    ' ',
  ),
);

function stem(w: string): string {
  if (w.length > 5 && w.endsWith('ing')) return w.slice(0, -3);
  if (w.length > 4 && w.endsWith('ed')) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) return w.slice(0, -1);
  return w;
}

/** The words a text is matched on: lower case, stemmed, without stop words or words under three letters. */
export function wordsOf(text: string): Set<string> {
  const out = new Set<string>();
  for (const raw of text.toLowerCase().replace(/'s\b/g, '').split(/[^a-z0-9]+/)) {
    if (raw.length < 3 || STOP.has(raw)) continue;
    out.add(stem(raw));
  }
  return out;
}

const inter = (a: Set<string>, b: Set<string>): string[] => [...a].filter((w) => b.has(w));

/** `B) email a CSV link` */
export const optionLine = (options: readonly string[], i: number): string => `${LETTERS[i] ?? '?'}) ${options[i] ?? ''}`;

/** Two questions are the same when their words are (nearly) the same: 80% of the words of both in common. */
export function sameQuestion(a: string, b: string): boolean {
  const wa = wordsOf(a);
  const wb = wordsOf(b);
  if (wa.size === 0 || wb.size === 0) return false;
  const common = inter(wa, wb).length;
  return common / new Set([...wa, ...wb]).size >= 0.8;
}

/** The option an earlier answer is: its words, or its label's (the part before `:`), are the option's; else null. */
export function optionOfAnswer(answer: string, options: readonly string[]): number | null {
  const label = (s: string) => [...wordsOf(s.split(/:| — /)[0] ?? s)].sort().join(' ');
  const whole = (s: string) => [...wordsOf(s)].sort().join(' ');
  const hits = options.map((o, i) => (whole(answer) === whole(o) || label(answer) === label(o) || whole(answer.split(' — ')[0] ?? '') === whole(o) ? i : -1)).filter((i) => i >= 0);
  return hits.length === 1 ? hits[0]! : null;
}

interface Paragraph {
  source: string;
  section: string | null;
  text: string;
  words: Set<string>;
}

/** A markdown text as paragraphs, each under its nearest heading (whose words count for its topic). */
export function paragraphsOf(source: LadderSource): Paragraph[] {
  const out: Paragraph[] = [];
  let section: string | null = null;
  let lines: string[] = [];
  const flush = () => {
    const text = lines.join(' ').trim();
    lines = [];
    if (text === '') return;
    out.push({ source: source.name, section, text, words: new Set([...wordsOf(text), ...wordsOf(section ?? '')]) });
  };
  for (const line of source.text.split('\n')) {
    const h = /^#{1,6}\s+(.*)$/.exec(line);
    if (h) {
      flush();
      section = h[1]!.trim();
    } else if (line.trim() === '') flush();
    else lines.push(line.trim());
  }
  flush();
  return out;
}

/** Rung 1: the answer found in what the route and its repository already say, with where; else why not. */
export function resolveFromContext(q: LadderQuestion, ctx: Pick<LadderContext, 'sources' | 'decisions'>): Resolution {
  // An earlier decision on the same question whose answer is one of these options.
  const earlier = ctx.decisions.filter((d) => sameQuestion(d.question, q.question)).map((d) => ({ d, option: optionOfAnswer(d.answer, q.options) }));
  const answered = earlier.filter((e): e is { d: EarlierDecision; option: number } => e.option !== null);
  if (answered.length > 0) {
    const picked = new Set(answered.map((e) => e.option));
    if (picked.size > 1) return { ok: false, why: `earlier decisions on this question disagree (${[...picked].map((i) => LETTERS[i]).join(' and ')})` };
    const { d, option } = answered.at(-1)!;
    const quote = oneLine(d.answer, 120);
    return { ok: true, option, where: `an earlier decision (${d.where})`, quote, reason: `Resolved from an earlier decision (${d.where}): '${oneLine(d.question, 80)}' → ${optionLine(q.options, option)}` };
  }

  // One paragraph on the question's topic that names one option's distinctive words and no other option's.
  const optionWords = q.options.map(wordsOf);
  const questionWords = wordsOf(q.question);
  const allOptionWords = new Set(optionWords.flatMap((s) => [...s]));
  const topic = new Set([...questionWords].filter((w) => !allOptionWords.has(w)));
  const distinct = optionWords.map((mine, i) => new Set([...mine].filter((w) => !questionWords.has(w) && !optionWords.some((other, j) => j !== i && other.has(w)))));
  const hits: Array<{ p: Paragraph; option: number }> = [];
  for (const source of ctx.sources) {
    for (const p of paragraphsOf(source)) {
      if (topic.size > 0 && inter(topic, p.words).length === 0) continue;
      const named = distinct.map((d) => inter(d, p.words).length);
      const full = named.map((n, i) => distinct[i]!.size > 0 && n >= Math.min(2, distinct[i]!.size));
      const which = full.flatMap((f, i) => (f ? [i] : []));
      if (which.length !== 1) continue;
      const option = which[0]!;
      if (named.some((n, j) => j !== option && n > 0)) continue;
      hits.push({ p, option });
    }
  }
  if (hits.length === 0) return { ok: false, why: 'nothing in the spec, the route or earlier decisions names one of the options' };
  const options = new Set(hits.map((h) => h.option));
  if (options.size > 1) {
    const at = hits.map((h) => `${whereOf(h.p)} → ${LETTERS[h.option]}`).join('; ');
    return { ok: false, why: `the context is ambiguous: ${at}` };
  }
  const { p, option } = hits[0]!;
  const quote = oneLine(p.text, 120);
  return { ok: true, option, where: whereOf(p), quote, reason: `Resolved from ${whereOf(p)}: '${quote}' → ${optionLine(q.options, option)}` };
}

const whereOf = (p: Paragraph): string => (p.section ? `${p.source} § ${p.section}` : p.source);

/** The whole ladder for one question: the first rung that holds, with its reason. */
export function climb(q: LadderQuestion, ctx: LadderContext): LadderOutcome {
  const found = resolveFromContext(q, ctx);
  if (found.ok) return { rung: 'context', option: found.option, where: found.where, reason: found.reason };
  if (q.reversible && q.risk !== 'high') return { rung: 'decided', option: 0, reason: "reversible, low risk: took the agent's first option" };
  const what = [q.reversible ? null : 'irreversible', q.risk === 'high' ? 'high risk' : null].filter(Boolean).join(', ');
  if (!ctx.overnight) return { rung: 'park', reason: `${what}, and not an overnight job: parked for a person (sleds needs)` };
  if (!ctx.onCall) return { rung: 'park', reason: `${what}, and the overnight policy names no on_call: parked for a person (sleds needs)` };
  return { rung: 'escalate', to: ctx.onCall, reason: `${what}: escalated to on-call ${ctx.onCall}` };
}

/** Whether an escalated question still holds its job's slot: unanswered, and its time to answer not over. */
export const holdsSlot = (escalateUntil: number | null, nowMs: number): boolean => escalateUntil !== null && nowMs < escalateUntil;
