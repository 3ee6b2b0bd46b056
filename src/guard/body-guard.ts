// The guard over one request body, pure: every string value of the parsed
// body (the texts a client sends upstream, whatever the door: messages,
// system prompts, tool arguments and results, embeddings inputs) is scanned
// once, and the request's policy decides each finding's fate: `block` stops
// the request, `mask` puts a typed placeholder in the text's place, `log` only
// records. A placeholder names its detector and counts within the request
// (`[CARD_NUMBER_1]`), the same value the same placeholder wherever it
// appears, so a model can still tell two cards apart; a placeholder the body
// already holds (a stored turn's masked text) is given to no new value. What this returns never
// holds a matched text: findings carry the detector, the JSON path and the
// action, for errors, the access line and metrics.
import { renderJsonPath } from '../json/json-parse-error.ts';
import type { GuardAction, GuardPolicy } from './guard-policy.ts';
import type { Finding, GuardScanner } from './guard-types.ts';
import { PlaceholderBook } from './placeholder-book.ts';

export { placeholderName } from './placeholder-book.ts';

/** A finding as the sinks see it: never the text. */
export interface GuardFinding {
  readonly detector: string;
  /** The JSON path of the string it was found in (`messages[2].content`). */
  readonly path: string;
  readonly action: GuardAction;
  /** Present only on a `block` its detector's action did not ask for: `signed`, a `mask` finding in a signed
   * thinking text (masking would break the signature, passing would send the value), so the request's refusal
   * can say that the value is in a thinking block that cannot be masked. */
  readonly reason?: 'signed';
}

export interface GuardOutcome {
  /** Every finding whose action is not `off`, in body order. */
  readonly findings: readonly GuardFinding[];
  /** The first `block` finding: the request is refused with it. */
  readonly blocked: GuardFinding | null;
  /** The body with `mask` findings replaced, or null when nothing was masked. */
  readonly masked: unknown;
  /** The request's placeholders: the answer continues their numbering and restores their values. */
  readonly book: PlaceholderBook;
}

/** How a path names an object key that is not plainly a name (or holds a finding): never its text. */
const KEY_SEGMENT = '{key}';
/** A key a path may name as it is: an identifier, as the request shapes' own fields are. */
const SAFE_KEY = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** Integers from this size up are scanned as their digits (the shortest card number has 12). */
const MIN_SCANNED_NUMBER = 100_000_000_000;

/** Strings deeper than this are not walked by recursion but refused: the JSON parser's own depth limit is far below it. */
const MAX_DEPTH = 1000;

/** Scans `body` under `policy`, its masks written in `book`. Throws only on a scanner fault (the caller fails closed). */
export function guardBody(body: unknown, scanner: GuardScanner, policy: GuardPolicy, book: PlaceholderBook = new PlaceholderBook()): GuardOutcome {
  book.reserveFrom(body);
  const run = new GuardRun(scanner, policy, book);
  const masked = run.walk(body, [], 0);
  return { findings: run.findings, blocked: run.blocked, masked: run.maskedAny ? masked : null, book };
}

class GuardRun {
  readonly findings: GuardFinding[] = [];
  blocked: GuardFinding | null = null;
  maskedAny = false;
  readonly #scanner: GuardScanner;
  readonly #policy: GuardPolicy;
  readonly #hits: Finding[] = [];
  readonly #book: PlaceholderBook;

  constructor(scanner: GuardScanner, policy: GuardPolicy, book: PlaceholderBook) {
    this.#scanner = scanner;
    this.#policy = policy;
    this.#book = book;
  }

