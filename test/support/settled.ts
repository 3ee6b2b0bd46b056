// Whether a promise has settled yet, for tests that move a ManualScheduler to
// one millisecond before a deadline and check that nothing happened.

export interface Tracked<T> {
  /** The promise itself; a rejection is still the caller's to handle. */
  readonly promise: Promise<T>;
  /** True once it resolved or rejected. */
  readonly settled: boolean;
}

export function tracked<T>(promise: Promise<T>): Tracked<T> {
  let settled = false;
  const done = (): void => {
    settled = true;
  };
  promise.then(done, done);
  return {
    promise,
    get settled() {
      return settled;
    },
  };
}
