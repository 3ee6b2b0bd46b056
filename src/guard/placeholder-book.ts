// The placeholders of one request and its answer. The request's masking
// writes them (restorable: the client's own values, which the answer may get
// back); the answer's scan continues the same numbering, so the model and the
// client never see two values behind one placeholder. A placeholder the body
// already holds (a stored turn's masked text sent again) is reserved: no value
// of this request gets it, and it is not restored (its value is not known
// here). Pure, per request.

/** `card_number` -> `CARD_NUMBER`; an operator's `custom:project-x` -> `CUSTOM_PROJECT-X`: its own namespace, and
 * distinct per name (pattern names are lower-case letters, digits, `_` and `-`, so upper-casing keeps them apart). */
export function placeholderName(detector: string): string {
  return detector.startsWith('custom:') ? `CUSTOM_${detector.slice('custom:'.length).toUpperCase()}` : detector.toUpperCase();
}

/** A placeholder's shape: `[NAME_n]`. A number of more than 9 digits is never one the book would reach. */
const PLACEHOLDER_SHAPE = /^\[([A-Z][A-Z0-9_-]*)_([1-9][0-9]{0,8})\]$/;
/** The longest placeholder: `[CUSTOM_` + a 64-character pattern name + `_` + 9 digits + `]`. */
const MAX_PLACEHOLDER_CHARS = 1 + 7 + 64 + 1 + 9 + 1;

/** One detector's placeholders: each masked value's, in order of first appearance, and the last number given. */
interface Numbering {
  readonly byValue: Map<string, string>;
  last: number;
}

/** The request's masking, shared with its answer: numbering continues; restoration reads the request's values. */
export class PlaceholderBook {
  readonly #byDetector = new Map<string, Numbering>();
  /** Placeholders made for the request -> the client's value. */
  readonly #originals = new Map<string, string>();
  /** Per placeholder name: the highest number a text of the body already uses. */
  readonly #reserved = new Map<string, number>();
  /** Bodies whose placeholders are reserved before the next number is given (read once, when one is needed). */
  #pending: unknown[] = [];
  #longestRestorable = 0;

  /** The placeholders already in `body` (any string or key in it) are given to no value: read when the first is made. */
  reserveFrom(body: unknown): void {
    this.#pending.push(body);
  }

  /** The placeholder of `value` found by `detector` (the same value, the same one); `restorable`: made for the request. */
  placeholderFor(detector: string, value: string, restorable: boolean): string {
    if (this.#pending.length > 0) this.#readPending();
    let numbering = this.#byDetector.get(detector);
    if (numbering === undefined) {
      numbering = { byValue: new Map(), last: 0 };
      this.#byDetector.set(detector, numbering);
    }
    let placeholder = numbering.byValue.get(value);
    if (placeholder === undefined) {
      const name = placeholderName(detector);
      numbering.last = Math.max(numbering.last, this.#reserved.get(name) ?? 0) + 1;
      placeholder = `[${name}_${numbering.last}]`;
      numbering.byValue.set(value, placeholder);
    }
    if (restorable && !this.#originals.has(placeholder)) {
      this.#originals.set(placeholder, value);
      if (placeholder.length > this.#longestRestorable) this.#longestRestorable = placeholder.length;
    }
    return placeholder;
  }

  /** The request's original for a placeholder it made; undefined for any other text. */
  originalOf(placeholder: string): string | undefined {
    return this.#originals.get(placeholder);
  }

  /** True when the request masked anything (restoration has something to do). */
  get hasRestorable(): boolean {
    return this.#originals.size > 0;
  }

  /** The length of the longest restorable placeholder (0: none): how far back a stream holds an unfinished `[`. */
  get longestRestorable(): number {
    return this.#longestRestorable;
  }

  #readPending(): void {
    const stack = this.#pending;
    this.#pending = [];
    // Iterative: a body's depth is the parser's to limit, not the call stack's.
    while (stack.length > 0) {
      const value = stack.pop();
      if (typeof value === 'string') this.#reserveIn(value);
      else if (Array.isArray(value)) for (const item of value) stack.push(item);
      else if (typeof value === 'object' && value !== null) {
        for (const key of Object.keys(value)) {
          this.#reserveIn(key);
          stack.push((value as Record<string, unknown>)[key]);
        }
      }
    }
  }

  #reserveIn(text: string): void {
    let close = -1;
    for (let open = text.indexOf('['); open !== -1; open = text.indexOf('[', open + 1)) {
      // The next `]` found once for every `[` before it: linear however many `[` there are.
      if (close < open) close = text.indexOf(']', open);
      if (close === -1) return;
      if (close - open + 1 > MAX_PLACEHOLDER_CHARS) continue;
      const match = PLACEHOLDER_SHAPE.exec(text.slice(open, close + 1));
      if (match === null) continue;
      const name = match[1] as string;
      const number = Number(match[2]);
      if (number > (this.#reserved.get(name) ?? 0)) this.#reserved.set(name, number);
    }
  }
}
