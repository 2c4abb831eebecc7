import { describe, expect, it } from 'vitest';
import { answeredCard, notedCard, notRecordedCard, parseAnswerAction, questionCard, type QuestionCardInput } from '../../core/notify/question-card.js';

const Q: QuestionCardInput = {
  questionId: 'eng-503/mailer_q1',
  title: 'eng-503 / mailer asks',
  question: 'Retry the bounce queue <now> & drop the old ones?',
  options: [
    { label: 'Retry now', effect: 'band stays $2–$3' },
    { label: 'Wait for the fix', effect: 'band rises to $4–$6' },
  ],
  link: 'https://github.com/acme/mailer/pull/7',
};

/** A block_actions payload in Slack's shape (trimmed from a real one), pressed on Q's card. */
function press(over: { actionId?: string; value?: string; blockId?: string; user?: unknown; container?: unknown; actions?: unknown; type?: unknown } = {}): unknown {
  return {
    type: over.type ?? 'block_actions',
    user: over.user ?? { id: 'U0DANA001', username: 'dana', name: 'dana', team_id: 'T0TEAM' },
    api_app_id: 'A0APP',
    token: 'legacy',
    container: over.container ?? { type: 'message', message_ts: '1760000000.000001', channel_id: 'D0DANA001', is_ephemeral: false },
    trigger_id: '1.2.abc',
    team: { id: 'T0TEAM', domain: 'acme' },
    enterprise: null,
    is_enterprise_install: false,
    channel: { id: 'D0DANA001', name: 'directmessage' },
    message: { type: 'message', bot_id: 'B0', ts: '1760000000.000001', text: '…', blocks: [] },
    state: { values: {} },
    response_url: 'https://hooks.slack.com/actions/T0TEAM/1/2',
    actions: over.actions ?? [
      {
        type: 'button',
        action_id: over.actionId ?? 'sleds_answer_B',
        block_id: over.blockId ?? 'sleds_answer:eng-503/mailer_q1',
        text: { type: 'plain_text', text: 'B: Wait for the fix', emoji: true },
        value: over.value ?? 'eng-503/mailer_q1:B',
        action_ts: '1760000005.123456',
      },
    ],
  };
}

describe('questionCard: the question, each option with its effect on the band, two buttons', () => {
  it('escapes the words, names the question in every block id, and values each button <question id>:A|B', () => {
    const card = questionCard(Q);
    expect(card.text).toBe('eng-503 / mailer asks: Retry the bounce queue &lt;now&gt; &amp; drop the old ones? — A: Retry now (band stays $2–$3) or B: Wait for the fix (band rises to $4–$6)');
    expect(card.blocks).toEqual([
      { type: 'section', block_id: 'sleds_q:eng-503/mailer_q1', text: { type: 'mrkdwn', text: '*eng-503 / mailer asks*\nRetry the bounce queue &lt;now&gt; &amp; drop the old ones?' } },
      {
        type: 'context',
        block_id: 'sleds_q:eng-503/mailer_q1:effects',
        elements: [
          { type: 'mrkdwn', text: '*A · Retry now*: band stays $2–$3' },
          { type: 'mrkdwn', text: '*B · Wait for the fix*: band rises to $4–$6' },
          { type: 'mrkdwn', text: '<https://github.com/acme/mailer/pull/7|Details>' },
        ],
      },
      {
        type: 'actions',
        block_id: 'sleds_answer:eng-503/mailer_q1',
        elements: [
          { type: 'button', action_id: 'sleds_answer_A', value: 'eng-503/mailer_q1:A', text: { type: 'plain_text', text: 'A: Retry now' } },
          { type: 'button', action_id: 'sleds_answer_B', value: 'eng-503/mailer_q1:B', text: { type: 'plain_text', text: 'B: Wait for the fix' } },
        ],
      },
    ]);
  });

  it.each([
    ['no link', null],
    ['a javascript: link', 'javascript:alert(1)'],
    ['a link that would break out of <url|words>', 'https://x.test/a|b>'],
    ['not a URL', 'see the PR'],
  ])('leaves the link out when there is %s', (_what, link) => {
    const effects = questionCard({ ...Q, link }).blocks[1]!;
    expect(effects.type === 'context' && effects.elements).toHaveLength(2);
  });

  it('keeps a button label within Slack’s 75 characters, the whole label in the effects line', () => {
    const long = 'x'.repeat(120);
    const card = questionCard({ ...Q, options: [{ label: long, effect: 'e' }, Q.options[1]] });
    const actions = card.blocks[2]!;
    expect(actions.type === 'actions' && actions.elements[0]!.text.text.length).toBe(75);
    expect(JSON.stringify(card.blocks[1])).toContain(long);
  });

  it.each([['has spaces'], ['a:b'], ['-starts-with-dash'], ['x'.repeat(122)], ['']])('refuses to make a card for the question id %j', (id) => {
    expect(() => questionCard({ ...Q, questionId: id })).toThrow(/question id/);
  });
});

