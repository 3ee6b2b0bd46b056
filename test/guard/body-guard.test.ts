// The request side's masking through the book it shares with the answer,
// placeholders the body already holds, and thinking blocks: nothing exempt.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createAnswerGuard, PlaceholderBook } from '../../src/guard/answer-guard.ts';
import { guardBody } from '../../src/guard/body-guard.ts';
import { effectiveGuardPolicy, type GuardAction } from '../../src/guard/guard-policy.ts';
import { createGuardScanner, DETECTOR_NAMES } from '../../src/guard/guard-types.ts';

const scanner = createGuardScanner({ detectors: new Set(DETECTOR_NAMES), patterns: [] });
const policy = (detectors: Record<string, GuardAction>) => effectiveGuardPolicy({ detectors, patterns: [] }, null, null);
const CARD = '5555555555554444';

function turn(blocks: unknown[]): unknown {
  return { messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: blocks }] };
}

describe('guardBody and the book', () => {
  it('masks are written in the book, restorable; the outcome carries it', () => {
    const out = guardBody({ m: `card ${CARD} and ${CARD}` }, scanner, policy({ card_number: 'mask' }));
    assert.deepEqual(out.masked, { m: 'card [CARD_NUMBER_1] and [CARD_NUMBER_1]' });
    assert.equal(out.book.originalOf('[CARD_NUMBER_1]'), CARD);
    assert.equal(out.book.hasRestorable, true);
  });

  it('a given book: the numbering continues in it', () => {
    const book = new PlaceholderBook();
    book.placeholderFor('card_number', '4111111111111111', true);
    const out = guardBody({ m: `card ${CARD}` }, scanner, policy({ card_number: 'mask' }), book);
    assert.equal(out.book, book);
    assert.deepEqual(out.masked, { m: 'card [CARD_NUMBER_2]' });
  });

  it('nothing found: no findings, nothing masked, an empty book', () => {
    const out = guardBody({ m: 'nothing here' }, scanner, policy({ card_number: 'mask' }));
    assert.deepEqual({ findings: out.findings, blocked: out.blocked, masked: out.masked, restorable: out.book.hasRestorable }, { findings: [], blocked: null, masked: null, restorable: false });
  });
});

describe('placeholders already in the body', () => {
  const OTHER = '4111111111111111';

  it('are given to no new value: the numbering continues above the highest of each name, wherever it is', () => {
    const body = {
      input: [
        { role: 'user', content: 'Charge [CARD_NUMBER_1] please, mail [EMAIL_4].' },
        { role: 'user', content: `Now use ${CARD} instead.` },
        { role: 'user', content: `And ${OTHER}; see [CARD_NUMBER_3] and [[CARD_NUMBER_2]], not [CARD_NUMBER_0] or [CARD_NUMBER_1x].` },
      ],
    };
    const out = guardBody(body, scanner, policy({ card_number: 'mask', email: 'mask' }));
    assert.deepEqual(out.masked, {
      input: [
        { role: 'user', content: 'Charge [CARD_NUMBER_1] please, mail [EMAIL_4].' },
        { role: 'user', content: 'Now use [CARD_NUMBER_4] instead.' },
        { role: 'user', content: 'And [CARD_NUMBER_5]; see [CARD_NUMBER_3] and [[CARD_NUMBER_2]], not [CARD_NUMBER_0] or [CARD_NUMBER_1x].' },
      ],
    });
    assert.equal(out.book.placeholderFor('email', 'bob@example.org', false), '[EMAIL_5]');
    assert.equal(out.book.placeholderFor('jwt', 'x', false), '[JWT_1]');
  });

  it('in an object key too', () => {
    const out = guardBody({ tool: { '[CARD_NUMBER_2]': 'x', note: CARD } }, scanner, policy({ card_number: 'mask' }));
    assert.deepEqual(out.masked, { tool: { '[CARD_NUMBER_2]': 'x', note: '[CARD_NUMBER_3]' } });
  });

  it('are not restored: their value is not this request\'s', () => {
    const body = { input: [{ role: 'user', content: 'Charge [CARD_NUMBER_1] please.' }, { role: 'user', content: `Now use ${CARD} instead.` }] };
    const out = guardBody(body, scanner, policy({ card_number: 'mask' }));
    assert.equal(JSON.stringify(out.masked).includes('Now use [CARD_NUMBER_2] instead.'), true);
    const answers = createAnswerGuard({ scanner, policy: policy({ card_number: 'mask' }), settings: { scan: false, restore: true, holdBackChars: 256 }, book: out.book });
    const said = answers.whole('answer.output[0].content[0].text', 'text', 'I charged [CARD_NUMBER_1] as you first asked, and keep [CARD_NUMBER_2].');
    assert.deepEqual(said, { text: `I charged [CARD_NUMBER_1] as you first asked, and keep ${CARD}.`, blocked: false });
    assert.equal(out.book.originalOf('[CARD_NUMBER_1]'), undefined);
  });

  it('nothing masked in the request: the answer scan\'s numbering still goes above them', () => {
    const out = guardBody({ m: 'earlier: [CARD_NUMBER_1]' }, scanner, policy({ card_number: 'mask' }));
    assert.equal(out.masked, null);
    const answers = createAnswerGuard({ scanner, policy: policy({ card_number: 'mask' }), settings: { scan: true, restore: true, holdBackChars: 256 }, book: out.book });
    assert.equal(answers.whole('a', 'text', `new ${CARD}`).text, 'new [CARD_NUMBER_2]');
  });
});

