// Records a client's state changes and lets a test wait for the next one it
// expects, with a bound so a broken client fails the test instead of hanging it.

import type { ClientState } from '../../src/redis/client.ts';

export interface StateRecorder {
  onStateChange(state: ClientState, previous: ClientState): void;
  /** Every change so far, as "previous->state". */
  readonly changes: string[];
  /** Resolves when the client enters `state` (at once if the last change entered it). */
  reach(state: ClientState, timeoutMs?: number): Promise<void>;
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
    reach(state, timeoutMs = 5000) {
      if (current === state) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`state ${state} not reached in ${timeoutMs} ms; changes: ${changes.join(', ')}`)), timeoutMs);
        waiters.push({
          state,
          done: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
  };
}
