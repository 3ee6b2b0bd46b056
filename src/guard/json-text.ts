// Where a position of JSON source text stands (outside strings, inside one,
// after a backslash, inside a \uXXXX escape) and how a replacement keeps the
// text valid JSON there: tool-call arguments arrive as JSON source text, and
// the answer guard puts placeholders and restored values into it.

/** Lexical states: outside a string, inside one, after its backslash; 3 + k: k hex digits of a \u escape to come. */
export const JsonState = { Out: 0, In: 1, Escape: 2 } as const;
const UNICODE_BASE = 3;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LOWER_U = 0x75;

/** The state after `code` read in `state`. */
export function jsonStep(state: number, code: number): number {
  switch (state) {
    case JsonState.Out:
      return code === QUOTE ? JsonState.In : JsonState.Out;
    case JsonState.In:
      return code === BACKSLASH ? JsonState.Escape : code === QUOTE ? JsonState.Out : JsonState.In;
    case JsonState.Escape:
      return code === LOWER_U ? UNICODE_BASE + 4 : JsonState.In;
    default:
      return state === UNICODE_BASE + 1 ? JsonState.In : state - 1;
  }
}

/** The state after `text[from, to)` read in `state`. */
export function jsonAdvance(state: number, text: string, from: number, to: number): number {
  let s = state;
  for (let i = from; i < to; i++) s = jsonStep(s, text.charCodeAt(i));
  return s;
}

/** `value` as the inside of a JSON string: quotes, backslashes, control characters and U+2028/U+2029 escaped. */
export function jsonEscape(value: string): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    let escaped: string | null = null;
    if (code === QUOTE) escaped = '\\"';
    else if (code === BACKSLASH) escaped = '\\\\';
    else if (code === 0x0a) escaped = '\\n';
    else if (code === 0x0d) escaped = '\\r';
    else if (code === 0x09) escaped = '\\t';
    else if (code < 0x20 || code === 0x2028 || code === 0x2029) escaped = `\\u${code.toString(16).padStart(4, '0')}`;
    if (escaped === null) continue;
    out += value.slice(from, i) + escaped;
    from = i + 1;
  }
  return from === 0 ? value : out + value.slice(from);
}

/** What closes an escape left open before a replacement (its backslash or \u digits already written). */
function closeOpenEscape(state: number): string {
  if (state === JsonState.Escape) return '\\';
  if (state > JsonState.Escape) return '0'.repeat(state - UNICODE_BASE);
  return '';
}

/** What opens the escape the text after a replacement continues (its escaped character or remaining \u digits). */
function reopenEscape(state: number): string {
  if (state === JsonState.Escape) return '\\';
  if (state > JsonState.Escape) return `\\u${'0'.repeat(4 - (state - UNICODE_BASE))}`;
  return '';
}

/**
 * `text[start, end)`, read from `state`, replaced by the string `inner` (already JSON-escaped) so the
 * whole stays valid JSON: inside a string `inner` takes the span's place; a span outside strings becomes
 * the string `"inner"`; a span across string boundaries keeps its quotes and what lies outside strings,
 * and `inner` takes the place of its first string content (what is outside strings stays as it was).
 * An escape open where the span starts (a value found from the character after its backslash) is completed
 * from the span first: the text before the value keeps its meaning (`x\n` stays a newline).
 */
export function jsonReplace(state: number, text: string, start: number, end: number, inner: string): string {
  let s = state;
  let from = start;
  let out = '';
  while (from < end && s >= JsonState.Escape) {
    out += text[from];
    s = jsonStep(s, text.charCodeAt(from));
    from++;
  }
  // A span that ends inside the escape it started in: the escape is closed, and reopened after `inner`.
  out += closeOpenEscape(s);
  let crosses = false;
  for (let i = from; i < end; i++) if (text.charCodeAt(i) === QUOTE) crosses = true;
  if (!crosses) {
    if (s === JsonState.Out) return `${out}"${inner}"`;
    return out + inner + reopenEscape(jsonAdvance(s, text, from, end));
  }
  let placed = false;
  for (let i = from; i < end; i++) {
    const code = text.charCodeAt(i);
    const before = s;
    s = jsonStep(before, code);
    if (before === JsonState.Out) out += text[i];
    else if (before === JsonState.In && code === QUOTE) out += '"';
    else if (!placed) {
      out += inner;
      placed = true;
    }
  }
  return out + reopenEscape(s);
}

/**
 * What each two-character escape reads as in the scanned view: the boundary it stands for, so a value right after
 * it starts a word (`\n4111 ...` is a card on its own line, not `n4111`). A line break is one break (CR LF), not a
 * blank line; an escaped quote or backslash is a space then the character, so `KEY=\"value\"` reads as
 * `KEY= "value "` to a detector that looks for a quoted value. `\/` and `\uXXXX` stay as written: nobody writes
 * them by accident, and a model told to encode a value would not be stopped by decoding one encoding.
 */
const ESCAPE_VIEWS: ReadonlyMap<number, string> = new Map([
  [0x6e, '\r\n'], // \n
  [0x72, '\r\r'], // \r
  [0x74, '\t\t'], // \t
  [0x62, '\b\b'], // \b
  [0x66, '\f\f'], // \f
  [QUOTE, ' "'],
  [BACKSLASH, ' \\'],
]);

/**
 * The view of JSON source `text` read from `state` that detectors scan: the same length, each ordinary escape
 * (`\n \r \t \b \f \" \\`) replaced by its two characters from ESCAPE_VIEWS, all else as written, so a finding's
 * offsets in the view are its offsets in the source. A text read from inside an escape (`state` Escape) starts
 * with the second character of its view.
 */
export function jsonView(state: number, text: string): string {
  let out = '';
  let from = 0;
  let s = state;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (s === JsonState.Escape) {
      const view = ESCAPE_VIEWS.get(code);
      if (view !== undefined) {
        const at = i === 0 ? 0 : i - 1;
        out += text.slice(from, at) + (i === 0 ? view.slice(1) : view);
        from = i + 1;
      }
    }
    s = jsonStep(s, code);
  }
  return from === 0 ? text : out + text.slice(from);
}
