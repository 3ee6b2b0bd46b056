// The micro-benchmarks' timer: nanoseconds per call of `run`, the best of five
// rounds of `iterations` calls after a warm-up of a tenth as many.
export function perCall(run: () => unknown, iterations: number): number {
  for (let k = 0; k < Math.max(10, iterations / 10); k++) run();
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 5; round++) {
    const started = process.hrtime.bigint();
    for (let k = 0; k < iterations; k++) run();
    best = Math.min(best, Number(process.hrtime.bigint() - started) / iterations);
  }
  return best;
}