  /** The value with its strings masked (the same object when nothing in it was). */
  walk(value: unknown, path: (string | number)[], depth: number): unknown {
    if (depth > MAX_DEPTH) throw new Error('the body is nested deeper than the guard walks');
    if (typeof value === 'string') return this.#text(value, path);
    if (Array.isArray(value)) {
      let out: unknown[] | null = null;
      for (let i = 0; i < value.length; i++) {
        path.push(i);
        const next = this.walk(value[i], path, depth + 1);
        path.pop();
        if (next !== value[i]) (out ??= value.slice())[i] = next;
      }
      return out ?? value;
    }
    if (typeof value === 'object' && value !== null) return this.#object(value as Record<string, unknown>, path, depth);
    if (typeof value === 'number' && Number.isSafeInteger(value) && (value >= MIN_SCANNED_NUMBER || value <= -MIN_SCANNED_NUMBER)) {
      // A long integer may be a card number sent as a JSON number: scanned as its digits, masked as a string.
      const digits = String(value);
      const masked = this.#text(digits, path, false);
      return masked === digits ? value : masked;
    }
    return value;
  }

  /** An object's keys are text the client sends too (a tool's input): scanned, masked, named in a path only when plainly a name. */
  #object(record: Record<string, unknown>, path: (string | number)[], depth: number): unknown {
    const keys = Object.keys(record);
    let changed = false;
    const newKeys: string[] = [];
    const newValues: unknown[] = [];
    for (const key of keys) {
      const before = this.findings.length;
      const newKey = this.#text(key, path, true);
      path.push(newKey === key && this.findings.length === before && SAFE_KEY.test(key) ? key : KEY_SEGMENT);
      const value = record[key];
      const next = signedText(record, key, value) ? this.#text(value as string, path, false, true) : this.walk(value, path, depth + 1);
      path.pop();
      newKeys.push(newKey);
      newValues.push(next);
      if (newKey !== key || next !== record[key]) changed = true;
    }
    if (!changed) return record;
    const out: Record<string, unknown> = {};
    // Defined, not assigned: a key named __proto__ stays a key.
    for (let k = 0; k < newKeys.length; k++) Object.defineProperty(out, newKeys[k] as string, { value: newValues[k], enumerable: true, writable: true, configurable: true });
    return out;
  }

  /** `isKey`: the text is an object key at `path`; its findings are at `path.{key}`. `signed`: never changed, a mask blocks. */
  #text(text: string, path: readonly (string | number)[], isKey = false, signed = false): string {
    const hits = this.#hits;
    hits.length = 0;
    this.#scanner.scan(text, hits);
    if (hits.length === 0) return text;
    let rendered: string | null = null;
    let out = '';
    let from = 0;
    let changed = false;
    for (const hit of hits) {
      const configured = this.#policy.actionOf(hit.detector);
      if (configured === 'off') continue;
      rendered ??= renderJsonPath(isKey ? [...path, KEY_SEGMENT] : path);
      const finding: GuardFinding = signed && configured === 'mask'
        ? { detector: hit.detector, path: rendered, action: 'block', reason: 'signed' }
        : { detector: hit.detector, path: rendered, action: configured };
      const action = finding.action;
      this.findings.push(finding);
      if (action === 'block') this.blocked ??= finding;
      if (action !== 'mask') continue;
      out += text.slice(from, hit.start) + this.#placeholder(hit.detector, text.slice(hit.start, hit.end));
      from = hit.end;
      changed = true;
    }
    if (!changed) return text;
    this.maskedAny = true;
    return out + text.slice(from);
  }

  #placeholder(detector: string, value: string): string {
    return this.#book.placeholderFor(detector, value, true);
  }
}

/**
 * A thinking block's text that claims a signature: the client says so, and nothing proves it here, so it is
 * scanned as any text (a `redacted_thinking` block's `data` is not told apart at all). Only a mask differs:
 * changing the text would make a true signature fail (the provider refuses the turn), and sending it as it is
 * would let the value leave, so the request is refused instead.
 */
function signedText(record: Record<string, unknown>, key: string, value: unknown): boolean {
  return key === 'thinking' && typeof value === 'string' && record.type === 'thinking' && typeof record.signature === 'string';
}

/** The findings as the access line's `guard` field: `detector:path:action`, at most `max` of them, then how many more. */
export function describeFindings(findings: readonly GuardFinding[], max = 16): string {
  const shown = findings.slice(0, max).map((f) => `${f.detector}:${f.path}:${f.action}`);
  if (findings.length > max) shown.push(`+${findings.length - max} more`);
  return shown.join(',');
}
