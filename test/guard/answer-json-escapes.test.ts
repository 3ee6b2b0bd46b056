// A json channel (tool-call arguments) scanned through its view: a value right
// after an ordinary escape (`\n`, `\t`, `\r`) is found as it is in the same
// text as content, whole and streamed at every split, and the masked
// arguments still parse to the text with the value's placeholder.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { DETECTOR_NAMES } from '../../src/guard/guard-types.ts';
import { jsonView, JsonState } from '../../src/guard/json-text.ts';
import { repositoryRoot } from '../support/repository-root.ts';
import { chars, described, guardFor, splitAt, stream } from './answer-rig.ts';

const ARGS_PATH = 'answer.choices[0].message.tool_calls[0].function.arguments';
const CARD = '4111 1111 1111 1111';
const AWS = 'AKIAQ3EGRTWXZ7PLMN4K';
const EMAIL = 'bob.smith@example.com';
const PEM = `-----BEGIN RSA PRIVATE KEY-----\n${'MIIEowIBAAKCAQEAx3b5Qd8kR1vN7pYt2mW4sZ9cL6jF0hU'.repeat(2)}\n${'Gq2TnB8vX5rK1wE7yP4oA3sD6fH9jL0zC2xV5bN8mQ1wE3r'.repeat(2)}\n-----END RSA PRIVATE KEY-----`;

/** [name, detector, its placeholder, the value]. */
const VALUES: [string, string, string, string][] = [
  ['a card', 'card_number', '[CARD_NUMBER_1]', CARD],
  ['an AWS key', 'aws_access_key', '[AWS_ACCESS_KEY_1]', AWS],
  ['an e-mail', 'email', '[EMAIL_1]', EMAIL],
  ['a PEM private key', 'private_key', '[PRIVATE_KEY_1]', PEM],
];
/** [escape's name, the character a client decodes it to]. */
const BREAKS: [string, string][] = [['\\n', '\n'], ['\\t', '\t'], ['\\r', '\r']];

/** The arguments of a tool call writing `body` to a file, as the model sends them. */
function argsOf(body: string): string {
  return JSON.stringify({ path: 'notes.txt', body });
}

describe('jsonView', () => {
  it('each ordinary escape reads as its boundary pair, the same length; \\/ and \\uXXXX and the rest as written', () => {
    const source = '{"a":"x\\ny\\rz\\tw\\bv\\fu\\"t\\\\s\\/r\\u0041q","n\\n":1}';
    const view = jsonView(JsonState.Out, source);
    assert.equal(view, '{"a":"x\r\ny\r\rz\t\tw\b\bv\f\fu "t \\s\\/r\\u0041q","n\r\n":1}');
    assert.equal(view.length, source.length);
  });

  it('outside strings nothing changes; from inside an escape the text starts with its letter\'s view', () => {
    assert.equal(jsonView(JsonState.Out, '[1, 2]\\n'), '[1, 2]\\n');
    assert.equal(jsonView(JsonState.Escape, 'n4111"'), '\n4111"');
    assert.equal(jsonView(JsonState.Escape, 'u0041"'), 'u0041"');
    assert.equal(jsonView(JsonState.In, '\\\\n'), ' \\n');
  });
});

