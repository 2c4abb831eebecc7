import type { ApiAnswer } from '../scheduler/api.js';
import { parseBody } from '../api/parse-body.js';
import { RouteAnswerRequest, RouteAskRequest, RouteParkRequest } from '../../protocol/requests.js';
import { climb, LETTERS, optionLine, type LadderSource } from '../../core/overnight/ladder.js';
import { oneLine } from '../../core/format.js';
import { parseChoice, type Question } from '../../core/question/question.js';
import { resolveNode } from './routes-api.js';
import { isQuestionId, newQuestionId } from './questions.js';
import type { AnswerChoice, NodeRow, RouteQuestionRow, RouteRow, RouteStore } from './route-store.js';

/**
 * A route node's parked questions (issue 14 § 10): its agent parks one with two answers through the MCP `park` verb
 * (in its own session: SLEDS_ROUTE / SLEDS_NODE say which node), the engine holds the node at the end of its turn, and
 * a person answers from `sleds route answer`, `sleds needs` or a Slack button. The first answer wins and becomes the
 * route's decision (who, when, from where); the engine resumes the node with it.
 */

export interface RouteQuestionsDeps {
  store: RouteStore;
  /** Shows a new question where people are (a Slack two-button message); never throws. */
  announce?(q: RouteQuestionRow, route: RouteRow, node: NodeRow): void;
  /** An answered question's message is updated (who answered, when); never throws. */
  answered?(q: RouteQuestionRow): void;
  /** The ask verb's ladder: the repository's overnight on-call and how long an escalation holds; null: no overnight policy. */
  overnightOf?(repoRoot: string): { onCall: string | null; escalateAfterMs: number } | null;
  /** What the first rung reads: the node's worktree's spec files, its brief, the route's notes (ladder-context.ts). */
  contextOf?(route: RouteRow, node: NodeRow): Promise<LadderSource[]>;
  /** Posts an escalated question to its on-call as a one-tap card; never throws. */
  escalate?(q: RouteQuestionRow, route: RouteRow, node: NodeRow): void;
  /** Why a repository's on-call cannot be reached (Slack not set up, no slack: id in the roster); null when it can. */
  unreachable?(repoRoot: string, onCall: string): string | null;
  /** An escalation nobody answered in time: its card says it parked (a late tap still answers); never throws. */
  parked?(q: RouteQuestionRow, waitedMs: number): void;
}

export type SlackAnswer = { ok: true; label: string } | { ok: false; error: string };

const optionLines = (options: readonly string[]) => options.map((o, i) => optionLine(options, i)).join(' ');
const short = (s: string) => oneLine(s, 120);
const minutes = (ms: number) => `${Math.round(ms / 60_000)} min`;

function parkedText(q: RouteQuestionRow): string {
  return [
    `Parked: ${q.routeKey}/${q.nodeId} waits for an answer to question ${q.id}: ${q.question} ${optionLines(q.options)}`,
    'Stop now and end your turn: sleds resumes this session with the answer, and the nodes that do not depend on this one go on meanwhile.',
  ].join('\n');
}

/** The node a person's answer is for: a question id, `<route>/<node>` or a node id that one route has. */
function questionFor(store: RouteStore, spec: string): { ok: true; q: RouteQuestionRow } | { ok: false; status: number; error: string } {
  if (isQuestionId(spec)) {
    const q = store.question(spec);
    if (q) return { ok: true, q };
  }
  const which = resolveNode(store, spec);
  if (!which.ok) return which;
  const node = store.node(which.key, which.id);
  if (!node) return { ok: false, status: 404, error: `no node '${which.id}' in route '${which.key}' — sleds route show ${which.key}` };
  const q = store.openQuestion(which.key, which.id);
  if (!q) return { ok: false, status: 409, error: `${which.key}/${which.id} asks nothing (it is ${node.run.state}) — sleds needs lists what waits for you` };
  return { ok: true, q };
}

