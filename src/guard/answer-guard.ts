// The guard over an answer's texts, pure: the request's policy applied to what
// the model says (log, mask with the request's numbering, block by cutting the
// text before the finding) and the request's masked values restored where the
// answer names their placeholders. A streamed text goes through a channel that
// holds back its last `holdBackChars` characters, so a value split over chunks
// is found exactly as in the whole text; restored values are never scanned
// (they came from the client). Findings carry the detector, the path and the
// action, never the text.
import type { GuardFinding } from './body-guard.ts';
import type { AnswerGuardSettings, GuardAction, GuardPolicy } from './guard-policy.ts';
import type { Finding, GuardScanner } from './guard-types.ts';
import { jsonAdvance, jsonEscape, jsonReplace, JsonState } from './json-text.ts';
import type { PlaceholderBook } from './placeholder-book.ts';

export { PlaceholderBook } from './placeholder-book.ts';

/** text: plain text. json: JSON source text (tool-call arguments, tool_use input_json): a restored value is
 * JSON-escaped; a mask outside a JSON string goes in as a JSON string so the JSON stays valid. signed: scanned,
 * never changed (a mask is recorded as log; a block still cuts). */
export type ChannelKind = 'text' | 'json' | 'signed';

export interface AnswerChannel {
  /** Text that may go out now (scanned, masked, restored); '' when all of it is held. After a block: always ''. */
  push(text: string): string;
  /** The channel ended: the rest (held text, scanned as ended). */
  end(): string;
  /** A block finding stopped this channel: what came before it was given, nothing after. */
  readonly blocked: boolean;
}

export interface AnswerGuard {
  /** A stream's channel; `path` names it in findings (`answer.choices[0].delta.content`). */
  channel(path: string, kind: ChannelKind): AnswerChannel;
  /** A whole text (non-streamed answer), same rules: `blocked` when cut before a finding. */
  whole(path: string, kind: ChannelKind, text: string): { readonly text: string; readonly blocked: boolean };
  /** Findings so far, in order; the caller records them once (drain returns and clears). */
  drain(): GuardFinding[];
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

export function createAnswerGuard(options: { scanner: GuardScanner; policy: GuardPolicy; settings: AnswerGuardSettings; book: PlaceholderBook }): AnswerGuard {
  return new Guard(options.scanner, options.policy, options.settings, options.book);
}

/** A finding in a channel's held text: offsets into it. */
interface Hit {
  readonly detector: string;
  readonly start: number;
  readonly end: number;
  readonly action: GuardAction;
}

/** A restorable placeholder in a channel's held text. */
interface Span {
  readonly start: number;
  readonly end: number;
  readonly original: string;
}

const NO_HITS: readonly Hit[] = [];
const NO_SPANS: readonly Span[] = [];

class Guard implements AnswerGuard {
  readonly scanner: GuardScanner;
  readonly policy: GuardPolicy;
  readonly book: PlaceholderBook;
  readonly scanning: boolean;
  readonly restore: boolean;
  readonly holdBack: number;
  findings: GuardFinding[] = [];
  readonly #scanned: Finding[] = [];

  constructor(scanner: GuardScanner, policy: GuardPolicy, settings: AnswerGuardSettings, book: PlaceholderBook) {
    this.scanner = scanner;
    this.policy = policy;
    this.book = book;
    this.scanning = settings.scan && policy.active;
    this.restore = settings.restore;
    // Restoring alone holds only an unfinished placeholder.
    this.holdBack = this.scanning ? settings.holdBackChars : 0;
  }

  channel(path: string, kind: ChannelKind): AnswerChannel {
    return new Channel(this, path, kind);
  }

  whole(path: string, kind: ChannelKind, text: string): { readonly text: string; readonly blocked: boolean } {
    if (!this.scanning && !this.restoring(kind)) return { text, blocked: false };
    const channel = new Channel(this, path, kind);
    const out = channel.finish(text);
    return { text: out, blocked: channel.blocked };
  }

  drain(): GuardFinding[] {
    const findings = this.findings;
    this.findings = [];
    return findings;
  }

  restoring(kind: ChannelKind): boolean {
    return this.restore && kind !== 'signed' && this.book.hasRestorable;
  }