describe('a value right after a line break or a tab in tool-call arguments', () => {
  for (const [name, detector, placeholder, value] of VALUES) {
    for (const [escape, decoded] of BREAKS) {
      const body = `Dear Bob,${decoded}${value}${decoded}Thanks`;
      const args = argsOf(body);
      const masked = argsOf(`Dear Bob,${decoded}${placeholder}${decoded}Thanks`);

      it(`${name} after ${escape}: blocked as in the content, whole`, () => {
        const asContent = guardFor({ [detector]: 'block' }, { holdBackChars: 256 }).whole('a', 'text', body);
        assert.deepEqual(asContent, { text: `Dear Bob,${decoded}`, blocked: true });
        const guard = guardFor({ [detector]: 'block' }, { holdBackChars: 256 });
        assert.deepEqual(guard.whole(ARGS_PATH, 'json', args), { text: `{"path":"notes.txt","body":"Dear Bob,${escape}`, blocked: true });
        assert.deepEqual(described(guard), [`${detector}:block@${ARGS_PATH}`]);
      });

      it(`${name} after ${escape}: masked whole, and the same streamed split at every offset and a character at a time`, () => {
        const guard = guardFor({ [detector]: 'mask' }, { holdBackChars: 256 });
        const whole = guard.whole(ARGS_PATH, 'json', args);
        assert.deepEqual(whole, { text: masked, blocked: false });
        assert.deepEqual(JSON.parse(whole.text), { path: 'notes.txt', body: `Dear Bob,${decoded}${placeholder}${decoded}Thanks` });
        assert.deepEqual(described(guard), [`${detector}:mask@${ARGS_PATH}`]);
        for (let at = 0; at <= args.length; at++) {
          const split = stream(guardFor({ [detector]: 'mask' }, { holdBackChars: 256 }), splitAt(args, at), 'json');
          assert.deepEqual({ text: split.outputs.join(''), blocked: split.blocked }, { text: masked, blocked: false }, `split at ${at}`);
        }
        const each = stream(guardFor({ [detector]: 'mask' }, { holdBackChars: 256 }), chars(args), 'json');
        assert.equal(each.outputs.join(''), masked);
      });

      // A block cuts where a mask would start: streamed at every split after one escape is enough.
      if (escape === '\\n') it(`${name} after ${escape}: blocked streamed, split at every offset, nothing of it out`, () => {
        for (let at = 0; at <= args.length; at++) {
          const split = stream(guardFor({ [detector]: 'block' }, { holdBackChars: 256 }), splitAt(args, at), 'json');
          assert.deepEqual({ text: split.outputs.join(''), blocked: split.blocked }, { text: `{"path":"notes.txt","body":"Dear Bob,${escape}`, blocked: true }, `split at ${at}`);
        }
      });
    }
  }

  it('a PEM private key as the whole body of a file a tool call writes: blocked, whole and streamed', () => {
    const args = argsOf(PEM);
    assert.deepEqual(guardFor({ private_key: 'block' }, { holdBackChars: 256 }).whole(ARGS_PATH, 'json', args), { text: '{"path":"notes.txt","body":"', blocked: true });
    const each = stream(guardFor({ private_key: 'block' }, { holdBackChars: 256 }), chars(args), 'json');
    assert.deepEqual({ text: each.outputs.join(''), blocked: each.blocked }, { text: '{"path":"notes.txt","body":"', blocked: true });
  });

  it('a card after an escaped quote, between escaped backslashes: found, the JSON parses after the mask', () => {
    const body = `card "${CARD}" in C:\\${CARD}\\x`;
    const guard = guardFor({ card_number: 'mask' });
    const out = guard.whole(ARGS_PATH, 'json', argsOf(body));
    assert.deepEqual(JSON.parse(out.text), { path: 'notes.txt', body: 'card "[CARD_NUMBER_1]" in C:\\[CARD_NUMBER_1]\\x' });
  });

  it('a secret assigned in a quoted shell line inside the arguments: found past the escaped quote', () => {
    const args = argsOf('export API_KEY="q8Zr2LkP0vX7mN4tB9"');
    const guard = guardFor({ secret_assignment: 'mask' });
    assert.deepEqual(JSON.parse(guard.whole(ARGS_PATH, 'json', args).text), { path: 'notes.txt', body: 'export API_KEY="[SECRET_ASSIGNMENT_1]"' });
  });

  it('written as \\u escapes: still not found (a deliberate encoding)', () => {
    const args = '{"to":"bob.smith\\u0040example.com","k":"\\u0041KIAQ3EGRTWXZ7PLMN4K"}';
    const guard = guardFor({ email: 'block', aws_access_key: 'block' });
    assert.deepEqual(guard.whole(ARGS_PATH, 'json', args), { text: args, blocked: false });
  });
});

describe('the near-miss corpus as tool-call arguments', () => {
  const lines = readFileSync(path.join(repositoryRoot(), 'test/fixtures/guard/near-misses.txt'), 'utf8').split('\n').filter((line) => line !== '' && !line.startsWith('# '));
  const everything = Object.fromEntries(DETECTOR_NAMES.map((name) => [name, 'block' as const]));

  it('no finding: lines joined by line breaks, by CR LF, by tabs, and each line quoted', () => {
    for (const separator of ['\n', '\r\n', '\t']) {
      const args = argsOf(lines.join(separator));
      const guard = guardFor(everything, { holdBackChars: 256 });
      assert.deepEqual(guard.whole(ARGS_PATH, 'json', args), { text: args, blocked: false }, JSON.stringify(separator));
      assert.deepEqual(described(guard), []);
    }
    const quoted = argsOf(lines.map((line) => `"${line}"`).join('\n'));
    const guard = guardFor(everything, { holdBackChars: 256 });
    assert.deepEqual(guard.whole(ARGS_PATH, 'json', quoted), { text: quoted, blocked: false });
    assert.deepEqual(described(guard), []);
  });
});
