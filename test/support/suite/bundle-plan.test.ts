import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planBundles, type PlannedFile } from './bundle-plan.ts';

const unit = (file: string, weight: number): PlannedFile => ({ file, unit: true, weight });
const system = (file: string, weight: number, shares?: string): PlannedFile => ({ file, unit: false, weight, shares });

test('unit and system files never share a bundle; each kind is dealt the longest first to the lightest bundle', () => {
  const bundles = planBundles([unit('u1', 50), unit('u2', 40), unit('u3', 30), unit('u4', 20), system('s1', 60), system('s2', 10)], 1, { unit: 2, system: 2 });
  assert.deepEqual(bundles, [
    { unit: false, files: ['s1'], weight: 60 },
    { unit: true, files: ['u1', 'u4'], weight: 70 },
    { unit: true, files: ['u2', 'u3'], weight: 70 },
    { unit: false, files: ['s2'], weight: 10 },
  ].sort((a, b) => b.weight - a.weight));
});

test('files sharing a helper go together; a group longer than a bundle\'s even share is cut', () => {
  const files = [system('b1', 30, 'chromium'), system('b2', 20, 'chromium'), system('r1', 5, 'redis-server'), system('r2', 5, 'redis-server'), system('x', 40), unit('u', 100)];
  // Systems' 100 over 2 bundles: a share is 50; chromium (50) and redis (10) stay whole.
  const bundles = planBundles(files, 2, { unit: 1, system: 1 });
  assert.deepEqual(
    bundles.map((b) => b.files),
    [['u'], ['b1', 'b2'], ['r1', 'r2', 'x']],
  );
  // 240 over 2 bundles: a share is 120; chromium's 240 goes in two parts.
  const heavy = planBundles([system('b1', 90, 'chromium'), system('b2', 80, 'chromium'), system('b3', 70, 'chromium'), unit('u', 60)], 2, { unit: 1, system: 1 });
  assert.deepEqual(heavy.filter((b) => !b.unit).map((b) => b.files), [['b2', 'b3'], ['b1']]);
});

test('never more bundles than files, none empty', () => {
  assert.deepEqual(planBundles([unit('only', 5)], 3, { unit: 2, system: 2 }), [{ unit: true, files: ['only'], weight: 5 }]);
  assert.deepEqual(planBundles([], 3, { unit: 2, system: 2 }), []);
});

test('a group is one parcel among the files: the number of bundles stays slots times perSlot', () => {
  const bundles = planBundles([system('b1', 12, 'chromium'), system('b2', 8, 'chromium'), system('x', 30), system('y', 25), system('z', 10)], 2, { unit: 1, system: 1 });
  assert.deepEqual(bundles, [
    { unit: false, files: ['b1', 'b2', 'y'], weight: 45 },
    { unit: false, files: ['x', 'z'], weight: 40 },
  ]);
});