describe('an escalated question with up to four options (the ask verb)', () => {
  const three: QuestionCardInput = {
    questionId: 'q7k2m9qa45pz',
    title: 'eng-503 / mailer asks on-call (overnight)',
    question: 'Which table holds the exports?',
    options: [
      { label: 'A new exports table', effect: 'a migration' },
      { label: 'The jobs table', effect: 'no migration' },
      { label: 'A JSON column', effect: 'no index' },
    ],
  };

  it('has a button per option, A to C, each valued with its letter', () => {
    const card = questionCard(three);
    const actions = card.blocks.find((b) => b.type === 'actions');
    expect(actions && actions.type === 'actions' ? actions.elements.map((e) => [e.action_id, e.value, e.text.text]) : []).toEqual([
      ['sleds_answer_A', 'q7k2m9qa45pz:A', 'A: A new exports table'],
      ['sleds_answer_B', 'q7k2m9qa45pz:B', 'B: The jobs table'],
      ['sleds_answer_C', 'q7k2m9qa45pz:C', 'C: A JSON column'],
    ]);
    expect(card.text).toContain('A: A new exports table (a migration), B: The jobs table (no migration) or C: A JSON column (no index)');
  });

  it('a parked escalation keeps its buttons (a late tap still answers) and says it parked', () => {
    const card = notedCard(three, 'no reply in 30 min: parked; a late answer still resumes it');
    expect(card.blocks.some((b) => b.type === 'actions')).toBe(true);
    expect(card.text).toMatch(/no reply in 30 min: parked; a late answer still resumes it$/);
    expect(JSON.stringify(card.blocks.at(-1))).toContain('no reply in 30 min');
  });
});

