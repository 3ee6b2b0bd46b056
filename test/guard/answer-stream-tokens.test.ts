// A stream never releases part of a token: a key, a JWT or a base64 blob of
// any length is held from its start and scanned whole (up to the hard cap),
// and the cost stays linear: a value held from its start is scanned again
// only after half as much again has arrived, and plain text once per step.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createAnswerGuard, MAX_HELD_CHARS, PlaceholderBook, type AnswerChannel } from '../../src/guard/answer-guard.ts';
import { effectiveGuardPolicy } from '../../src/guard/guard-policy.ts';
import type { GuardScanner } from '../../src/guard/guard-types.ts';
import { countingScanner, described, guardFor } from './answer-rig.ts';

const PATH = 'answer.choices[0].delta.content';
const base64url = (text: string): string => Buffer.from(text).toString('base64url');

/** A JWT of about `size` characters: a real header, a payload padded to the size, a signature. */
function jwtOf(size: number): string {
  const head = base64url('{"alg":"RS256","typ":"JWT"}');
  const signature = 'Ab3_'.repeat(86);
  const claims = { iss: 'https://login.example.com/tenant/v2.0', sub: 'user-123', aud: 'api://example', scope: 'read write admin', pad: '' };
  const bare = base64url(JSON.stringify(claims)).length;
  const payload = base64url(JSON.stringify({ ...claims, pad: 'x'.repeat(Math.max(0, Math.floor(((size - head.length - signature.length - 2 - bare) * 3) / 4))) }));
  return `${head}.${payload}.${signature}`;
}

/** `text` pushed `size` characters at a time, then the end: what went out, joined, and the most held at once. */
function pushed(channel: AnswerChannel, text: string, size: number): { given: string; mostHeld: number } {
  let given = '';
  let mostHeld = 0;
  for (let at = 0; at < text.length; at += size) {
    given += channel.push(text.slice(at, at + size));
    mostHeld = Math.max(mostHeld, (channel as unknown as { heldChars: number }).heldChars);
  }
  return { given: given + channel.end(), mostHeld };
}

/** A scanner that only counts the characters it is given (no findings): the work asked, not the machine's speed. */
function countingOnly(): GuardScanner & { scanned: number; scans: number } {
  return {
    scanned: 0,
    scans: 0,
    lastSteps: 0,
    scan(text: string): void {
      this.scanned += text.length;
      this.scans++;
    },
  };
}

describe('a token longer than the hold-back', () => {
  const token = jwtOf(4096);

  it('a 4 kB JWT streamed in 4-character pushes is blocked before any of it goes out, as in the whole text', () => {
    assert.ok(token.length > 4000 && token.length < 4200, `${token.length} characters`);
    const text = `Here is the token: ${token} - keep it safe.`;
    const whole = guardFor({ jwt: 'block' }, { holdBackChars: 256 });
    assert.deepEqual(whole.whole(PATH, 'text', text), { text: 'Here is the token: ', blocked: true });
    const guard = guardFor({ jwt: 'block' }, { holdBackChars: 256 });
    const channel = guard.channel(PATH, 'text');
    const { given } = pushed(channel, text, 4);
    assert.deepEqual({ given, blocked: channel.blocked, findings: described(guard) }, { given: 'Here is the token: ', blocked: true, findings: [`jwt:block@${PATH}`] });
  });

  it('masked whole, in pushes of every size from 1 to 9', () => {
    const text = `token ${token}\nand then more words after it, enough to pass the hold-back of sixty-four characters`;
    const want = text.replace(token, '[JWT_1]');
    for (let size = 1; size <= 9; size++) {
      const guard = guardFor({ jwt: 'mask' }, { holdBackChars: 64 });
      assert.equal(pushed(guard.channel(PATH, 'text'), text, size).given, want, `pushes of ${size}`);
      assert.deepEqual(described(guard), [`jwt:mask@${PATH}`]);
    }
  });

  it('no output ends inside a run of token characters, and the next one does not start in it', () => {
    const text = `see https://example.org/a/b?c=d%20e+f~g and ${'word '.repeat(40)}${'Zm9vYmFy'.repeat(60)}== then ${'more text '.repeat(30)}`;
    const guard = guardFor({ card_number: 'block' }, { holdBackChars: 64 });
    const channel = guard.channel(PATH, 'text');
    const token = /[A-Za-z0-9_.+/=~%-]/;
    let given = '';
    for (let at = 0; at < text.length; at += 3) {
      const out = channel.push(text.slice(at, at + 3));
      given += out;
      if (out !== '') assert.equal(token.test(given.at(-1) as string) && token.test(text[given.length] as string), false, `cut at ${given.length}: ${JSON.stringify(given.slice(-20))}`);
    }
    assert.equal(given + channel.end(), text);
  });

  it(`a run longer than ${MAX_HELD_CHARS} characters: held up to the cap, then scanned as ended`, () => {
    const guard = guardFor({ card_number: 'block' }, { holdBackChars: 256 });
    const channel = guard.channel(PATH, 'text');
    const text = `blob ${'QUJD'.repeat(20_000)} end`;
    const { given, mostHeld } = pushed(channel, text, 64);
    assert.equal(given, text);
    assert.ok(mostHeld <= MAX_HELD_CHARS && mostHeld > MAX_HELD_CHARS - 64, `${mostHeld} held at most`);
  });
});

