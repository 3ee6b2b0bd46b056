import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createBootstrapToken } from '../../src/admin/bootstrap-token.ts';

/** Returns the bytes 0, 1, 2, ... 255, 0, 1, ... in order. */
function sequentialRandom(): (size: number) => Buffer {
  let next = 0;
  return (size) => Buffer.from(Array.from({ length: size }, () => next++ % 256));
}

test('the token is pcb_ followed by 32 base62 characters from the random bytes', () => {
  const bootstrap = createBootstrapToken(sequentialRandom());
  assert.equal(bootstrap.token, 'pcb_0123456789ABCDEFGHIJKLMNOPQRSTUV');
  assert.equal(bootstrap.consumed, false);
});

test('bytes at or above 248 are skipped so no character is favoured', () => {
  const bytes = [248, 255, 61, 62, 249, ...Array.from({ length: 59 }, () => 1)];
  const bootstrap = createBootstrapToken((size) => Buffer.from(bytes.splice(0, size)));
  assert.equal(bootstrap.token, 'pcb_z0' + '1'.repeat(30));
});

test('a random source that never yields usable bytes is an error, not an endless loop', () => {
  assert.throws(() => createBootstrapToken((size) => Buffer.alloc(size, 255)), { message: 'random source kept returning unusable bytes' });
});

test('real tokens match the format and differ', () => {
  const a = createBootstrapToken().token;
  const b = createBootstrapToken().token;
  assert.match(a, /^pcb_[0-9A-Za-z]{32}$/);
  assert.notEqual(a, b);
});

test('consume accepts the token once, then refuses it', () => {
  const bootstrap = createBootstrapToken();
  assert.equal(bootstrap.consume(bootstrap.token), true);
  assert.equal(bootstrap.consumed, true);
  assert.equal(bootstrap.consume(bootstrap.token), false);
});

test('wrong candidates are refused and do not use the token up', () => {
  const bootstrap = createBootstrapToken();
  const { token } = bootstrap;
  for (const candidate of ['', token.slice(0, -1), token + 'x', token.toLowerCase() === token ? 'pcb_x' : token.toLowerCase(), ` ${token}`, 'x'.repeat(10_000)]) {
    assert.equal(bootstrap.consume(candidate), false, candidate.slice(0, 40));
  }
  assert.equal(bootstrap.consume(undefined as unknown as string), false);
  assert.equal(bootstrap.consumed, false);
  assert.equal(bootstrap.consume(token), true);
});
