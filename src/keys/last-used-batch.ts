// Last-used times of keys, batched: a request only notes the time in memory,
// and the times go to the store at most once per `flushMs` (the file store
// writes keys-last-used.json, the Redis store merges a hash). Flushes run one
// at a time; a time noted while a flush was writing stays for the next one.

interface LastUsedBatch {
  /** Notes that key `id` was used at `at` (ISO time) and schedules a flush. */
  note(id: string, at: string): void;
  /** The time noted for `id` and not yet written, if any. */
  pending(id: string): string | undefined;
  /** Writes what is noted now (after any flush under way). */
  flush(): Promise<void>;
  /** Cancels the scheduled flush and writes what is noted. */
  close(): Promise<void>;
}

interface LastUsedBatchOptions {
  flushMs: number;
  /** Writes the times; must keep the later of a stored and a given time per id. */
  write(times: ReadonlyMap<string, string>): Promise<void>;
  /** A failed scheduled flush (its times stay noted for the next one). */
  onError(error: Error): void;
}

export function createLastUsedBatch(options: LastUsedBatchOptions): LastUsedBatch {
  const noted = new Map<string, string>();
  let timer: NodeJS.Timeout | null = null;
  let chain: Promise<void> = Promise.resolve();

  async function flushOnce(): Promise<void> {
    if (noted.size === 0) return;
    const snapshot = new Map(noted);
    await options.write(snapshot);
    for (const [id, time] of snapshot) if (noted.get(id) === time) noted.delete(id);
  }

  function flush(): Promise<void> {
    const run = chain.then(flushOnce);
    chain = run.catch(() => undefined);
    return run;
  }

  return {
    note(id, at) {
      noted.set(id, at);
      if (timer !== null) return;
      timer = setTimeout(() => {
        timer = null;
        flush().catch((error: unknown) => options.onError(error as Error));
      }, options.flushMs);
      // A pending flush never keeps the process alive; close() writes what is left.
      timer.unref();
    },
    pending: (id) => noted.get(id),
    flush,
    close() {
      if (timer !== null) clearTimeout(timer);
      timer = null;
      return flush();
    },
  };
}
