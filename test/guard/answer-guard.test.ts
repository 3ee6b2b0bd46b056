// The answer guard's rules, each on exact texts: masks continue the request's
// numbering, log only records, block cuts before the finding; a stream split
// anywhere gives what the whole text gives; the held tail stays bounded; the
// request's placeholders come back as its values (JSON-escaped in JSON), and
// nothing else does; signed text is never changed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CONTEXT_CHARS, MAX_HELD_CHARS, type AnswerChannel } from '../../src/guard/answer-guard.ts';
import { bookWith, chars, countingScanner, described, guardFor, splitAt, stream } from './answer-rig.ts';

const CARD_1 = '4111 1111 1111 1111';
const REQUEST_CARD = { '[CARD_NUMBER_1]': ['card_number', CARD_1] } as const;
const AWS_ID = 'AKIAIOSFODNN7EXAMPLE';
const AWS_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';

function heldChars(channel: AnswerChannel): number {
  return (channel as unknown as { heldChars: number }).heldChars;
}

describe('a whole text', () => {
  it('masks continue the request numbering, log records, the request placeholder comes back', () => {
    const guard = guardFor({ card_number: 'mask', email: 'log' }, {}, REQUEST_CARD);
    const out = guard.whole('answer.choices[0].message.content', 'text', 'Card 5555555555554444 or 5555555555554444 and mail bob.smith@example.org about INC-123456 and your card [CARD_NUMBER_1] ok');
    assert.deepEqual(out, { text: 'Card [CARD_NUMBER_2] or [CARD_NUMBER_2] and mail bob.smith@example.org about [CUSTOM_TICKET_1] and your card 4111 1111 1111 1111 ok', blocked: false });
    assert.deepEqual(described(guard), [
      'card_number:mask@answer.choices[0].message.content', 'card_number:mask@answer.choices[0].message.content',
      'email:log@answer.choices[0].message.content', 'custom:ticket:mask@answer.choices[0].message.content',
    ]);
  });

  it('the request value itself in the answer gets the request placeholder', () => {
    const guard = guardFor({ card_number: 'mask' }, { restore: false }, REQUEST_CARD);
    assert.equal(guard.whole('a', 'text', `it is ${CARD_1} ok`).text, 'it is [CARD_NUMBER_1] ok');
  });

  it('block cuts before the finding and records nothing after it', () => {
    const guard = guardFor({ card_number: 'block', email: 'log' });
    const out = guard.whole('a', 'text', 'mail a.b@example.org then 5555555555554444 then c.d@example.org');
    assert.deepEqual(out, { text: 'mail a.b@example.org then ', blocked: true });
    assert.deepEqual(described(guard), ['email:log@a', 'card_number:block@a']);
  });

  it('findings carry detector, path and action, never the text; drain returns and clears', () => {
    const guard = guardFor({ card_number: 'mask' });
    guard.whole('p', 'text', 'x 5555555555554444 y');
    const findings = guard.drain();
    assert.deepEqual(findings, [{ detector: 'card_number', path: 'p', action: 'mask' }]);
    assert.deepEqual(Object.keys(findings[0] as object).sort(), ['action', 'detector', 'path']);
    assert.deepEqual(guard.drain(), []);
  });

  it('nothing to do: the text as it came, unheld', () => {
    const guard = guardFor({ 'custom:ticket': 'off' }, { restore: false });
    const channel = guard.channel('a', 'text');
    assert.equal(channel.push('5555555555554444 [CARD_NU'), '5555555555554444 [CARD_NU');
    assert.equal(channel.end(), '');
    assert.deepEqual(guard.drain(), []);
  });
});