/** The letter a person typed, when the question has that many options (A–D); else null (an answer in words). */
function letterOf(text: string, count: number): AnswerChoice | null {
  if (count === 2) return parseChoice(text);
  const m = /^\s*([a-d])\s*[).]?\s*$/i.exec(text);
  const letter = m ? (m[1]!.toUpperCase() as AnswerChoice) : null;
  return letter && LETTERS.indexOf(letter) < count ? letter : null;
}

/** The ask verb's reply for a question the agent must wait on: end the turn, sleds resumes the session with the answer. */
function waiting(q: RouteQuestionRow, rung: 'escalated' | 'parked', reason: string) {
  const where = rung === 'escalated' ? `escalated to ${q.ladder.escalatedTo}` : `parked for a person (${reason})`;
  return {
    key: q.routeKey,
    node: q.nodeId,
    rung,
    next: 'wait' as const,
    answer: null,
    questionId: q.id,
    reason,
    text: `Question ${q.id}: ${where}; end your turn now: sleds resumes this session with the answer. ${optionLines(q.options)}`,
  };
}

function answeredBefore(q: RouteQuestionRow): string {
  return `question ${q.id} was answered already by ${q.answeredBy ?? 'someone'} at ${q.answeredAt ? new Date(q.answeredAt).toISOString() : 'an earlier time'}: ${q.answer ?? ''}`;
}

