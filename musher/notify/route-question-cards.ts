import type { RosterFile } from '../../core/roster.js';
import type { QuestionOption } from '../../core/notify/question-card.js';
import type { NodeRow, RouteQuestionRow, RouteRow } from '../engine/route-store.js';
import type { QuestionCardsPort } from '../engine/route-questions-api.js';
import type { Log } from '../log.js';
import type { SlackAnswer, AnswerOutcome, SlackQuestions } from './slack-questions.js';
import type { Choice } from '../../core/notify/question-card.js';

/**
 * A route node's parked question as a Slack two-button card (issue 14 § 10): posted to the owner of the node's area
 * (their `slack:` id in .sleds/roster.yml), else to this seat's own; answered by a tap through Socket Mode
 * (slack-questions.ts), or from the CLI, after which the card says who answered and when. The Slack user who tapped
 * is named by their roster handle when the roster knows their id.
 */

export interface RouteQuestionCardsDeps {
  slack: SlackQuestions;
  /** The roster of a repository (null: none). */
  rosterAt(repoRoot: string): RosterFile | null;
  /** This seat's roster handle (read on each use). */
  seat(): string;
  /** Keeps where the card was posted, so a CLI answer can update it. */
  posted(questionId: string, at: { channel: string; ts: string }): void;
  log: Log;
}

/** "Attach the file: the band stays $2–5" → the button's words and their effect on the band. */
export function optionOf(sentence: string): QuestionOption {
  const at = sentence.indexOf(':');
  if (at <= 0 || at > 75) return { label: sentence.slice(0, 75), effect: sentence.length > 75 ? sentence : '' };
  return { label: sentence.slice(0, at).trim(), effect: sentence.slice(at + 1).trim() };
}

/** Where a node's question goes: its area's owner in the roster, else this seat; a Slack id (U…/C…/D…) or null. */
export function cardTarget(roster: RosterFile | null, area: string | null, seat: string): string | null {
  if (!roster) return null;
  const owner = area ? roster.teammates.find((t) => t.areas.includes(area) && t.slack) : undefined;
  const mine = roster.teammates.find((t) => t.handle === seat && t.slack);
  return owner?.slack ?? mine?.slack ?? null;
}

/**
 * Where an escalation goes: the policy's on-call as a Slack user id (a DM) or channel id as given, `#eng` as the
 * channel's name, or a roster handle (`dana`, `@dana`) as that teammate's slack: id; null when the roster has none.
 */
export function onCallTarget(roster: RosterFile | null, onCall: string): string | null {
  if (/^[UWCG][A-Z0-9]{2,20}$/.test(onCall)) return onCall;
  if (onCall.startsWith('#')) return onCall;
  const handle = onCall.replace(/^@/, '');
  return roster?.teammates.find((t) => t.handle === handle && t.slack)?.slack ?? null;
}

export function routeQuestionCards(d: RouteQuestionCardsDeps): QuestionCardsPort {
  let toldNoTarget = false;
  const post = (q: RouteQuestionRow, route: RouteRow, node: NodeRow, channel: string, title: string) => {
    const [a, b, ...more] = q.options.map(optionOf);
    void d.slack
      .post({ channel, questionId: q.id, title, question: q.question, options: [a!, b!, ...more], link: node.prUrl })
      .then((r) => (r.ok ? d.posted(q.id, { channel: r.channel, ts: r.ts }) : d.log.warn(`slack: question ${q.id} not posted: ${r.error}`)))
      .catch((e: unknown) => d.log.warn(`slack: question ${q.id} not posted: ${e instanceof Error ? e.message : String(e)}`));
  };
  return {
    announce(q: RouteQuestionRow, route: RouteRow, node: NodeRow): void {
      // Only a question with options is a card with buttons (two to four); one asked in words is answered in words.
      if (q.options.length < 2 || q.options.length > 4) return;
      const channel = cardTarget(d.rosterAt(route.repoRoot), node.area, d.seat());
      if (!channel) {
        if (!toldNoTarget) d.log.info(`slack: question ${q.id} of ${route.key}/${node.nodeId} not posted — nobody in .sleds/roster.yml owns its area or is ${d.seat()} with a slack: id; sleds needs lists it`);
        toldNoTarget = true;
        return;
      }
      post(q, route, node, channel, `${route.key} / ${node.nodeId} asks`);
    },
    escalate(q: RouteQuestionRow, route: RouteRow, node: NodeRow): void {
      const onCall = q.ladder.escalatedTo;
      if (!onCall || q.options.length < 2 || q.options.length > 4) return;
      const channel = onCallTarget(d.rosterAt(route.repoRoot), onCall);
      if (!channel) {
        d.log.warn(`slack: question ${q.id} of ${route.key}/${node.nodeId} not escalated — on-call ${onCall} has no slack: id in .sleds/roster.yml; sleds needs lists it`);
        return;
      }
      post(q, route, node, channel, `${route.key} / ${node.nodeId} asks on-call (overnight)`);
    },
    unreachable(repoRoot: string, onCall: string): string | null {
      return onCallTarget(d.rosterAt(repoRoot), onCall) ? null : `no slack: id for ${onCall} in .sleds/roster.yml`;
    },
    parked(q: RouteQuestionRow, waitedMs: number): void {
      if (!q.slack) return;
      const line = `no reply in ${Math.round(waitedMs / 60_000)} min: parked; a late answer still resumes it`;
      void d.slack
        .showNote(q.slack.channel, q.slack.ts, q.id, line)
        .then((shown) => (shown ? undefined : d.log.info(`slack: the card of question ${q.id} was not marked parked (posted before musher restarted); a tap still answers it`)))
        .catch((e: unknown) => d.log.warn(`slack: the card of question ${q.id} was not updated: ${e instanceof Error ? e.message : String(e)}`));
    },
    answered(q: RouteQuestionRow): void {
      // A tap updates its own card (slack-questions.ts); an answer from elsewhere updates it here.
      if (q.source === 'slack' || !q.slack) return;
      void d.slack
        .showAnswered(q.slack.channel, q.slack.ts, q.id, { choice: q.choice, by: q.answeredBy ?? 'someone', atMs: q.answeredAt ?? 0, label: q.answer ?? '' })
        .catch((e: unknown) => d.log.warn(`slack: the card of question ${q.id} was not updated: ${e instanceof Error ? e.message : String(e)}`));
    },
  };
}

/** A tap, recorded as the route's answer: the tapper named by their roster handle when the roster knows their id. */
export function slackAnswerer(d: { rosterAt(repoRoot: string): RosterFile | null; repoOf(questionId: string): string | null; answer(a: { questionId: string; choice: Choice; by: string; at: number }): AnswerOutcome }) {
  return async (a: SlackAnswer): Promise<AnswerOutcome> => {
    const repo = d.repoOf(a.questionId);
    const mate = repo ? d.rosterAt(repo)?.teammates.find((t) => t.slack === a.userId) : undefined;
    return d.answer({ questionId: a.questionId, choice: a.choice, by: mate?.handle ?? a.userName, at: a.atMs });
  };
}
