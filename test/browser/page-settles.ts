// Waiting for what the page shows, as a user would see it settle: the
// dashboard draws after its answers arrive (who is signed in, a copy to the
// clipboard), so a value read once, right after a click, may be the one from
// before. Polled, with a real-time bound that only guards against a hang.
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import type { Locator } from 'playwright-core';
import { eventually } from '../support/eventually.ts';

/** Generous: a loaded two-core machine runs Chromium slowly. */
const BOUND_MS = 20_000;
const EVERY_MS = 20;

/** Polls `read` until it gives `expected`; fails with the last value read. */
export async function settles<T>(read: () => Promise<T>, expected: T, what: string): Promise<void> {
  let last: T | undefined;
  try {
    await eventually(async () => isDeepStrictEqual((last = await read()), expected), what, { boundMs: BOUND_MS, everyMs: EVERY_MS });
  } catch {
    assert.deepEqual(last, expected, `${what}: still not what was expected after ${BOUND_MS} ms`);
  }
}

/** The element's text becomes `expected`. */
export function textSettles(locator: Locator, expected: string): Promise<void> {
  return settles(() => locator.textContent(), expected, `the text of ${String(locator)}`);
}