export function routeQuestionVerbs(deps: RouteQuestionsDeps) {
  const { store } = deps;

  const answer = (q: RouteQuestionRow, a: { choice: AnswerChoice | null; text: string | null; by: string; at: number; source: string }) => {
    const out = store.answerQuestion(q.id, a);
    if (out.ok) deps.answered?.(out.question);
    return out;
  };

  return {
    /** POST /v1/routes/park from the node's own session: the question parked (once: a retried call gets the same one). */
    park(raw: string, now: number): ApiAnswer {
      const body = parseBody(raw, RouteParkRequest, '{route, node, question, options: [A, B]}');
      if (!body.ok) return body.answer;
      const { route: key, node: id, question, options } = body.value;
      const route = store.route(key);
      const node = route ? store.node(key, id) : null;
      if (!route || !node) return { status: 404, body: { error: `no node ${key}/${id} — park is for the agent of a route node, in the session sleds engine started` } };
      if (node.run.state !== 'RUNNING') return { status: 409, body: { error: `${key}/${id} is ${node.run.state}, not at work: only a running node parks a question` } };
      const open = store.openQuestion(key, id);
      if (open) return { status: 200, body: { questionId: open.id, key, node: id, question: open.question, options: open.options, text: parkedText(open) } };
      const q = store.addQuestion({ id: newQuestionId(), routeKey: key, nodeId: id, question, options: [...options], askedAt: now });
      deps.announce?.(q, route, node);
      return { status: 201, body: { questionId: q.id, key, node: id, question: q.question, options: q.options, text: parkedText(q) } };
    },

    /**
     * POST /v1/routes/ask from the node's own session: the ladder (core/overnight/ladder.ts), each rung kept in the
     * node's log. Resolved from context or decided: the answer at once, kept as a decision with its rung and reason.
     * Escalated (an overnight node, irreversible or high risk, an on-call in its policy): a one-tap card to the on-call,
     * the node held at the end of its turn, its overnight slot kept until the escalation runs out. Else parked as the
     * park verb parks. A retried call while a question is open gets that question again.
     */
    async ask(raw: string, now: number): Promise<ApiAnswer> {
      const body = parseBody(raw, RouteAskRequest, '{route, node, question, options: [2–4, recommended first], reversible, risk?}');
      if (!body.ok) return body.answer;
      const { route: key, node: id, question, options, reversible } = body.value;
      const risk = body.value.risk ?? 'low';
      const route = store.route(key);
      const node = route ? store.node(key, id) : null;
      if (!route || !node) return { status: 404, body: { error: `no node ${key}/${id} — ask is for the agent of a route node, in the session sleds engine started` } };
      if (node.run.state !== 'RUNNING') return { status: 409, body: { error: `${key}/${id} is ${node.run.state}, not at work: only a running node asks a question` } };
      const open = store.openQuestion(key, id);
      if (open) return { status: 200, body: waiting(open, open.ladder.rung === 'escalated' ? 'escalated' : 'parked', open.ladder.escalatedTo ? `escalated to ${open.ladder.escalatedTo}` : 'parked for a person') };

      const night = node.overnight ? (deps.overnightOf?.(route.repoRoot) ?? null) : null;
      const sources = (await deps.contextOf?.(route, node).catch(() => [])) ?? [];
      const decisions = store.repoDecisions(route.repoRoot).map((d) => ({ question: d.question, answer: d.answer, where: d.routeKey === key ? `route ${key}` : `route ${d.routeKey}` }));
      const q = { question, options, reversible, risk };
      let outcome = climb(q, { sources, decisions, onCall: night?.onCall ?? null, overnight: node.overnight });
      // Nobody would see the card: holding the night's slot for the on-call would stall the queue for nothing.
      const away = outcome.rung === 'escalate' ? (deps.unreachable?.(route.repoRoot, outcome.to) ?? null) : null;
      if (outcome.rung === 'escalate' && away) outcome = { rung: 'park', reason: `${outcome.reason.split(':')[0]}, and on-call ${outcome.to} cannot be reached (${away}): parked for a person (sleds needs)` };
      const note = (line: string) => store.ladderNote(key, id, `question: ${short(question)} → ${line}`, now);

      if (outcome.rung === 'context' || outcome.rung === 'decided') {
        const answer = options[outcome.option]!;
        store.addDecision({ routeKey: key, nodeId: id, question, options, answer, answeredBy: 'sleds', answeredAt: now, source: 'ladder', rung: outcome.rung, reason: outcome.reason });
        note(outcome.rung === 'context' ? `resolved from ${outcome.where}: ${optionLine(options, outcome.option)}` : `decided (${outcome.reason.split(':')[0]}): ${optionLine(options, outcome.option)}`);
        const text =
          outcome.rung === 'context'
            ? `${outcome.reason}. Go on with it; it is logged in the PR with where it was found.`
            : `Decided (${outcome.reason.split(':')[0]}): ${optionLine(options, outcome.option)} — your first option; it is logged in the PR. Go on with it.`;
        return { status: 200, body: { key, node: id, rung: outcome.rung, next: 'answer', answer, questionId: null, reason: outcome.reason, text } };
      }
      if (outcome.rung === 'escalate') {
        const until = now + (night?.escalateAfterMs ?? 30 * 60_000);
        const asked = store.addQuestion({ id: newQuestionId(), routeKey: key, nodeId: id, question, options: [...options], askedAt: now, ladder: { reversible, risk, rung: 'escalated', escalatedTo: outcome.to, escalateUntil: until } });
        note(`escalated to ${outcome.to} (${outcome.reason.split(':')[0]}); parks if no reply in ${minutes(until - now)}`);
        deps.escalate?.(asked, route, node);
        return { status: 201, body: waiting(asked, 'escalated', outcome.reason) };
      }
      const asked = store.addQuestion({ id: newQuestionId(), routeKey: key, nodeId: id, question, options: [...options], askedAt: now, ladder: { reversible, risk } });
      note(`parked: ${outcome.reason}`);
      deps.announce?.(asked, route, node);
      return { status: 201, body: waiting(asked, 'parked', outcome.reason) };
    },

    /**
     * Escalations whose time ran out at `now`: each is parked once (its card says so, a late tap still answers it),
     * and its job's overnight slot is free for the next job. Musher runs it every minute; returns what it parked.
     */
    sweep(now: number): RouteQuestionRow[] {
      const parked: RouteQuestionRow[] = [];
      for (const q of store.dueEscalations(now)) {
        if (!store.parkEscalation(q.id, now)) continue;
        // "No reply in 30 min": the time it was given, whenever the sweep came round after it ran out.
        const waited = (q.ladder.escalateUntil ?? now) - q.askedAt;
        store.ladderNote(q.routeKey, q.nodeId, `question: ${short(q.question)} → no reply from ${q.ladder.escalatedTo ?? 'on-call'} in ${minutes(waited)}: parked; a late answer still resumes it`, now);
        const row = store.question(q.id)!;
        deps.parked?.(row, waited);
        parked.push(row);
      }
      return parked;
    },

    /** POST /v1/routes/answer: a person's answer (A, B, or words), kept with their name and the time. */
    answer(raw: string, now: number): ApiAnswer {
      const body = parseBody(raw, RouteAnswerRequest, '{node, answer, by?}');
      if (!body.ok) return body.answer;
      const found = questionFor(store, body.value.node);
      if (!found.ok) return { status: found.status, body: { error: found.error } };
      const choice = letterOf(body.value.answer, found.q.options.length);
      // Words are an answer too ("neither: do X"), but a lone letter that is not an option's is a slip of the finger.
      if (found.q.options.length >= 2 && choice === null && /^\S{1,2}$/.test(body.value.answer)) {
        const letters = LETTERS.slice(0, found.q.options.length);
        return { status: 400, body: { error: `'${body.value.answer}' is not one of the answers to ${found.q.id} — ${letters.slice(0, -1).join(', ')} or ${letters.at(-1)}, or say it in words` } };
      }
      const out = answer(found.q, { choice, text: choice ? null : body.value.answer, by: body.value.by ?? 'you', at: now, source: 'cli' });
      if (!out.ok) return { status: 409, body: { error: out.kind === 'answered' ? answeredBefore(out.question) : out.error } };
      const q = out.question;
      return { status: 200, body: { key: q.routeKey, node: q.nodeId, questionId: q.id, question: q.question, answer: q.answer! } };
    },

    /** A Slack button: `by` is whoever tapped it (their roster handle when known). */
    answerFromSlack(a: { questionId: string; choice: AnswerChoice; by: string; at: number }): SlackAnswer {
      const q = store.question(a.questionId);
      if (!q) return { ok: false, error: `no question ${a.questionId}` };
      const out = answer(q, { choice: a.choice, text: null, by: a.by, at: a.at, source: 'slack' });
      if (out.ok) return { ok: true, label: out.question.answer! };
      return { ok: false, error: out.kind === 'answered' ? answeredBefore(out.question) : out.error };
    },

    /** GET /v1/needs: what waits for a person, route nodes' and tasks' questions, oldest first. */
    needs(taskQuestions: readonly Question[], taskTitle: (taskId: string) => string): ApiAnswer {
      const nodes = store.openQuestions().map((q) => ({
        kind: 'node' as const,
        questionId: q.id,
        of: `${q.routeKey}/${q.nodeId}`,
        title: store.node(q.routeKey, q.nodeId)?.title ?? q.nodeId,
        question: q.question,
        options: q.options,
        askedAt: q.askedAt,
        inSlack: q.slack !== null,
        answerWith: q.options.length >= 2 ? `sleds route answer ${q.id} ${LETTERS.slice(0, q.options.length).join('|')}` : `sleds route answer ${q.id} "<your answer>"`,
      }));
      const tasks = taskQuestions
        .filter((q) => q.state === 'open')
        .map((q) => ({
          kind: 'task' as const,
          questionId: q.id,
          of: q.taskId,
          title: taskTitle(q.taskId),
          question: q.question,
          options: [...q.options],
          askedAt: q.askedAt,
          inSlack: false,
          answerWith: `/sled answer ${q.id} A|B`,
        }));
      return { status: 200, body: { needs: [...nodes, ...tasks].sort((a, b) => a.askedAt - b.askedAt) } };
    },
  };
}

export type RouteQuestionVerbs = ReturnType<typeof routeQuestionVerbs>;

/** Where parked questions are shown to people: musher/notify's Slack cards bind it. Neither call throws. */
export interface QuestionCardsPort {
  announce(q: RouteQuestionRow, route: RouteRow, node: NodeRow): void;
  answered(q: RouteQuestionRow): void;
  /** An escalated question to its on-call (the ask verb's ladder). */
  escalate?(q: RouteQuestionRow, route: RouteRow, node: NodeRow): void;
  /** An escalation that ran out: its card says it parked. */
  parked?(q: RouteQuestionRow, waitedMs: number): void;
  /** Why an on-call cannot get a card (no slack: id for a handle in the roster); null when they can. */
  unreachable?(repoRoot: string, onCall: string): string | null;
}
