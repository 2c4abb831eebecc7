import type { ApiAnswer } from '../scheduler/api.js';
import { parseBody } from '../api/parse-body.js';
import { RouteAnswerRequest, RouteParkRequest } from '../../protocol/requests.js';
import { parseChoice, type Question } from '../../core/question/question.js';
import { resolveNode } from './routes-api.js';
import { isQuestionId, newQuestionId } from './questions.js';
import type { NodeRow, RouteQuestionRow, RouteRow, RouteStore } from './route-store.js';

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
}

export type SlackAnswer = { ok: true; label: string } | { ok: false; error: string };

const optionLines = (options: readonly string[]) => options.map((o, i) => `${i === 0 ? 'A' : 'B'}) ${o}`).join(' ');

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

function answeredBefore(q: RouteQuestionRow): string {
  return `question ${q.id} was answered already by ${q.answeredBy ?? 'someone'} at ${q.answeredAt ? new Date(q.answeredAt).toISOString() : 'an earlier time'}: ${q.answer ?? ''}`;
}

export function routeQuestionVerbs(deps: RouteQuestionsDeps) {
  const { store } = deps;

  const answer = (q: RouteQuestionRow, a: { choice: 'A' | 'B' | null; text: string | null; by: string; at: number; source: string }) => {
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

    /** POST /v1/routes/answer: a person's answer (A, B, or words), kept with their name and the time. */
    answer(raw: string, now: number): ApiAnswer {
      const body = parseBody(raw, RouteAnswerRequest, '{node, answer, by?}');
      if (!body.ok) return body.answer;
      const found = questionFor(store, body.value.node);
      if (!found.ok) return { status: found.status, body: { error: found.error } };
      const choice = found.q.options.length === 2 ? parseChoice(body.value.answer) : null;
      // Words are an answer too ("neither: do X"), but a lone letter that is not A or B is a slip of the finger.
      if (found.q.options.length === 2 && choice === null && /^\S{1,2}$/.test(body.value.answer)) {
        return { status: 400, body: { error: `'${body.value.answer}' is not one of the answers to ${found.q.id} — A or B, or say it in words` } };
      }
      const out = answer(found.q, { choice, text: choice ? null : body.value.answer, by: body.value.by ?? 'you', at: now, source: 'cli' });
      if (!out.ok) return { status: 409, body: { error: out.kind === 'answered' ? answeredBefore(out.question) : out.error } };
      const q = out.question;
      return { status: 200, body: { key: q.routeKey, node: q.nodeId, questionId: q.id, question: q.question, answer: q.answer! } };
    },

    /** A Slack button: `by` is whoever tapped it (their roster handle when known). */
    answerFromSlack(a: { questionId: string; choice: 'A' | 'B'; by: string; at: number }): SlackAnswer {
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
        answerWith: q.options.length === 2 ? `sleds route answer ${q.id} A|B` : `sleds route answer ${q.id} "<your answer>"`,
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
}
