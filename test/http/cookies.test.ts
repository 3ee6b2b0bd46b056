import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_COOKIE_HEADER_LENGTH, MAX_COOKIE_PAIRS, parseCookies, serializeCookie } from '../../src/http/cookies.ts';

function entries(header: string | undefined): Array<[string, string]> {
  return [...parseCookies(header)];
}

test('parseCookies reads name=value pairs separated by "; "', () => {
  assert.deepEqual(entries('a=1; b=two; c_3=x-y.z'), [
    ['a', '1'],
    ['b', 'two'],
    ['c_3', 'x-y.z'],
  ]);
  assert.deepEqual(entries('pc_session=Abc-_09'), [['pc_session', 'Abc-_09']]);
});

test('parseCookies: no header, empty header and only separators give an empty map', () => {
  assert.deepEqual(entries(undefined), []);
  assert.deepEqual(entries(''), []);
  assert.deepEqual(entries(' ; ;;\t'), []);
});

test('parseCookies tolerates missing or extra whitespace around pairs, not inside names', () => {
  assert.deepEqual(entries('a=1;b=2 ;\tc=3\t;  d=4  '), [
    ['a', '1'],
    ['b', '2'],
    ['c', '3'],
    ['d', '4'],
  ]);
  assert.deepEqual(entries('a =1; b= 2; c=3'), [['c', '3']]);
});

test('parseCookies: the first pair of a name wins', () => {
  assert.deepEqual(entries('s=first; s=second; t=1'), [
    ['s', 'first'],
    ['t', '1'],
  ]);
});

test('parseCookies strips one pair of quotes and keeps an empty value', () => {
  assert.deepEqual(entries('a="quoted"; b=""; c='), [
    ['a', 'quoted'],
    ['b', ''],
    ['c', ''],
  ]);
});

test('parseCookies skips malformed pairs and keeps the others', () => {
  assert.deepEqual(
    entries('noequals; =novalue; bad name=1; b@d=2; ok=1; sp=a b; comma=a,b; bs=a\\b; q="a; dq=a"b; hi=\u00e9; ctl=a\u0001; good=2'),
    [
      ['ok', '1'],
      ['good', '2'],
    ],
  );
});

test('parseCookies skips a malformed duplicate so a later good pair of that name counts', () => {
  assert.deepEqual(entries('s=bad value; s=good'), [['s', 'good']]);
});

test('parseCookies treats an over-long header as carrying no cookies', () => {
  const atLimit = 'a=' + 'x'.repeat(MAX_COOKIE_HEADER_LENGTH - 2);
  assert.equal(parseCookies(atLimit).get('a')?.length, MAX_COOKIE_HEADER_LENGTH - 2);
  assert.deepEqual(entries(atLimit + 'x'), []);
});

test('parseCookies reads at most MAX_COOKIE_PAIRS pairs, malformed ones included', () => {
  const pairs = Array.from({ length: MAX_COOKIE_PAIRS + 5 }, (_, i) => `c${i}=${i}`);
  const parsed = parseCookies(pairs.join('; '));
  assert.equal(MAX_COOKIE_PAIRS, 64);
  assert.equal(parsed.size, 64);
  assert.equal(parsed.get('c63'), '63');
  assert.equal(parsed.has('c64'), false);
  const withJunk = parseCookies(['junk', ...pairs].join('; '));
  assert.equal(withJunk.size, 63);
  assert.equal(withJunk.has('c63'), false);
});

test('serializeCookie writes the attributes in a fixed order', () => {
  assert.equal(
    serializeCookie('pc_session', 'Abc-_09', { httpOnly: true, secure: true, sameSite: 'Strict', path: '/', maxAgeSeconds: 28800 }),
    'pc_session=Abc-_09; Max-Age=28800; Path=/; HttpOnly; Secure; SameSite=Strict',
  );
  assert.equal(
    serializeCookie('pc_session', 'Abc', { httpOnly: true, secure: false, sameSite: 'Strict', path: '/admin' }),
    'pc_session=Abc; Path=/admin; HttpOnly; SameSite=Strict',
  );
  assert.equal(
    serializeCookie('pc_session', '', { httpOnly: false, secure: false, sameSite: 'Lax', path: '/', maxAgeSeconds: 0 }),
    'pc_session=; Max-Age=0; Path=/; SameSite=Lax',
  );
  assert.equal(
    serializeCookie('__Host-pc', 'v', { httpOnly: true, secure: true, sameSite: 'Strict', path: '/', maxAgeSeconds: 1 }),
    '__Host-pc=v; Max-Age=1; Path=/; HttpOnly; Secure; SameSite=Strict',
  );
});

test('a serialized cookie parses back to its value', () => {
  const value = 'q1w2e3-_R4t5Y6';
  const header = serializeCookie('s', value, { httpOnly: true, secure: false, sameSite: 'Strict', path: '/' });
  const pair = header.slice(0, header.indexOf(';'));
  assert.equal(parseCookies(pair).get('s'), value);
});

test('serializeCookie throws on what it cannot write exactly', () => {
  const base = { httpOnly: true, secure: false, sameSite: 'Strict', path: '/' } as const;
  assert.throws(() => serializeCookie('', 'v', base), { name: 'TypeError', message: 'Cookie name "" is not an RFC 9110 token' });
  assert.throws(() => serializeCookie('a b', 'v', base), { name: 'TypeError', message: 'Cookie name "a b" is not an RFC 9110 token' });
  assert.throws(() => serializeCookie('a', 'x;y', base), { name: 'TypeError', message: 'Cookie value for a contains a character outside cookie-octet' });
  assert.throws(() => serializeCookie('a', 'x y', base), TypeError);
  assert.throws(() => serializeCookie('a', 'x'.repeat(MAX_COOKIE_HEADER_LENGTH + 1), base), RangeError);
  assert.throws(() => serializeCookie('a', 'v', { ...base, path: 'admin' }), RangeError);
  assert.throws(() => serializeCookie('a', 'v', { ...base, path: '/a;b' }), {
    name: 'RangeError',
    message: 'Cookie path contains a control character, a non-ASCII character or ";"',
  });
  assert.throws(() => serializeCookie('a', 'v', { ...base, path: '/a\r\nSet-Cookie: x=1' }), RangeError);
  assert.throws(() => serializeCookie('a', 'v', { ...base, maxAgeSeconds: -1 }), { message: 'Cookie Max-Age must be a non-negative integer' });
  assert.throws(() => serializeCookie('a', 'v', { ...base, maxAgeSeconds: 1.5 }), RangeError);
  assert.throws(() => serializeCookie('__Host-a', 'v', base), { message: 'Cookie __Host-a needs the Secure attribute' });
  assert.throws(() => serializeCookie('__Secure-a', 'v', base), TypeError);
  assert.throws(() => serializeCookie('__Host-a', 'v', { ...base, secure: true, path: '/admin' }), { message: 'Cookie __Host-a needs Path=/' });
});