describe('the cost of a stream in small pushes: each character scanned a bounded number of times', () => {
  it('a 60 kB base64 run in 4-character pushes: fewer than 5 times its length scanned', () => {
    const scanner = countingScanner();
    const guard = guardFor({ card_number: 'mask', jwt: 'block' }, { holdBackChars: 256 }, {}, scanner);
    const run = Buffer.from(Array.from({ length: 45_000 }, (_, i) => (i * 7919) % 256)).toString('base64');
    const text = `data: ${run} done`;
    assert.equal(run.length, 60_000);
    const { given } = pushed(guard.channel(PATH, 'text'), text, 4);
    assert.equal(given, text);
    const scanned = scanner.sizes.reduce((a, b) => a + b, 0);
    // Held from its start, scanned again each time half as much again has come (about 3 times the run in all),
    // then once as ended.
    assert.ok(scanned < 5 * run.length, `${scanned} characters scanned (${(scanned / run.length).toFixed(2)}x)`);
  });

  it('a private key header and 64 kB of base64 in 4-character pushes: fewer than 6 times the text scanned', () => {
    const scanner = countingScanner();
    const guard = guardFor({ private_key: 'mask' }, { holdBackChars: 256 }, {}, scanner);
    const body = 'QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODk'.repeat(800);
    const text = `-----BEGIN PRIVATE KEY-----\n${body}`;
    pushed(guard.channel(PATH, 'text'), text, 4);
    const scanned = scanner.sizes.reduce((a, b) => a + b, 0);
    // Held from the header to the hard cap, scanned at 1.5 times the last size, then as ended: under 5 times the
    // text. A scan per push would read the held text (up to 64 kB) once per 4 characters, thousands of times.
    assert.ok(scanned < 6 * text.length, `${scanned} characters scanned (${(scanned / text.length).toFixed(2)}x)`);
  });

  it('plain text with a hold-back of 16 384 in 4-character pushes: fewer than 6 times the text scanned', () => {
    const scanner = countingOnly();
    const policy = effectiveGuardPolicy({ detectors: { email: 'mask' }, patterns: [] }, null, null);
    const guard = createAnswerGuard({ scanner, policy, settings: { scan: true, restore: false, holdBackChars: 16_384 }, book: new PlaceholderBook() });
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(2_400);
    const { given } = pushed(guard.channel(PATH, 'text'), text, 4);
    assert.equal(given, text);
    // A scan per step of 4 096: each covers the context, the held tail and the step. A scan per push would read
    // the 16 384 held characters once per 4 pushed, some 4 000 times the text.
    assert.ok(scanner.scanned < 6 * text.length, `${scanner.scanned} characters scanned (${(scanner.scanned / text.length).toFixed(2)}x)`);
    assert.equal(scanner.scans, Math.ceil((text.length - 16_384) / 4_096) + 1);
  });
});