describe('a stream split anywhere gives what the whole text gives', () => {
  const text = `Pay 5555555555554444 now, mail bob.smith@example.org, key ${AWS_ID} with ${AWS_SECRET} and [CARD_NUMBER_1] or [CARD_NUMBER_9] [NOT_ONE] INC-654321 end`;
  for (const holdBackChars of [64, 256]) {
    const detectors = { card_number: 'mask', email: 'log', aws_access_key: 'mask' } as const;
    const expected = guardFor(detectors, { holdBackChars }, REQUEST_CARD);
    const whole = expected.whole('a', 'text', text);
    const findings = described(expected);

    it(`hold-back ${holdBackChars}: the whole text, exactly`, () => {
      assert.equal(whole.text, `Pay [CARD_NUMBER_2] now, mail bob.smith@example.org, key [AWS_ACCESS_KEY_1] with [AWS_ACCESS_KEY_2] and ${CARD_1} or [CARD_NUMBER_9] [NOT_ONE] [CUSTOM_TICKET_1] end`);
      assert.deepEqual(findings, ['card_number:mask@a', 'email:log@a', 'aws_access_key:mask@a', 'aws_access_key:mask@a', 'custom:ticket:mask@a']);
    });

    it(`hold-back ${holdBackChars}: two pushes, split at every offset`, () => {
      for (let at = 0; at <= text.length; at++) {
        const guard = guardFor(detectors, { holdBackChars }, REQUEST_CARD);
        const { outputs } = stream(guard, splitAt(text, at));
        assert.equal(outputs.join(''), whole.text, `split at ${at}`);
        assert.deepEqual(described(guard), findings, `split at ${at}`);
      }
    });

    it(`hold-back ${holdBackChars}: one character per push`, () => {
      const guard = guardFor(detectors, { holdBackChars }, REQUEST_CARD);
      const { outputs } = stream(guard, chars(text));
      assert.equal(outputs.join(''), whole.text);
      assert.deepEqual(described(guard), findings);
    });
  }

  it('a block split at every offset: the text before it, then nothing, whatever comes', () => {
    const text = 'first line\nthe card 5555555555554444 and more text after it';
    for (let at = 0; at <= text.length; at++) {
      const guard = guardFor({ card_number: 'block' });
      const channel = guard.channel('a', 'text');
      const out = channel.push(text.slice(0, at)) + channel.push(text.slice(at)) + channel.push(' later'.repeat(20));
      assert.equal(channel.blocked, true);
      assert.equal(channel.push('later text'), '', `split at ${at}`);
      assert.equal(channel.end(), '');
      assert.equal(out, 'first line\nthe card ', `split at ${at}`);
      assert.equal(channel.blocked, true);
      assert.deepEqual(described(guard), ['card_number:block@a']);
    }
  });

  it('an AWS secret 150 characters after its id, after the id was released: found through the kept context', () => {
    const text = `id ${AWS_ID} ${'then some words '.repeat(9)}${AWS_SECRET} done`;
    const guard = guardFor({ aws_access_key: 'mask' }, { holdBackChars: 64 });
    const { outputs } = stream(guard, chars(text));
    assert.equal(outputs.join(''), `id [AWS_ACCESS_KEY_1] ${'then some words '.repeat(9)}[AWS_ACCESS_KEY_2] done`);
    assert.ok(CONTEXT_CHARS >= 200 + AWS_ID.length);
  });

  it('the kept context starts at a word start, not after its first whitespace: compact JSON keeps the id', () => {
    const text = `{"intro":"some words","blob":"${'z'.repeat(300)}","id":"${AWS_ID}","note":"${'x'.repeat(60)} y","secret":"${AWS_SECRET}"} and${' more words'.repeat(12)}`;
    const guard = guardFor({ aws_access_key: 'mask' }, { holdBackChars: 64 });
    const whole = guard.whole('a', 'text', text).text;
    assert.equal(whole, text.replace(AWS_ID, '[AWS_ACCESS_KEY_1]').replace(AWS_SECRET, '[AWS_ACCESS_KEY_2]'));
    assert.equal(stream(guardFor({ aws_access_key: 'mask' }, { holdBackChars: 64 }), chars(text)).outputs.join(''), whole);
  });
});

