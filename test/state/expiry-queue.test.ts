import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ExpiryQueue } from '../../src/state/expiry-queue.ts';

test('pops in deadline order, whatever order the pushes came in, duplicates included', () => {
  // A fixed pseudo-random sequence: the same case on every run.
  let seed = 7;
  const next = (): number => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % 1000;
  const queue = new ExpiryQueue();
  const pushed: number[] = [];
  for (let i = 0; i < 500; i++) {
    const at = next();
    pushed.push(at);
    queue.push(`id_${i}`, at);
  }
  assert.equal(queue.size, 500);
  const popped: number[] = [];
  for (let entry = queue.pop(); entry !== undefined; entry = queue.pop()) {
    assert.equal(pushed[Number(entry.id.slice(3))], entry.at, 'an id keeps its own deadline');
    popped.push(entry.at);
  }
  assert.deepEqual(popped, [...pushed].sort((a, b) => a - b));
  assert.equal(queue.peek(), undefined);
  assert.equal(queue.pop(), undefined);
});

test('peek is the earliest deadline as pushes and pops interleave', () => {
  const queue = new ExpiryQueue();
  queue.push('a', 30);
  queue.push('b', 10);
  assert.equal(queue.peek(), 10);
  queue.push('c', 20);
  assert.deepEqual(queue.pop(), { id: 'b', at: 10 });
  assert.equal(queue.peek(), 20);
  queue.push('d', 5);
  assert.deepEqual([queue.pop()?.id, queue.pop()?.id, queue.pop()?.id, queue.pop()], ['d', 'c', 'a', undefined]);
});
