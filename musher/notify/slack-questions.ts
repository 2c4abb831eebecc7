import type { SocketModeClient } from '@slack/socket-mode';
import {
  answeredCard,
  answeredLineCard,
  notRecordedCard,
  notedCard,
  parseAnswerAction,
  questionCard,
  QUESTION_ID_RE,
  type AnswerAction,
  type Choice,
  type QuestionCardInput,
} from '../../core/notify/question-card.js';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import type { SecretStore } from '../secrets/store.js';
import { postMessage, QUIET_LOGGER, SLACK_APP_TOKEN_SECRET, slackApiUrl, updateMessage, type SlackDeps } from './slack.js';

/**
 * Parked questions on Slack: a card with two buttons (chat.postMessage), and the taps coming back over Socket Mode
 * (`@slack/socket-mode`'s SocketModeClient: an outbound WebSocket, no public URL). Each envelope is acked first,
 * then checked (parseAnswerAction: hostile until it checks out), answered once through `onAnswer` (whose store is
 * the truth), and the card updated (chat.update) to say who answered and when, its buttons gone.
 *
 * Reconnecting is this module's loop around the client, not the client's own (`autoReconnectEnabled: false`): in
 * 2.0.7 the client's reconnect leaves `start()`'s rejection unhandled when apps.connections.open fails with a
 * network, HTTP or auth error, and then never tries again. Here a failed connect is retried with a backoff, a
 * routine disconnect (`refresh_requested`, `warning`, a dead ping) reconnects at once, and `link_disabled` (Socket
 * Mode turned off for the app) or a refused token stops with one line in the log.
 */

export interface SlackAnswer extends AnswerAction {
  /** When musher took the tap (its clock). */
  atMs: number;
}

export type AnswerOutcome = { ok: true; label: string } | { ok: false; error: string };

export type QuestionPost = QuestionCardInput & { channel: string };

export type QuestionPostResult = { ok: true; channel: string; ts: string } | { ok: false; error: string };

export interface SlackQuestionsDeps {
  secrets: Pick<SecretStore, 'get'>;
  /** config.yml's upstreams.slack; Socket Mode's apps.connections.open goes there too. */
  baseUrl?: string;
  log?: Log;
  clock: Clock;
  /** The zone of the answered card's plain-text time (its blocks use Slack's date token: the reader's zone). */
  timeZone?: string;
  /** Records the answer; "already answered" and other refusals come back as `{ok:false,error}`. */
  onAnswer(a: SlackAnswer): Promise<AnswerOutcome>;
  /** What the card says when there are no buttons (no app-level token). */
  answerElsewhere?: string;
  /** For tests: the client's ping timeouts, and the waits between failed connects. */
  socketModeOptions?: { clientPingTimeout?: number; serverPingTimeout?: number; retryDelaysMs?: readonly number[] };
}

export interface SlackQuestions {
  post(card: QuestionPost): Promise<QuestionPostResult>;
  /** A card answered elsewhere (the CLI): updated to say who answered, when and what, its buttons gone. */
  showAnswered(channel: string, ts: string, questionId: string, words: { choice: Choice | null; by: string; atMs: number; label: string }): Promise<void>;
  /** A card still open gets a line under it (its buttons kept); false when its words are gone (musher restarted). */
  showNote(channel: string, ts: string, questionId: string, line: string): Promise<boolean>;
  /** Whether the Socket Mode link is up (taps arrive). */
  connected(): boolean;
  stop(): Promise<void>;
}

/** The waits between failed connects: quick at first, then once every five minutes. */
const RETRY_DELAYS_MS = [1_000, 5_000, 15_000, 60_000, 300_000];
/** Slack's start errors that no retry mends (the token is wrong or the app is gone). */
const FATAL_START_ERRORS = new Set(['not_authed', 'invalid_auth', 'account_inactive', 'user_removed_from_team', 'team_disabled', 'token_revoked', 'not_allowed_token_type']);
/** How many envelope ids, answers and posted cards are remembered (a day of questions, many times over). */
const REMEMBER = 1_000;
/** A close handshake Slack does not finish does not hold up musher's stop. */
const STOP_WAIT_MS = 1_000;

export const SET_APP_TOKEN_HINT = "sleds slack set-app-token (the app-level xapp- token with connections:write; Socket Mode on in the app's settings)";

