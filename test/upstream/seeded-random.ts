// mulberry32: a small seeded generator, so that "random" orders and jitter are
// the same on every run.
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A random source that returns `values` in turn, then fails the test. */
export function scriptedRandom(values: readonly number[]): () => number {
  let next = 0;
  return () => {
    const value = values[next++];
    if (value === undefined) throw new Error(`scriptedRandom ran out after ${values.length} draws`);
    return value;
  };
}
