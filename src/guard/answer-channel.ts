// One text of a streamed answer through the guard: the received text not yet
// released is held; each push releases all but its last `holdBack`
// characters, less what a finding or a placeholder still reaching into that
// tail needs, and never part of a run of token characters (a key, a JWT, a
// base64 blob: held from its start until it ends, up to a hard cap). A
// finding is applied only once it lies wholly before the held tail, so a
// value split over pushes is treated exactly as in the whole text when it is
// one token, or becomes recognisable within `holdBack` characters of its
// start (a private key needs its header and 64 characters of body, about
// 100; an operator regex match over several words can be longer, and a
// stream may release part of one before it is recognised).
import type { GuardFinding } from './body-guard.ts';
import type { GuardAction } from './guard-policy.ts';
import { jsonAdvance, jsonEscape, jsonReplace, JsonState, jsonView } from './json-text.ts';
import type { PlaceholderBook } from './placeholder-book.ts';
import { isWord } from './text-checks.ts';

/** text: plain text. json: JSON source text (tool-call arguments, tool_use input_json): a restored value is
 * JSON-escaped; a mask outside a JSON string goes in as a JSON string so the JSON stays valid. signed: scanned,
 * never changed (a mask is recorded as log; a block still cuts).
 * A json channel is scanned as a view of its source of the same length (jsonView): each ordinary escape (`\n`,
 * `\t`, `\"`, ...) reads as the boundary it stands for, so a value on its own line of a multi-line argument is
 * found, and a finding's offsets are the source's. `\/` and `\uXXXX` stay as written: a value written with them
 * (`bob\u0040example.com`, `\u0041KIA...`) is not found. The guard is there for values a model repeats by
 * accident, which come as plain characters; decoding every stream's JSON to catch deliberate encodings would not
 * stop a model told to encode another way. */
export type ChannelKind = 'text' | 'json' | 'signed';

export interface AnswerChannel {
  /** Text that may go out now (scanned, masked, restored); '' when all of it is held. After a block: always ''. */
  push(text: string): string;
  /** The channel ended: the rest (held text, scanned as ended). */
  end(): string;
  /** A block finding stopped this channel: what came before it was given, nothing after. */
  readonly blocked: boolean;
}

/** Held text per channel at most: a finding that reaches past it is not waited for; the text so far is scanned as ended. */
export const MAX_HELD_CHARS = 65_536;

/**
 * Released text kept before the held text and scanned with it, never released again: detectors that read
 * before a value see what the whole text shows them (an AWS secret up to 200 characters after its id, a
 * phone number's context word up to 40 before it, an assignment's name). A detector that needs more than
 * this before a value misses it in a stream where the whole text would not.
 */
export const CONTEXT_CHARS = 256;

/** A finding in a channel's held text: offsets into it. */
export interface Hit {
  readonly detector: string;
  readonly start: number;
  readonly end: number;
  readonly action: GuardAction;
}

/** A restorable placeholder in a channel's held text. */
export interface Span {
  readonly start: number;
  readonly end: number;
  readonly original: string;
}

export const NO_HITS: readonly Hit[] = [];
export const NO_SPANS: readonly Span[] = [];

/** What a channel needs from its answer's guard. */
export interface ChannelHost {
  readonly book: PlaceholderBook;
  /** Characters held back per push (0 when only restoring: only an unfinished placeholder is held). */
  readonly holdBack: number;
  /** Characters pushed between two scans at least (0: a scan per push): a stream of token-sized pushes is
   * scanned once per step, not once per token, each scan covering the context and the held tail again. */
  readonly releaseStep: number;
  readonly scanning: boolean;
  restoring(kind: ChannelKind): boolean;
  /** The findings of `context + held` that start in `held`, with their action, offsets into `held`. */
  hits(context: string, held: string): readonly Hit[];
  /** The request's placeholders in `text`, in order. */
  spans(text: string): readonly Span[];
  record(finding: GuardFinding): void;
}

