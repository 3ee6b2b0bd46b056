// Waiting in tests for something that happens on the event loop (a log line
// written, a socket closed, a key seen by another instance). The bound is
// real time but only a guard against a hang, never an assertion about speed:
// a test that needs a deadline moves a ManualScheduler instead.

/** Polls `check` every `everyMs` until it holds; fails naming `what` after `boundMs` of real time. */
export async function eventually(check: () => boolean | Promise<boolean>, what: string, options: { boundMs?: number; everyMs?: number } = {}): Promise<void> {
  const boundMs = options.boundMs ?? 10_000;
  const everyMs = options.everyMs ?? 5;
  const giveUpAt = performance.now() + boundMs;
  for (;;) {
    if (await check()) return;
    if (performance.now() > giveUpAt) throw new Error(`timed out after ${boundMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** `promise`, or a failure naming `what` after `boundMs` of real time: a test never waits unbounded. */
export async function within<T>(promise: Promise<T>, what: string, boundMs = 10_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${boundMs} ms waiting for ${what}`)), boundMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
