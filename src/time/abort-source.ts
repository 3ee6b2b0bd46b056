// What waiting code needs of a cancellation: whether it happened, why, and a
// listener to tell. An AbortSignal has this shape; so does the HTTP shell's
// request context, which keeps its listeners itself, so a request pays for no
// AbortController (fetch, which needs a real signal, gets its exchange's own).

/** An abort listener: a function, or an object whose handleEvent is called (one object, no closure). */
export type AbortListener = ((event: { readonly type: string }) => void) | { handleEvent(event: { readonly type: string }): void };

export interface AbortSource {
  readonly aborted: boolean;
  /** Why, once aborted. */
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: AbortListener, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: AbortListener): void;
}
