// The guard over an answer's texts, pure: the request's policy applied to what
// the model says (log, mask with the request's numbering, block by cutting the
// text before the finding) and the request's masked values restored where the
// answer names their placeholders. A streamed text goes through a channel that
// holds back its last `holdBackChars` characters, so a value split over chunks
// is found exactly as in the whole text; restored values are never scanned
// (they came from the client). Findings carry the detector, the path and the
// action, never the text.
import { NO_HITS, NO_SPANS, TextChannel, type AnswerChannel, type ChannelHost, type ChannelKind, type Hit, type Span } from './answer-channel.ts';
import type { GuardFinding } from './body-guard.ts';
import type { AnswerGuardSettings, GuardPolicy } from './guard-policy.ts';
import type { Finding, GuardScanner } from './guard-types.ts';
import type { PlaceholderBook } from './placeholder-book.ts';

export { CONTEXT_CHARS, MAX_HELD_CHARS, type AnswerChannel, type ChannelKind } from './answer-channel.ts';
export { PlaceholderBook } from './placeholder-book.ts';

export interface AnswerGuard {
  /** True when the answer's text is scanned (false: the guard only restores the request's values). */
  readonly scanning: boolean;
  /** A stream's channel; `path` names it in findings (`answer.choices[0].delta.content`). */
  channel(path: string, kind: ChannelKind): AnswerChannel;
  /** A whole text (non-streamed answer), same rules: `blocked` when cut before a finding. */
  whole(path: string, kind: ChannelKind, text: string): { readonly text: string; readonly blocked: boolean };
  /** Findings so far, in order; the caller records them once (drain returns and clears). */
  drain(): GuardFinding[];
}

/** The fewest characters pushed between two scans of a stream: a quarter of the hold-back, at least this. */
const MIN_RELEASE_STEP = 16;

export function createAnswerGuard(options: { scanner: GuardScanner; policy: GuardPolicy; settings: AnswerGuardSettings; book: PlaceholderBook }): AnswerGuard {
  return new Guard(options.scanner, options.policy, options.settings, options.book);
}

class Guard implements AnswerGuard, ChannelHost {
  readonly scanner: GuardScanner;
  readonly policy: GuardPolicy;
  readonly book: PlaceholderBook;
  readonly scanning: boolean;
  readonly restore: boolean;
  readonly holdBack: number;
  readonly releaseStep: number;
  #findings: GuardFinding[] = [];
  readonly #scanned: Finding[] = [];

  constructor(scanner: GuardScanner, policy: GuardPolicy, settings: AnswerGuardSettings, book: PlaceholderBook) {
    this.scanner = scanner;
    this.policy = policy;
    this.book = book;
    this.scanning = settings.scan && policy.active;
    this.restore = settings.restore;
    // Restoring alone holds only an unfinished placeholder.
    this.holdBack = this.scanning ? settings.holdBackChars : 0;
    this.releaseStep = this.scanning ? Math.max(MIN_RELEASE_STEP, settings.holdBackChars >> 2) : 0;
  }

  channel(path: string, kind: ChannelKind): AnswerChannel {
    return new TextChannel(this, path, kind);
  }

  whole(path: string, kind: ChannelKind, text: string): { readonly text: string; readonly blocked: boolean } {
    if (!this.scanning && !this.restoring(kind)) return { text, blocked: false };
    const channel = new TextChannel(this, path, kind);
    const out = channel.finish(text);
    return { text: out, blocked: channel.blocked };
  }

  record(finding: GuardFinding): void {
    this.#findings.push(finding);
  }

  drain(): GuardFinding[] {
    const findings = this.#findings;
    this.#findings = [];
    return findings;
  }

  restoring(kind: ChannelKind): boolean {
    return this.restore && kind !== 'signed' && this.book.hasRestorable;
  }

  /** The findings of `context + held` that start in `held`, with their action, offsets into `held`. */
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
      // Off findings stay: they hold the tail as the others do, since with more text a finding the scanner
      // preferred to them may turn out to be another's.
      hits.push({ detector: found.detector, start: found.start - offset, end: found.end - offset, action: this.policy.actionOf(found.detector) });
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