/** A Map that forgets its oldest entries past `max`. */
function remember<K, V>(map: Map<K, V>, key: K, value: V): void {
  map.delete(key);
  map.set(key, value);
  while (map.size > REMEMBER) map.delete(map.keys().next().value as K);
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Slack's own error code of a failed apps.connections.open, when there is one. */
function platformError(e: unknown): string | null {
  const err = e as { code?: unknown; data?: { error?: unknown } };
  return err?.code === 'slack_webapi_platform_error' && typeof err.data?.error === 'string' ? err.data.error : null;
}

interface Recorded {
  choice: Choice;
  by: string;
  atMs: number;
  label: string;
}

export function startSlackQuestions(deps: SlackQuestionsDeps): SlackQuestions {
  const log = deps.log;
  const slack: SlackDeps = { secrets: deps.secrets, ...(deps.baseUrl ? { baseUrl: deps.baseUrl } : {}), ...(log ? { log } : {}) };
  const cards = new Map<string, QuestionCardInput>();
  const answered = new Map<string, Recorded>();
  const inFlight = new Map<string, Promise<void>>();
  const envelopes = new Map<string, true>();
  const retryDelays = deps.socketModeOptions?.retryDelaysMs ?? RETRY_DELAYS_MS;

  let client: SocketModeClient | null = null;
  let linkUp = false;
  let stopping = false;
  let linkDisabled = false;
  /** Set once the link is given up (link_disabled, a refused token): cards then go without buttons. */
  let buttonsOff = false;
  let wake: (() => void) | null = null;
  let timer: NodeJS.Timeout | null = null;

  const update = async (channel: string, ts: string, card: { text: string; blocks: readonly object[] }, questionId: string): Promise<void> => {
    const r = await updateMessage(channel, ts, card, slack);
    if (!r.ok) log?.warn(`slack: could not update the card of question ${questionId}: ${r.error}`);
  };

  const cardFor = (questionId: string, rec: Recorded): { text: string; blocks: readonly object[] } => {
    const q = cards.get(questionId);
    const words = { choice: rec.choice, by: rec.by, atMs: rec.atMs, label: rec.label, ...(deps.timeZone ? { timeZone: deps.timeZone } : {}) };
    // A card posted before musher restarted: its words are gone, the answer is still shown.
    return q ? answeredCard(q, words) : answeredLineCard(questionId, words);
  };

  const record = async (a: AnswerAction): Promise<void> => {
    const atMs = deps.clock.now();
    let outcome: AnswerOutcome;
    try {
      outcome = await deps.onAnswer({ ...a, atMs });
    } catch (e) {
      outcome = { ok: false, error: errorText(e) };
    }
    if (!outcome.ok) {
      log?.warn(`slack: ${a.userName} (${a.userId}) chose ${a.choice} on question ${a.questionId}; not recorded: ${outcome.error}`);
      const q = cards.get(a.questionId);
      if (q) await update(a.channel, a.messageTs, notRecordedCard(q, { by: a.userId, choice: a.choice, error: outcome.error }), a.questionId);
      return;
    }
    const rec: Recorded = { choice: a.choice, by: a.userId, atMs, label: outcome.label };
    remember(answered, a.questionId, rec);
    log?.info(`slack: question ${a.questionId} answered ${a.choice} by ${a.userName} (${a.userId})`);
    await update(a.channel, a.messageTs, cardFor(a.questionId, rec), a.questionId);
  };

  const onPress = async (envelopeId: string, body: unknown): Promise<void> => {
    if (envelopes.has(envelopeId)) {
      log?.info(`slack: envelope ${envelopeId} came again; it was answered once`);
      return;
    }
    remember(envelopes, envelopeId, true);
    const a = parseAnswerAction(body);
    if ('error' in a) {
      log?.warn(`slack: ignored a button press: ${a.error}`);
      return;
    }
    // Two taps at once (two people, or one twice): the second waits for the first and shows its answer.
    const pending = inFlight.get(a.questionId);
    if (pending) await pending;
    const first = answered.get(a.questionId);
    if (first) {
      if (first.by !== a.userId || first.choice !== a.choice) log?.info(`slack: question ${a.questionId} was already answered ${first.choice}; ${a.userName}'s ${a.choice} not taken`);
      await update(a.channel, a.messageTs, cardFor(a.questionId, first), a.questionId);
      return;
    }
    const work = record(a).finally(() => inFlight.delete(a.questionId));
    inFlight.set(a.questionId, work);
    await work;
  };

  const wait = (ms: number): Promise<void> =>
    new Promise<void>((resolve) => {
      wake = resolve;
      timer = setTimeout(resolve, ms);
    }).finally(() => {
      wake = null;
      if (timer) clearTimeout(timer);
      timer = null;
    });

  const connect = async (token: string): Promise<void> => {
    // Loaded when there is a token, not when musher starts (the Socket Mode client, ws and the Web API cost ~100 ms).
    const { SocketModeClient } = await import('@slack/socket-mode');
    const opts = deps.socketModeOptions ?? {};
    const c = new SocketModeClient({
      appToken: token,
      logger: QUIET_LOGGER,
      autoReconnectEnabled: false,
      ...(opts.clientPingTimeout ? { clientPingTimeout: opts.clientPingTimeout } : {}),
      ...(opts.serverPingTimeout ? { serverPingTimeout: opts.serverPingTimeout } : {}),
      // The loop below retries; the client's own 100 retries of apps.connections.open would hide a dead link.
      clientOptions: { slackApiUrl: slackApiUrl(deps), retryConfig: { retries: 0 } },
    });
    client = c;
    c.on('interactive', ({ ack, envelope_id: envelopeId, body }: { ack: () => Promise<void>; envelope_id: string; body: unknown }) => {
      // The ack first, within Slack's 3 s, whatever the tap turns out to be; the answer after.
      ack()
        .catch((e: unknown) => log?.warn(`slack: could not ack envelope ${envelopeId}: ${errorText(e)}`))
        .then(() => onPress(String(envelopeId), body))
        .catch((e: unknown) => log?.error(`slack: a button press failed: ${errorText(e)}`));
    });
    // The client reconnects on every disconnect frame; link_disabled means Socket Mode is off: do not.
    c.on('ws_message', (data: Buffer | string, isBinary: boolean) => {
      if (isBinary) return;
      const text = data.toString();
      if (!text.includes('link_disabled')) return;
      try {
        const frame = JSON.parse(text) as { type?: unknown; reason?: unknown };
        if (frame.type === 'disconnect' && frame.reason === 'link_disabled') linkDisabled = true;
      } catch {
        // Not JSON: the client drops the frame too.
      }
    });
    c.on('connected', () => void (linkUp = true));
    c.on('disconnected', () => void (linkUp = false));

    let failures = 0;
    let connections = 0;
    while (!stopping) {
      const closed = new Promise<void>((resolve) => c.once('disconnected', () => resolve()));
      try {
        await c.start();
      } catch (e) {
        const code = platformError(e);
        if (code && FATAL_START_ERRORS.has(code)) {
          buttonsOff = true;
          log?.error(`slack: Socket Mode refused the app-level token (${code}) — question buttons are off; set it again with ${SET_APP_TOKEN_HINT}, then restart musher`);
          return;
        }
        const delay = retryDelays[Math.min(failures, retryDelays.length - 1)] ?? 60_000;
        if (failures === 0 || delay === retryDelays.at(-1)) log?.warn(`slack: could not open Socket Mode (${code ?? errorText(e)}); trying again in ${Math.ceil(delay / 1000)}s`);
        failures += 1;
        await wait(delay);
        continue;
      }
      if (stopping) break;
      failures = 0;
      connections += 1;
      log?.info(connections === 1 ? 'slack: Socket Mode connected — question cards can be answered by tapping' : 'slack: Socket Mode reconnected');
      await closed;
      if (stopping) break;
      if (linkDisabled) {
        buttonsOff = true;
        log?.error(`slack: Slack turned Socket Mode off for this app (link_disabled) — question buttons are off; answer with ${deps.answerElsewhere ?? 'sleds needs'}, turn Socket Mode on in the app's settings, then restart musher`);
        return;
      }
    }
  };

  const appToken: Promise<string | null> = deps.secrets.get(SLACK_APP_TOKEN_SECRET).then(
    (t) => t?.trim() || null,
    (e: unknown) => {
      log?.warn(`slack: could not read the app-level token (${errorText(e)}) — question cards go without buttons`);
      return null;
    },
  );
  const started = appToken
    .then((token) => {
      if (token) return connect(token);
      log?.info(`slack: no Slack app-level token — question cards go without buttons and are answered with ${deps.answerElsewhere ?? 'sleds needs'}; to answer by tapping, run ${SET_APP_TOKEN_HINT}`);
      return undefined;
    })
    .catch((e: unknown) => {
      buttonsOff = true;
      log?.error(`slack: Socket Mode stopped: ${errorText(e)}`);
    });

  return {
    async post(card) {
      if (!QUESTION_ID_RE.test(card.questionId)) return { ok: false, error: `Slack: question id ${JSON.stringify(card.questionId.slice(0, 40))} cannot go on a card (letters, digits, / _ - only)` };
      // Buttons whenever an app-level token is set and the link not given up: a tap while it reconnects is Slack's to redeliver.
      const withButtons = (await appToken) !== null && !buttonsOff;
      const { channel, ...q } = card;
      const message = questionCard(q, withButtons ? {} : { buttons: false, answerElsewhere: deps.answerElsewhere ?? 'sleds needs' });
      const r = await postMessage(channel, message, slack);
      if (!r.ok) return { ok: false, error: r.error };
      remember(cards, q.questionId, q);
      return { ok: true, channel: r.channel, ts: r.ts };
    },
    async showAnswered(channel, ts, questionId, words) {
      if (!QUESTION_ID_RE.test(questionId)) return;
      const q = cards.get(questionId);
      const full = { ...words, ...(deps.timeZone ? { timeZone: deps.timeZone } : {}) };
      await update(channel, ts, q ? answeredCard(q, full) : answeredLineCard(questionId, full), questionId);
    },
    async showNote(channel, ts, questionId, line) {
      const q = cards.get(questionId);
      if (!q || answered.has(questionId)) return false;
      await update(channel, ts, notedCard(q, line), questionId);
      return true;
    },
    connected: () => linkUp,
    async stop() {
      stopping = true;
      wake?.();
      const c = client;
      if (c) {
        let t: NodeJS.Timeout | undefined;
        await Promise.race([c.disconnect(), new Promise<void>((resolve) => (t = setTimeout(resolve, STOP_WAIT_MS)))]);
        clearTimeout(t);
      }
      await started;
    },
  };
}
