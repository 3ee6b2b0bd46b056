// SIGHUPs coalesce: signals during a reload run exactly one more after it,
// and none is started once a shutdown began.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createReloader } from '../../src/cli/serve-reloader.ts';

function gate(): { wait: Promise<void>; open(): void } {
  let open: () => void = () => undefined;
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

test('three signals during a reload run one more after it; a signal once stopping runs none', async () => {
  const gates = [gate(), gate()];
  let runs = 0;
  let stopping = false;
  const reloader = createReloader({
    reload: async () => {
      const mine = gates[runs];
      runs += 1;
      await mine?.wait;
    },
    outcome: () => undefined,
    stopping: () => stopping,
  });
  reloader.request();
  assert.equal(runs, 1);
  reloader.request();
  reloader.request();
  reloader.request();
  assert.equal(runs, 1);
  gates[0]?.open();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(runs, 2);
  gates[1]?.open();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(runs, 2);
  stopping = true;
  reloader.request();
  assert.equal(runs, 2);
});

test('each reload that ends before a shutdown tells its outcome; one that ends after the shutdown began tells none', async () => {
  const gates = [gate(), gate()];
  let runs = 0;
  let stopping = false;
  const outcomes: string[] = [];
  const reloader = createReloader({
    reload: async () => {
      const mine = gates[runs];
      runs += 1;
      await mine?.wait;
      return `reload ${runs}`;
    },
    outcome: (result) => void outcomes.push(result),
    stopping: () => stopping,
  });
  reloader.request();
  gates[0]?.open();
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(outcomes, ['reload 1']);
  reloader.request();
  assert.equal(runs, 2);
  stopping = true;
  gates[1]?.open();
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(outcomes, ['reload 1']);
});