describe('the held tail', () => {
  it('text without findings: the last holdBackChars held (from a word start), scanned again after a step of a quarter of it', () => {
    const guard = guardFor({ card_number: 'block' }, { holdBackChars: 100 });
    const channel = guard.channel('a', 'text');
    let sent = '';
    let got = '';
    const held: number[] = [];
    for (const size of [1, 50, 49, 1, 1, 300, 7, 0, 17, 1, 120]) {
      const piece = 'lorem ipsum dolor sit amet '.repeat(20).slice(0, size);
      sent += piece;
      got += channel.push(piece);
      held.push(heldChars(channel));
      assert.equal(got, sent.slice(0, sent.length - heldChars(channel)));
    }
    // 101, 102: the tail starts inside 'llorem' (the first two pieces joined), held from its start; 107, 124:
    // fewer than a step of 25 characters since the last scan; 103, 102: held from the start of 'ipsum', 'lorem'.
    assert.deepEqual(held, [1, 51, 100, 101, 102, 100, 107, 107, 124, 103, 102]);
    assert.equal(got + channel.end(), sent);
  });

  it('a surrogate pair is never split between outputs, and no more than holdBackChars, a step and a word is held', () => {
    const text = 'smile \u{1F600} '.repeat(40);
    for (let size = 1; size <= 9; size++) {
      const guard = guardFor({ card_number: 'block' }, { holdBackChars: 64 });
      const channel = guard.channel('a', 'text');
      let got = '';
      for (let at = 0; at < text.length; at += size) {
        const out = channel.push(text.slice(at, at + size));
        assert.equal(/[\ud800-\udbff]$/.test(out) || /^[\udc00-\udfff]/.test(out), false, `pieces of ${size}: ${JSON.stringify(out)}`);
        // The hold-back, a step of 16, the push and the word the tail starts in at most.
        assert.ok(heldChars(channel) <= 64 + 16 + size + 'smile'.length, `${heldChars(channel)} held`);
        got += out;
      }
      assert.equal(got + channel.end(), text);
    }
  });

  it('a finding that reaches the tail is held from its start, then masked whole', () => {
    const pat = `github_pat_${'a1B2c3D4e5'.repeat(8)}Zz`;
    const guard = guardFor({ github_token: 'mask' }, { holdBackChars: 64 });
    const channel = guard.channel('a', 'text');
    assert.equal(channel.push(`lead ${pat}`), 'lead ');
    assert.equal(heldChars(channel), 93);
    assert.equal(channel.push(' and more'), '');
    assert.equal(channel.push('x '.repeat(50)), `[GITHUB_TOKEN_1] and more${'x '.repeat(18)}`);
    assert.equal(heldChars(channel), 64);
    assert.equal(channel.end(), 'x '.repeat(32));
  });

  it('an off finding reaching the tail holds it too, and goes out unchanged and unrecorded', () => {
    const pat = `github_pat_${'a1B2c3D4e5'.repeat(8)}Zz`;
    const guard = guardFor({ github_token: 'off', card_number: 'mask' }, { holdBackChars: 64 });
    const channel = guard.channel('a', 'text');
    assert.equal(channel.push(`lead ${pat}`), 'lead ');
    assert.equal(channel.end(), pat);
    assert.deepEqual(guard.drain(), []);
  });

  it(`a finding held past ${MAX_HELD_CHARS} characters: the text so far scanned as ended`, () => {
    const guard = guardFor({ private_key: 'mask' }, { holdBackChars: 256 });
    const channel = guard.channel('a', 'text');
    let got = channel.push('key: -----BEGIN RSA PRIVATE KEY-----\n');
    let most = 0;
    for (let i = 0; i < 80; i++) {
      got += channel.push(`${'QUJD'.repeat(249)}\n`);
      most = Math.max(most, heldChars(channel));
      assert.ok(heldChars(channel) <= MAX_HELD_CHARS, `${heldChars(channel)} held`);
    }
    got += channel.end();
    assert.ok(most > MAX_HELD_CHARS - 1000, `${most} held at most`);
    assert.ok(got.startsWith('key: [PRIVATE_KEY_1]'), got.slice(0, 40));
    assert.equal(got.includes('BEGIN'), false);
  });

  it('each scan covers the kept context, the held tail and the push: linear in what is pushed', () => {
    const scanner = countingScanner();
    const guard = guardFor({ card_number: 'mask', email: 'log' }, { holdBackChars: 64 }, {}, scanner);
    const channel = guard.channel('a', 'text');
    const piece = 'The gateway forwards requests; mail ops@example.org with 5555555555554444 at times. '.repeat(2).slice(0, 100);
    let got = '';
    for (let i = 0; i < 2000; i++) got += channel.push(piece);
    got += channel.end();
    assert.ok(scanner.sizes.length >= 2000);
    for (const size of scanner.sizes) assert.ok(size <= CONTEXT_CHARS + 64 + 100, `a scan of ${size} characters`);
    assert.equal(got, guardFor({ card_number: 'mask', email: 'log' }).whole('a', 'text', piece.repeat(2000)).text);
  });

  it('token-sized pushes: one scan per step of a quarter of the hold-back, not one per push', () => {
    const scanner = countingScanner();
    const guard = guardFor({ card_number: 'mask', email: 'log' }, { holdBackChars: 64 }, {}, scanner);
    const channel = guard.channel('a', 'text');
    const text = 'The gateway forwards requests; mail ops@example.org with 5555555555554444 at times. '.repeat(50);
    let got = '';
    for (let at = 0; at < text.length; at += 4) got += channel.push(text.slice(at, at + 4));
    got += channel.end();
    assert.equal(got, guardFor({ card_number: 'mask', email: 'log' }).whole('a', 'text', text).text);
    // Pushes of 4, a step of 16: a scan every 4th push after the first 64 characters, and the end's.
    assert.equal(scanner.sizes.length, Math.ceil((text.length - 64) / 16) + 1);
  });

  it('a long value held from its start and arriving in small pieces is scanned a logarithmic number of times', () => {
    const scanner = countingScanner();
    const guard = guardFor({ private_key: 'mask' }, { holdBackChars: 256 }, {}, scanner);
    const channel = guard.channel('a', 'text');
    const text = `key: -----BEGIN RSA PRIVATE KEY-----\n${'QUJDRA=='.repeat(4000)}\n-----END RSA PRIVATE KEY-----\n done`;
    let got = '';
    for (let at = 0; at < text.length; at += 4) got += channel.push(text.slice(at, at + 4));
    got += channel.end();
    assert.equal(got, 'key: [PRIVATE_KEY_1]\n done');
    const scanned = scanner.sizes.reduce((a, b) => a + b, 0);
    // Scanned again after half as much again each time: about 3 times the text in all, where a scan per step
    // would read it some 500 times over.
    assert.ok(scanned < 4 * text.length, `${scanned} characters scanned for ${text.length}`);
  });
});

