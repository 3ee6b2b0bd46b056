// Ids by deadline, earliest first: a binary min-heap, so a store with many records
// finds the next one to expire without scanning them all. An id whose deadline
// changed or that was removed stays in the heap until it reaches the top; the owner
// checks each popped entry against its own records (lazy deletion).

interface Entry {
  at: number;
  id: string;
}

export class ExpiryQueue {
  readonly #heap: Entry[] = [];

  get size(): number {
    return this.#heap.length;
  }

  push(id: string, at: number): void {
    const heap = this.#heap;
    heap.push({ id, at });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((heap[parent] as Entry).at <= at) break;
      heap[i] = heap[parent] as Entry;
      i = parent;
    }
    heap[i] = { id, at };
  }

  /** The earliest deadline, or undefined when empty. */
  peek(): number | undefined {
    return this.#heap[0]?.at;
  }

  /** Removes and returns the entry with the earliest deadline. */
  pop(): Entry | undefined {
    const heap = this.#heap;
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined || heap.length === 0) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && (heap[right] as Entry).at < (heap[left] as Entry).at ? right : left;
      if ((heap[child] as Entry).at >= last.at) break;
      heap[i] = heap[child] as Entry;
      i = child;
    }
    heap[i] = last;
    return top;
  }
}
