// What the answer guard's tests share: a scanner with every detector, a policy
// from a detectors object, a book holding the request's masks, and a stream
// fed to a channel in given pieces.
import { createAnswerGuard, PlaceholderBook, type AnswerGuard, type ChannelKind } from '../../src/guard/answer-guard.ts';
import { effectiveGuardPolicy, type AnswerGuardSettings, type GuardAction, type GuardPattern } from '../../src/guard/guard-policy.ts';
import { compileCustomPattern, createGuardScanner, DETECTOR_NAMES, type CompiledPattern, type Finding, type GuardScanner } from '../../src/guard/guard-types.ts';

export const TICKET: GuardPattern = {
  name: 'ticket', regex: 'INC-[0-9]{6}', action: 'mask', compiled: compileCustomPattern({ name: 'ticket', regex: 'INC-[0-9]{6}' }) as CompiledPattern,
};

/** Every detector and the ticket pattern; `scanned` counts the characters of each scan (the cost of a push). */
export function countingScanner(): GuardScanner & { sizes: number[] } {
  const inner = createGuardScanner({ detectors: new Set(DETECTOR_NAMES), patterns: [TICKET.compiled] });
  const sizes: number[] = [];
  return {
    sizes,
    get lastSteps() {
      return inner.lastSteps;
    },
    scan(text: string, out: Finding[]): void {
      sizes.push(text.length);
      inner.scan(text, out);
    },
  };
}

export interface RequestMasks {
  readonly [placeholderWanted: string]: readonly [detector: string, value: string];
}

/** A book as the request left it: `masks` in order (their placeholders checked). */
export function bookWith(masks: RequestMasks = {}): PlaceholderBook {
  const book = new PlaceholderBook();
  for (const [wanted, [detector, value]] of Object.entries(masks)) {
    const made = book.placeholderFor(detector, value, true);
    if (made !== wanted) throw new Error(`the book made ${made}, not ${wanted}`);
  }
  return book;
}

export function guardFor(
  detectors: Readonly<Record<string, GuardAction>>,
  settings: Partial<AnswerGuardSettings> = {},
  masks: RequestMasks = {},
  scanner: GuardScanner = countingScanner(),
): AnswerGuard {
  const policy = effectiveGuardPolicy({ detectors, patterns: [{ ...TICKET, action: detectors['custom:ticket'] ?? 'mask' }] }, null, null);
  return createAnswerGuard({
    scanner, policy, book: bookWith(masks), settings: { scan: true, restore: true, holdBackChars: 64, ...settings },
  });
}

/** `pieces` pushed one after another, then the end: every output, in order (the end's last). */
export function stream(guard: AnswerGuard, pieces: readonly string[], kind: ChannelKind = 'text', path = 'a'): { outputs: string[]; blocked: boolean } {
  const channel = guard.channel(path, kind);
  const outputs = pieces.map((piece) => channel.push(piece));
  outputs.push(channel.end());
  return { outputs, blocked: channel.blocked };
}

/** `text` cut at `at`, and at every character. */
export function splitAt(text: string, at: number): string[] {
  return [text.slice(0, at), text.slice(at)];
}

export function chars(text: string): string[] {
  return Array.from({ length: text.length }, (_, i) => text[i] as string);
}

/** The findings as `detector:action@path`, for exact comparison. */
export function described(guard: AnswerGuard): string[] {
  return guard.drain().map((f) => `${f.detector}:${f.action}@${f.path}`);
}