describe('restoration', () => {
  const masks = { ...REQUEST_CARD, '[EMAIL_1]': ['email', 'alice@example.org'] } as const;

  it('a placeholder split at every offset, and one character per push, comes back', () => {
    const text = 'to [EMAIL_1] and [CARD_NUMBER_1], not [CARD_NUMBER_9] nor [NOT_ONE] nor [EMAIL_1';
    const want = `to alice@example.org and ${CARD_1}, not [CARD_NUMBER_9] nor [NOT_ONE] nor [EMAIL_1`;
    for (const settings of [{ scan: true }, { scan: false }]) {
      for (let at = 0; at <= text.length; at++) {
        const guard = guardFor({ email: 'block' }, settings, masks);
        assert.equal(stream(guard, splitAt(text, at)).outputs.join(''), want, `split at ${at}`);
        assert.deepEqual(guard.drain(), [], 'restored values are not scanned');
      }
      assert.equal(stream(guardFor({ email: 'block' }, settings, masks), chars(text)).outputs.join(''), want);
    }
  });

  it('restoring alone holds only an unfinished placeholder', () => {
    const guard = guardFor({ email: 'mask' }, { scan: false }, masks);
    const channel = guard.channel('a', 'text');
    assert.equal(channel.push('hello [CARD_NU'), 'hello ');
    assert.equal(channel.push('MBER_1] and ['), `${CARD_1} and `);
    assert.equal(channel.push('x] y'), '[x] y');
    assert.equal(channel.push(' [NOT_A_PLACEHOLDER_OF_THIS_REQUEST'), ' [NOT_A_PLACEHOLDER_OF_THIS_REQUEST');
    assert.equal(channel.push(' [EMA'), ' ');
    assert.equal(channel.end(), '[EMA');
  });

  it('restore off: placeholders pass as they are', () => {
    const guard = guardFor({}, { restore: false }, masks);
    assert.equal(guard.whole('a', 'text', 'to [EMAIL_1]').text, 'to [EMAIL_1]');
  });

  it('placeholders the answer scan made are not restored', () => {
    const guard = guardFor({ card_number: 'mask' }, {}, REQUEST_CARD);
    assert.equal(guard.whole('a', 'text', 'new 5555555555554444 here').text, 'new [CARD_NUMBER_2] here');
    assert.equal(guard.whole('a', 'text', 'echo [CARD_NUMBER_2] and [CARD_NUMBER_1]').text, `echo [CARD_NUMBER_2] and ${CARD_1}`);
  });
});