  /** The findings of `context + held` that start in `held`, with their action (not off), offsets into `held`. */
  hits(context: string, held: string): readonly Hit[] {
    if (!this.scanning) return NO_HITS;
    const scanned = this.#scanned;
    scanned.length = 0;
    this.scanner.scan(context === '' ? held : context + held, scanned);
    if (scanned.length === 0) return NO_HITS;
    const hits: Hit[] = [];
    const offset = context.length;
    for (const found of scanned) {
      if (found.start < offset) continue;
      const action = this.policy.actionOf(found.detector);
      if (action === 'off') continue;
      hits.push({ detector: found.detector, start: found.start - offset, end: found.end - offset, action });
    }
    scanned.length = 0;
    return hits;
  }

  /** The request's placeholders in `text`, in order. */
  spans(text: string): readonly Span[] {
    const longest = this.book.longestRestorable;
    let spans: Span[] | null = null;
    let close = -1;
    for (let open = text.indexOf('['); open !== -1; open = text.indexOf('[', open + 1)) {
      if (close < open) close = text.indexOf(']', open);
      if (close === -1) break;
      if (close - open + 1 > longest) continue;
      const original = this.book.originalOf(text.slice(open, close + 1));
      if (original === undefined) continue;
      (spans ??= []).push({ start: open, end: close + 1, original });
      open = close;
    }
    return spans ?? NO_SPANS;
  }
}

const WHITESPACE = /[ \t\n\r]/;

class Channel implements AnswerChannel {
  readonly #guard: Guard;
  readonly #path: string;
  readonly #kind: ChannelKind;
  /** Text received and not yet released. */
  #held = '';
  /** The end of the released text (raw, as received), at most CONTEXT_CHARS of it. */
  #context = '';
  /** False once the context lost its beginning: the scan then starts after its first whitespace, at a word's start. */
  #contextWhole = true;
  /** For json: the lexical state where the held text begins. */
  #json: number = JsonState.Out;
  #blocked = false;

  constructor(guard: Guard, path: string, kind: ChannelKind) {
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
    return this.#release(false);
  }

  end(): string {
    if (this.#blocked) return '';
    const out = this.#held === '' ? '' : this.#release(true);
    this.#held = '';
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
    if (!ended && guard.holdBack > 0 && held.length <= guard.holdBack) return '';
    const hits = guard.hits(this.#scanContext(), held);
    const restoring = guard.restoring(this.#kind);
    let spans = restoring ? guard.spans(held) : NO_SPANS;
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
      for (const hit of kept) if (hit.start < limit && hit.end > limit) limit = hit.start;
      if (held.length - limit > MAX_HELD_CHARS) return this.#release(true);
      if (limit <= 0) return '';
    }
    if (spans.length !== 0 && spans[spans.length - 1]!.start >= limit) spans = spans.filter((span) => span.start < limit);
    return this.#commit(held, limit, kept, spans);
  }

  /** The released context the scan starts from. */
  #scanContext(): string {
    const context = this.#context;
    if (this.#contextWhole || context === '') return context;
    const space = context.search(WHITESPACE);
    return space === -1 ? context : context.slice(space + 1);
  }

  /** Releases `held[0, limit)`: findings recorded and applied, placeholders restored. */
  #commit(held: string, limit: number, hits: readonly Hit[], spans: readonly Span[]): string {
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
      const span = p < spans.length ? (spans[p] as Span) : null;
      if (hit === null && span === null) break;
      const start = hit !== null && (span === null || hit.start < span.start) ? hit.start : (span as Span).start;
      out += held.slice(from, start);
      if (json) state = jsonAdvance(state, held, from, start);
      let end: number;
      if (hit !== null && hit.start === start) {
        h++;
        end = hit.end;
        const action = signed && hit.action === 'mask' ? 'log' : hit.action;
        guard.findings.push({ detector: hit.detector, path: this.#path, action });
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
    const context = this.#context + held.slice(0, limit);
    if (context.length > CONTEXT_CHARS) {
      this.#context = context.slice(context.length - CONTEXT_CHARS);
      this.#contextWhole = false;
    } else this.#context = context;
    return out;
  }
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
