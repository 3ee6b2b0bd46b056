import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { orderTargets } from '../../src/upstream/target-order.ts';
import { scriptedRandom, seededRandom } from './seeded-random.ts';

const never = (): number => {
  throw new Error('random must not be drawn');
};

describe('orderTargets', () => {
  test('no targets, one target: no draw', () => {
    assert.deepEqual(orderTargets([], never), []);
    assert.deepEqual(orderTargets([{ priority: 3, weight: 0 }], never), [0]);
  });

  test('priority groups, lower first; single-member groups draw nothing', () => {
    const targets = [
      { priority: 2, weight: 1 },
      { priority: 0, weight: 1 },
      { priority: 1, weight: 1 },
    ];
    assert.deepEqual(orderTargets(targets, never), [1, 2, 0]);
  });

  test('within a group, the draw picks by cumulative weight', () => {
    const targets = [
      { priority: 0, weight: 3 },
      { priority: 0, weight: 1 },
    ];
    // 0.74 * 4 = 2.96 falls in [0, 3): target 0; 0.75 * 4 = 3 falls in [3, 4): target 1.
    assert.deepEqual(orderTargets(targets, scriptedRandom([0.74])), [0, 1]);
    assert.deepEqual(orderTargets(targets, scriptedRandom([0.75])), [1, 0]);
  });

  test('three in a group: one draw per pick but the last', () => {
    const targets = [
      { priority: 0, weight: 1 },
      { priority: 0, weight: 1 },
      { priority: 0, weight: 2 },
    ];
    // 0.6 * 4 = 2.4 -> index 2 (range [2, 4)); then among [0, 1] weight 2: 0.6 * 2 = 1.2 -> index 1.
    assert.deepEqual(orderTargets(targets, scriptedRandom([0.6, 0.6])), [2, 1, 0]);
    assert.deepEqual(orderTargets(targets, scriptedRandom([0, 0])), [0, 1, 2]);
  });

  test('zero and invalid weights go last in their group, in config order', () => {
    const targets = [
      { priority: 0, weight: 0 },
      { priority: 0, weight: 5 },
      { priority: 0, weight: Number.NaN },
      { priority: 0, weight: -1 },
      { priority: 1, weight: 1 },
    ];
    assert.deepEqual(orderTargets(targets, never), [1, 0, 2, 3, 4]);
  });

  test('a non-finite priority sorts last', () => {
    const targets = [
      { priority: Number.NaN, weight: 1 },
      { priority: 5, weight: 1 },
    ];
    assert.deepEqual(orderTargets(targets, never), [1, 0]);
  });

  test('deterministic for a given random sequence', () => {
    const targets = [
      { priority: 1, weight: 2 },
      { priority: 0, weight: 1 },
      { priority: 0, weight: 1 },
      { priority: 1, weight: 7 },
      { priority: 0, weight: 4 },
    ];
    const a = seededRandom(99);
    const b = seededRandom(99);
    for (let i = 0; i < 50; i++) assert.deepEqual(orderTargets(targets, a), orderTargets(targets, b));
  });

  test('first picks follow the weights (3:1 over 4000 seeded draws)', () => {
    const targets = [
      { priority: 0, weight: 3 },
      { priority: 0, weight: 1 },
    ];
    const random = seededRandom(20240611);
    const draws = 4000;
    let heavyFirst = 0;
    for (let i = 0; i < draws; i++) if (orderTargets(targets, random)[0] === 0) heavyFirst++;
    const share = heavyFirst / draws;
    assert.ok(share > 0.72 && share < 0.78, String(share));
  });

  test('three weights 5:3:2: first-pick shares and every order is a permutation', () => {
    const targets = [
      { priority: 0, weight: 5 },
      { priority: 0, weight: 3 },
      { priority: 0, weight: 2 },
      { priority: 1, weight: 1 },
    ];
    const random = seededRandom(4242);
    const draws = 5000;
    const first = [0, 0, 0];
    for (let i = 0; i < draws; i++) {
      const order = orderTargets(targets, random);
      assert.deepEqual([...order].sort(), [0, 1, 2, 3]);
      assert.equal(order[3], 3);
      first[order[0] as number]!++;
    }
    const shares = first.map((count) => count / draws);
    assert.ok(Math.abs((shares[0] as number) - 0.5) < 0.03, String(shares));
    assert.ok(Math.abs((shares[1] as number) - 0.3) < 0.03, String(shares));
    assert.ok(Math.abs((shares[2] as number) - 0.2) < 0.03, String(shares));
  });

  test('a draw of 1 or garbage picks the first of the group', () => {
    const targets = [
      { priority: 0, weight: 1 },
      { priority: 0, weight: 1 },
    ];
    assert.deepEqual(orderTargets(targets, () => 1), [0, 1]);
    assert.deepEqual(orderTargets(targets, () => Number.NaN), [0, 1]);
  });
});