describe('JSON text (tool-call arguments)', () => {
  const original = 'we"ird\\name\nline\u2028sep@example.org';
  const masks = { '[EMAIL_1]': ['email', original], '[CARD_NUMBER_1]': ['card_number', CARD_1] } as const;
  const args = '{"to":"[EMAIL_1]","card":5555555555554444,"note":"ticket INC-123456 \\"q\\" \\u00e9","n":12,"ok":true,"list":["[CARD_NUMBER_1]",3.5]}';
  const parsed = {
    to: original, card: '[CARD_NUMBER_2]', note: 'ticket [CUSTOM_TICKET_1] "q" \u00e9', n: 12, ok: true, list: [CARD_1, 3.5],
  };

  it('restored values JSON-escaped, a mask outside a string quoted: the JSON parses to the values', () => {
    const guard = guardFor({ card_number: 'mask' }, {}, masks);
    const out = guard.whole('answer.choices[0].message.tool_calls[0].function.arguments', 'json', args);
    assert.equal(out.text, '{"to":"we\\"ird\\\\name\\nline\\u2028sep@example.org","card":"[CARD_NUMBER_2]","note":"ticket [CUSTOM_TICKET_1] \\"q\\" \\u00e9","n":12,"ok":true,"list":["4111 1111 1111 1111",3.5]}');
    assert.deepEqual(JSON.parse(out.text), parsed);
  });

  it('split at every offset: the same JSON', () => {
    for (let at = 0; at <= args.length; at++) {
      const guard = guardFor({ card_number: 'mask' }, {}, masks);
      const text = stream(guard, splitAt(args, at), 'json').outputs.join('');
      assert.deepEqual(JSON.parse(text), parsed, `split at ${at}`);
    }
  });

  it('a placeholder outside a string comes back as a JSON string', () => {
    const guard = guardFor({}, {}, masks);
    assert.deepEqual(JSON.parse(guard.whole('a', 'json', '{"a":[EMAIL_1],"b":[[CARD_NUMBER_1]]}').text), { a: original, b: [CARD_1] });
  });

  it('a mask right after an escaped quote and before one keeps the escapes', () => {
    const guard = guardFor({ card_number: 'mask' });
    const text = guard.whole('a', 'json', '{"a":"\\"5555555555554444\\""}').text;
    assert.equal(text, '{"a":"\\"[CARD_NUMBER_1]\\""}');
  });

  it('a mask found from the character after an escape\'s backslash keeps the escape: the arguments mean what they meant', () => {
    const guard = guardFor({ email: 'mask' });
    const out = guard.whole('answer.choices[0].message.tool_calls[0].function.arguments', 'json', '{"to":"x\\nbob@example.com"}');
    assert.deepEqual(out, { text: '{"to":"x\\n[EMAIL_1]"}', blocked: false });
    assert.deepEqual(JSON.parse(out.text), { to: 'x\n[EMAIL_1]' });
  });
});

describe('signed text', () => {
  it('never changed: a mask is recorded as log, placeholders are not restored', () => {
    const guard = guardFor({ card_number: 'mask' }, {}, REQUEST_CARD);
    const text = 'thinking about 5555555555554444 and [CARD_NUMBER_1]';
    assert.deepEqual(guard.whole('answer.content[0].thinking', 'signed', text), { text, blocked: false });
    assert.deepEqual(described(guard), ['card_number:log@answer.content[0].thinking']);
    assert.equal(stream(guard, chars(text), 'signed').outputs.join(''), text);
  });

  it('a block still cuts', () => {
    const guard = guardFor({ card_number: 'block' });
    const { outputs, blocked } = stream(guard, splitAt('thinking about 5555555555554444 now', 20), 'signed');
    assert.deepEqual({ text: outputs.join(''), blocked }, { text: 'thinking about ', blocked: true });
  });
});

describe('the book', () => {
  it('numbers per detector, the same value the same placeholder, only the request restorable', () => {
    const book = bookWith({ '[CARD_NUMBER_1]': ['card_number', CARD_1] });
    assert.equal(book.placeholderFor('card_number', CARD_1, false), '[CARD_NUMBER_1]');
    assert.equal(book.placeholderFor('card_number', '5555555555554444', false), '[CARD_NUMBER_2]');
    assert.equal(book.placeholderFor('custom:ticket', 'INC-1', false), '[CUSTOM_TICKET_1]');
    assert.equal(book.originalOf('[CARD_NUMBER_1]'), CARD_1);
    assert.equal(book.originalOf('[CARD_NUMBER_2]'), undefined);
    assert.equal(book.originalOf('[CUSTOM_TICKET_1]'), undefined);
    assert.equal(book.hasRestorable, true);
    assert.equal(bookWith().hasRestorable, false);
  });
});
