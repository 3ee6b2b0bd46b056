// Records a client's state changes and lets a test wait for the next one it
// expects, with a bound so a broken client fails the test instead of hanging it.

import type { ClientState } from '../../src/redis/client.ts';
import { within } from '../support/eventually.ts';

export interface StateRecorder {
  onStateChange(state: ClientState, previous: ClientState): void;
  /** Every change so far, as "previous->state". */
  readonly changes: string[];
  /** Resolves when the client enters `state` (at once if the last change entered it); `boundMs` of real time only guards against a hang. */
  reach(state: ClientState, boundMs?: number): Promise<void>;
}

export function createStateRecorder(): StateRecorder {
  const changes: string[] = [];
  let current: ClientState | undefined;
  const waiters: { state: ClientState; done(): void }[] = [];
  return {
    changes,
    onStateChange(state, previous) {
      changes.push(`${previous}->${state}`);
      current = state;
      for (const waiter of waiters.splice(0)) {
        if (waiter.state === state) waiter.done();
        else waiters.push(waiter);
      }
    },
    reach(state, boundMs = 10_000) {
      if (current === state) return Promise.resolve();
      const reached = new Promise<void>((resolve) => waiters.push({ state, done: resolve }));
      return within(reached, `state ${state} (changes when asked: ${changes.join(', ')})`, boundMs);
    },
  };
}