describe('answeredCard: who answered and when, buttons gone', () => {
  const at = Date.UTC(2026, 11, 2, 14, 2);
  it.each([
    ['a Slack user, in UTC', { choice: 'A', by: 'U0DANA001', atMs: at, timeZone: 'UTC' }, 'Answered by <@U0DANA001> at <!date^' + at / 1000 + '^{time}|2:02pm>: *A · Retry now*', 'answered by <@U0DANA001> at 2:02pm: Retry now'],
    ['a Slack user, in New York', { choice: 'B', by: 'U0DANA001', atMs: at, timeZone: 'America/New_York' }, 'Answered by <@U0DANA001> at <!date^' + at / 1000 + '^{time}|9:02am>: *B · Wait for the fix*', 'answered by <@U0DANA001> at 9:02am: Wait for the fix'],
    ['the CLI (not a user id: plain, escaped words)', { choice: 'B', by: 'cli <dana>', atMs: at, timeZone: 'UTC' }, 'Answered by cli &lt;dana&gt; at <!date^' + at / 1000 + '^{time}|2:02pm>: *B · Wait for the fix*', 'answered by cli &lt;dana&gt; at 2:02pm: Wait for the fix'],
  ] as const)('%s', (_what, words, line, text) => {
    const card = answeredCard(Q, words);
    expect(card.blocks.map((b) => b.type)).toEqual(['section', 'context']);
    expect(card.blocks[0]!.block_id).not.toBe(questionCard(Q).blocks[0]!.block_id);
    expect(card.blocks[1]).toEqual({ type: 'context', block_id: 'sleds_q:eng-503/mailer_q1:answer', elements: [{ type: 'mrkdwn', text: line }] });
    expect(card.text).toBe(`eng-503 / mailer asks: ${text}`);
  });

  it('notRecordedCard keeps the buttons and says why the tap was not recorded', () => {
    const card = notRecordedCard(Q, { by: 'U0DANA001', choice: 'A', error: 'the store is <busy>' });
    expect(card.blocks.map((b) => b.type)).toEqual(['section', 'context', 'actions', 'context']);
    expect(JSON.stringify(card.blocks[3])).toContain('<@U0DANA001> chose A, but sleds could not record it: the store is &lt;busy&gt;');
  });
});

describe('parseAnswerAction: a block_actions payload is hostile until it checks out', () => {
  it('reads the question, the choice, who pressed and where the card is', () => {
    expect(parseAnswerAction(press())).toEqual({
      questionId: 'eng-503/mailer_q1',
      choice: 'B',
      userId: 'U0DANA001',
      userName: 'dana',
      channel: 'D0DANA001',
      messageTs: '1760000000.000001',
      actionTs: '1760000005.123456',
    });
  });

  it.each([
    ['not an object', 'block_actions', /not a button press/],
    ['null', null, /not a button press/],
    ['another payload type', press({ type: 'view_submission' }), /not a button press .*type/],
    ['no user id', press({ user: { name: 'dana' } }), /user\.id/],
    ['a user id that is not one', press({ user: { id: 'U0; rm -rf' } }), /user\.id/],
    ['a card in a modal, not a message', press({ container: { type: 'view', view_id: 'V1' } }), /container\.type/],
    ['a channel id that is not one', press({ container: { type: 'message', message_ts: '1.2', channel_id: '../etc' } }), /container\.channel_id/],
    ['two actions at once', press({ actions: [{}, {}] }), /actions/],
    ['another app’s button', press({ actionId: 'deploy.approve' }), /action "deploy.approve" is not a sleds answer button/],
    ['a choice E (a card has at most four: A–D)', press({ actionId: 'sleds_answer_E', value: 'eng-503/mailer_q1:E' }), /action "sleds_answer_E" is not a sleds answer button/],
    ['a value without a choice', press({ value: 'eng-503/mailer_q1' }), /is not <question id>:A\|B\|C\|D/],
    ['a value whose choice differs from the action', press({ value: 'eng-503/mailer_q1:A' }), /button value says A but its action says B/],
    ['a value naming another question than its card', press({ value: 'eng-777/other:B' }), /names question "eng-777\/other" but its card is "sleds_answer:eng-503\/mailer_q1"/],
    ['a question id with a space', press({ value: 'eng 503:B', blockId: 'sleds_answer:eng 503' }), /question id "eng 503" is not one sleds makes/],
    ['a question id with a shell metacharacter', press({ value: '$(id):B', blockId: 'sleds_answer:$(id)' }), /is not one sleds makes/],
    ['a question id too long', press({ value: `${'a'.repeat(122)}:B`, blockId: `sleds_answer:${'a'.repeat(122)}` }), /is not one sleds makes/],
  ])('refuses %s', (_what, payload, error) => {
    const r = parseAnswerAction(payload);
    expect(r).toEqual({ error: expect.stringMatching(error) });
    expect((r as { error: string }).error).not.toMatch(/\n/);
  });
});