export class TextChannel implements AnswerChannel {
  readonly #guard: ChannelHost;
  readonly #path: string;
  readonly #kind: ChannelKind;
  /** Text received and not yet released. */
  #held = '';
  /** The end of the released text as scanned (as received; for json, its view), at most CONTEXT_CHARS of it. */
  #context = '';
  /** False once the context lost its beginning: the scan then starts after its first character that is not a
   * word character, at a word's start, as the scanner's pass would (not inside a word it passed by). */
  #contextWhole = true;
  /** Characters pushed since the last scan. */
  #sinceScan = 0;
  /** For json: the lexical state where the held text begins. */
  #json: number = JsonState.Out;
  #blocked = false;

  constructor(guard: ChannelHost, path: string, kind: ChannelKind) {
    this.#guard = guard;
    this.#path = path;
    this.#kind = kind;
  }

  get blocked(): boolean {
    return this.#blocked;
  }

  /** Characters held back now (for tests of the bound). */
  get heldChars(): number {
    return this.#held.length;
  }

  push(text: string): string {
    if (this.#blocked || text === '') return '';
    const guard = this.#guard;
    if (!guard.scanning && !guard.restoring(this.#kind)) return text;
    this.#held += text;
    this.#sinceScan += text.length;
    return this.#release(false);
  }

  end(): string {
    if (this.#blocked) return '';
    const out = this.#held === '' ? '' : this.#release(true);
    this.#held = '';
    this.#sinceScan = 0;
    this.#context = '';
    this.#contextWhole = true;
    this.#json = JsonState.Out;
    return out;
  }

  /** A whole text: released as ended. */
  finish(text: string): string {
    this.#held = text;
    return this.end();
  }

  /** Releases what the rules allow: all of it when `ended`, else all but the held tail. */
  #release(ended: boolean): string {
    const guard = this.#guard;
    const held = this.#held;
    if (!ended) {
      if (guard.holdBack > 0 && held.length <= guard.holdBack) return '';
      // Scanned again only after a step of new text, and after at least half as much again as a finding already
      // held from its start (a long value arriving in small pieces is scanned a logarithmic number of times,
      // not once per piece); never past the hard cap unscanned.
      const waited = held.length - this.#sinceScan - guard.holdBack;
      if (this.#sinceScan < Math.max(guard.releaseStep, waited >> 1) && held.length <= MAX_HELD_CHARS) return '';
    }
    this.#sinceScan = 0;
    const json = this.#kind === 'json' && guard.scanning;
    const scanned = json ? jsonView(this.#json, held) : held;
    const hits = guard.hits(this.#scanContext(), scanned);
    const restoring = guard.restoring(this.#kind);
    const spans = restoring ? guard.spans(held) : NO_SPANS;
    const kept = spans.length === 0 ? hits : withoutOverlaps(hits, spans);
    let limit = ended ? held.length : held.length - guard.holdBack;
    if (!ended) {
      // A finding reaching into the held tail may still grow: held from its start.
      for (const hit of kept) {
        if (hit.end > limit) {
          limit = Math.min(limit, hit.start);
          break;
        }
      }
      for (const span of spans) if (span.start < limit && span.end > limit) limit = span.start;
      if (restoring) {
        const open = held.lastIndexOf('[');
        if (open !== -1 && open < limit && held.indexOf(']', open) === -1 && held.length - open < guard.book.longestRestorable) limit = open;
      }
      // Never part of a token: a limit inside a run of token characters moves back to the run's start, so a key
      // or a JWT of any length is scanned whole before any of it goes out (a run past the hard cap is scanned as
      // ended). Scanning only, with its hold-back: restoring alone has no tail to cut a token in.
      if (guard.holdBack > 0 && limit > 0 && isTokenChar(held.charCodeAt(limit)) && isTokenChar(held.charCodeAt(limit - 1))) {
        limit = tokenRunStart(held, limit);
      }
      // A surrogate pair goes out whole: a client decoding each chunk on its own would see two broken characters.
      // Only the tail rule can put the limit inside a pair (nothing a finding or placeholder starts with is a
      // low surrogate), so taking the pair out holds one character less, never more; a high surrogate that
      // ends the text so far (restoring alone holds no tail) waits for its other half.
      if (limit > 0 && isHighSurrogate(held.charCodeAt(limit - 1))) {
        if (isLowSurrogate(held.charCodeAt(limit))) limit++;
        else if (limit === held.length) limit--;
      }
      // Never between an escape's backslash and its letter: the backslash's view depends on the letter.
      if (json && limit > 0 && jsonAdvance(this.#json, held, 0, limit) === JsonState.Escape) limit--;
      for (const hit of kept) if (hit.start < limit && hit.end > limit) limit = hit.start;
      if (held.length - limit > MAX_HELD_CHARS) return this.#release(true);
      if (limit <= 0) return '';
    }
    return this.#commit(held, scanned, limit, kept, spans);
  }

  /** The released context the scan starts from. */
  #scanContext(): string {
    const context = this.#context;
    if (this.#contextWhole || context === '') return context;
    for (let i = 0; i < context.length; i++) if (!isWord(context.charCodeAt(i))) return context.slice(i + 1);
    return context;
  }

  /** Releases `held[0, limit)`: findings recorded and applied, placeholders restored; `scanned` is what was scanned of it. */
  #commit(held: string, scanned: string, limit: number, hits: readonly Hit[], spans: readonly Span[]): string {
    const guard = this.#guard;
    const json = this.#kind === 'json';
    const signed = this.#kind === 'signed';
    let state = this.#json;
    let out = '';
    let from = 0;
    let h = 0;
    let p = 0;
    for (;;) {
      const hit = h < hits.length && (hits[h] as Hit).start < limit ? (hits[h] as Hit) : null;
      const span = p < spans.length && (spans[p] as Span).start < limit ? (spans[p] as Span) : null;
      if (hit === null && span === null) break;
      const start = hit !== null && (span === null || hit.start < span.start) ? hit.start : (span as Span).start;
      out += held.slice(from, start);
      if (json) state = jsonAdvance(state, held, from, start);
      let end: number;
      if (hit !== null && hit.start === start) {
        h++;
        end = hit.end;
        const action = signed && hit.action === 'mask' ? 'log' : hit.action;
        if (action !== 'off') guard.record({ detector: hit.detector, path: this.#path, action });
        if (action === 'block') {
          this.#blocked = true;
          this.#held = '';
          this.#context = '';
          return out;
        }
        if (action === 'mask') {
          const placeholder = guard.book.placeholderFor(hit.detector, held.slice(start, end), false);
          out += json ? jsonReplace(state, held, start, end, placeholder) : placeholder;
        } else out += held.slice(start, end);
      } else {
        const restored = span as Span;
        p++;
        end = restored.end;
        out += json ? jsonReplace(state, held, start, end, jsonEscape(restored.original)) : restored.original;
      }
      if (json) state = jsonAdvance(state, held, start, end);
      from = end;
    }
    out += held.slice(from, limit);
    if (json) this.#json = jsonAdvance(state, held, from, limit);
    this.#held = held.slice(limit);
    const context = this.#context + scanned.slice(0, limit);
    if (context.length > CONTEXT_CHARS) {
      this.#context = context.slice(context.length - CONTEXT_CHARS);
      this.#contextWhole = false;
    } else this.#context = context;
    return out;
  }
}

/** A character of a token a stream must not cut: `[A-Za-z0-9]` and `_ - . + / = ~ %` (keys, JWTs, base64, URLs' parts). */
function isTokenChar(code: number): boolean {
  if (isWord(code)) return true;
  return code === 0x2d || code === 0x2e || code === 0x2b || code === 0x2f || code === 0x3d || code === 0x7e || code === 0x25;
}

/** The start of the run of token characters that `held[at - 1]` is in. */
function tokenRunStart(held: string, at: number): number {
  let start = at - 1;
  while (start > 0 && isTokenChar(held.charCodeAt(start - 1))) start--;
  return start;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** `hits` without those overlapping a restorable placeholder: the placeholder is the client's, not the model's. */
function withoutOverlaps(hits: readonly Hit[], spans: readonly Span[]): readonly Hit[] {
  if (hits.length === 0) return hits;
  const kept: Hit[] = [];
  let p = 0;
  for (const hit of hits) {
    while (p < spans.length && (spans[p] as Span).end <= hit.start) p++;
    const span = spans[p];
    if (span !== undefined && span.start < hit.end) continue;
    kept.push(hit);
  }
  return kept;
}