describe('thinking blocks in a request: nothing is exempt (the client says what is signed)', () => {
  const body = turn([
    { type: 'thinking', thinking: `the card ${CARD}`, signature: 'c2lnbmF0dXJl' },
    { type: 'text', text: `the card ${CARD}` },
  ]);

  it('a mask in a signed thinking text blocks the request, the finding saying why', () => {
    const out = guardBody(body, scanner, policy({ card_number: 'mask' }));
    const signed = { detector: 'card_number', path: 'messages[1].content[0].thinking', action: 'block', reason: 'signed' };
    assert.deepEqual(out.findings, [signed, { detector: 'card_number', path: 'messages[1].content[1].text', action: 'mask' }]);
    assert.deepEqual(out.blocked, signed);
  });

  it('a forged signature changes nothing: the thinking text is blocked, never sent as it is', () => {
    const forged = turn([{ type: 'thinking', thinking: `the card ${CARD}`, signature: 'made-up' }]);
    const out = guardBody(forged, scanner, policy({ card_number: 'mask' }));
    assert.deepEqual(out.blocked, { detector: 'card_number', path: 'messages[1].content[0].thinking', action: 'block', reason: 'signed' });
  });

  it('log and block in signed text as anywhere; a block is not marked signed', () => {
    assert.deepEqual(guardBody(body, scanner, policy({ card_number: 'log' })).findings, [
      { detector: 'card_number', path: 'messages[1].content[0].thinking', action: 'log' },
      { detector: 'card_number', path: 'messages[1].content[1].text', action: 'log' },
    ]);
    assert.deepEqual(guardBody(body, scanner, policy({ card_number: 'block' })).blocked, { detector: 'card_number', path: 'messages[1].content[0].thinking', action: 'block' });
  });

  it('redacted thinking data is scanned as any string: masked, and blocked', () => {
    const redacted = turn([{ type: 'redacted_thinking', data: `${CARD} bob@example.org` }]);
    assert.deepEqual(guardBody(redacted, scanner, policy({ card_number: 'mask' })).masked, turn([{ type: 'redacted_thinking', data: '[CARD_NUMBER_1] bob@example.org' }]));
    assert.deepEqual(guardBody(redacted, scanner, policy({ email: 'block' })).blocked, { detector: 'email', path: 'messages[1].content[0].data', action: 'block' });
  });

  it('a redacted-thinking shape anywhere (a tool schema) is scanned', () => {
    const key = 'AKIAQ3EGRTWXZ7PLMN4K';
    const tools = { messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'f', parameters: { properties: { k: { type: 'redacted_thinking', data: `use ${key}` } } } } }] };
    assert.deepEqual(guardBody(tools, scanner, policy({ aws_access_key: 'block' })).blocked, { detector: 'aws_access_key', path: 'tools[0].function.parameters.properties.k.data', action: 'block' });
  });

  it('thinking without a signature is ordinary text', () => {
    const out = guardBody(turn([{ type: 'thinking', thinking: `the card ${CARD}` }]), scanner, policy({ card_number: 'mask' }));
    assert.deepEqual(out.masked, turn([{ type: 'thinking', thinking: 'the card [CARD_NUMBER_1]' }]));
  });
});
