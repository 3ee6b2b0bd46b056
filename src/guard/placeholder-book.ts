// The placeholders of one request and its answer. The request's masking
// writes them (restorable: the client's own values, which the answer may get
// back); the answer's scan continues the same numbering, so the model and the
// client never see two values behind one placeholder. Pure, per request.

/** `card_number` -> `CARD_NUMBER`; an operator's `custom:project-x` -> `CUSTOM_PROJECT-X`: its own namespace, and
 * distinct per name (pattern names are lower-case letters, digits, `_` and `-`, so upper-casing keeps them apart). */
export function placeholderName(detector: string): string {
  return detector.startsWith('custom:') ? `CUSTOM_${detector.slice('custom:'.length).toUpperCase()}` : detector.toUpperCase();
}

/** The request's masking, shared with its answer: numbering continues; restoration reads the request's values. */
export class PlaceholderBook {
  /** Per detector: each masked value's placeholder, in order of first appearance. */
  readonly #byDetector = new Map<string, Map<string, string>>();
  /** Placeholders made for the request -> the client's value. */
  readonly #originals = new Map<string, string>();
  #longestRestorable = 0;

  /** The placeholder of `value` found by `detector` (the same value, the same one); `restorable`: made for the request. */
  placeholderFor(detector: string, value: string, restorable: boolean): string {
    let byValue = this.#byDetector.get(detector);
    if (byValue === undefined) {
      byValue = new Map();
      this.#byDetector.set(detector, byValue);
    }
    let placeholder = byValue.get(value);
    if (placeholder === undefined) {
      placeholder = `[${placeholderName(detector)}_${byValue.size + 1}]`;
      byValue.set(value, placeholder);
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
}
