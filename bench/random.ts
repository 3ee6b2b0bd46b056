// The benchmarks' seeded random numbers: the same corpus on every run and every machine.

/** xorshift32, numbers in [0, 1). */
export function createRandom(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x1_0000_0000;
  };
}
