// The scanner: one pass over a text's characters. Word starts and a few
// trigger characters (`@`, `=`, `:`, `+`, `(`, `-`, full-width digits and `＋`)
// hand over to the enabled detectors, each of which reads a bounded window:
// a word's first two characters pick the secret detectors whose marker could
// start there (most words start none), a number's first four digits decide
// whether a card is read at all. Operator literals are found by one walk of a
// trie of them all, at the positions whose character can start one.
// Candidates are then ordered by start and overlaps resolved (the longest
// wins at one start, the earlier start wins otherwise). Operator regular expressions run on the
// linear-time matcher, one search after another, within a step budget.
import { Match } from '../schema/pattern-match.ts';
import { LiteralMatcher, type CompiledPattern } from './custom-patterns.ts';
import { secretAssignment, urlPassword } from './assignment-detectors.ts';
import { DETECTOR_NAMES, isDetectorName } from './detector-names.ts';
import type { Finding, GuardScanner } from './guard-types.ts';
import { cardNumber, email, iban, PHONE_CONTEXT, phoneInternational, phoneNational, usSsn } from './personal-detectors.ts';
import {
  anthropicKey, awsAccessKeyId, awsSecretNear, githubToken, googleApiKey, jwt, openaiKey, portcullisKey, privateKey,
  slackToken, slackWebhook, stripeKey,
} from './secret-detectors.ts';
import { digitValue, gluesToNumber, isDigit, isWord, reads } from './text-checks.ts';

/** Steps per character and per instruction an operator regex may take in one scan before the scan fails. */
export const REGEX_STEPS_PER_CHAR = 8;

/** A scan that could not finish within its bounds: the caller fails closed. */
export class GuardScanError extends Error {
  override readonly name = 'GuardScanError';
}

const Kind = { Other: 0, Word: 1, Trigger: 2 } as const;
/** ASCII characters: word characters start detectors, the triggers hand over to theirs, the rest is passed by. */
const CHAR_KIND = (() => {
  const kinds = new Uint8Array(128);
  for (let code = 0; code < 128; code++) if (isWord(code)) kinds[code] = Kind.Word;
  for (const trigger of '@=:+(-') kinds[trigger.charCodeAt(0)] = Kind.Trigger;
  return kinds;
})();

interface Candidate {
  detector: string;
  start: number;
  end: number;
  /** Breaks ties at one start and length: the specific detector before the generic one. */
  rank: number;
}

const RANK_SPECIFIC = 0;
const RANK_ASSIGNMENT = 1;
const RANK_CUSTOM = 2;

/** A word-start detector of secrets: the end of what it found at `at`, or -1. */
type WordDetector = (text: string, at: number) => number;

interface WordEntry {
  readonly detector: string;
  readonly find: WordDetector;
}

function isFullWidthDigit(code: number): boolean {
  return code >= 0xff10 && code <= 0xff19;
}

export function createGuardScanner(options: { detectors: ReadonlySet<string>; patterns: readonly CompiledPattern[] }): GuardScanner {
  for (const name of options.detectors) {
    if (!isDetectorName(name)) throw new RangeError(`unknown guard detector "${name}"; known: ${DETECTOR_NAMES.join(', ')}`);
  }
  return new Scanner(options.detectors, options.patterns);
}

/**
 * The scanner's state lives on the instance and is reused from scan to scan:
 * a scan makes no closure and no object but its findings (a candidate each).
 * Not reentrant, like the regex matcher it runs.
 */
class Scanner implements GuardScanner {
  lastSteps = 0;
  /** Word-start detectors by the two characters their markers start with (128 × first + second): one lookup passes most words by. */
  private readonly byPair: Array<WordEntry[] | undefined> = new Array<WordEntry[] | undefined>(128 * 128).fill(undefined);
  private readonly aws: boolean;
  private readonly ibanOn: boolean;
  private readonly cardOn: boolean;
  private readonly ssnOn: boolean;
  private readonly phoneOn: boolean;
  private readonly emailOn: boolean;
  private readonly assignmentOn: boolean;
  private readonly privateKeyOn: boolean;
  private readonly literals: LiteralMatcher;
  private readonly hasLiterals: boolean;
  private readonly regexPatterns: readonly CompiledPattern[];
  private readonly candidates: Candidate[] = [];
  /**
   * The end of the last word with a letter (or of the last character past
   * ASCII) the pass went by: a national phone number needs a context word
   * within PHONE_CONTEXT characters before it, and where no word ends that
   * near, none is looked for (a long run of digit groups reads no context).
   */
  private letterEnd = 0;
  /** The step budget of the operator regex being run, reused. */
  private readonly budget = { steps: 0 };

  constructor(detectors: ReadonlySet<string>, patterns: readonly CompiledPattern[]) {
    const on = (name: string): boolean => detectors.has(name);
    const add = (pairs: readonly string[], detector: string, find: WordDetector): void => {
      if (!on(detector)) return;
      for (const pair of pairs) {
        const key = pair.charCodeAt(0) * 128 + pair.charCodeAt(1);
        const list = this.byPair[key] ?? [];
        list.push({ detector, find });
        this.byPair[key] = list;
      }
    };
    add(['gh', 'gi'], 'github_token', githubToken);
    add(['xo'], 'slack_token', slackToken);
    add(['ho'], 'slack_token', slackWebhook);
    add(['sk', 'rk'], 'stripe_key', stripeKey);
    add(['AI'], 'google_api_key', googleApiKey);
    add(['sk'], 'anthropic_key', anthropicKey);
    add(['sk'], 'openai_key', openaiKey);
    add(['ey'], 'jwt', jwt);
    add(['pc'], 'portcullis_key', portcullisKey);
    this.aws = on('aws_access_key');
    this.ibanOn = on('iban');
    this.cardOn = on('card_number');
    this.ssnOn = on('us_ssn');
    this.phoneOn = on('phone');
    this.emailOn = on('email');
    this.assignmentOn = on('secret_assignment');
    this.privateKeyOn = on('private_key');
    this.literals = new LiteralMatcher(patterns.filter((pattern) => pattern.literals !== null));
    this.hasLiterals = !this.literals.empty;
    this.regexPatterns = patterns.filter((pattern) => pattern.regex !== null);
  }

  private push(detector: string, start: number, end: number, rank: number): void {
    this.candidates.push({ detector, start, end, rank });
  }

  scan(text: string, out: Finding[]): void {
    reads.count = 0;
    this.candidates.length = 0;
    const length = text.length;
    const literalStarts = this.literals.starts;
    const hasLiterals = this.hasLiterals;
    this.letterEnd = -PHONE_CONTEXT;
    let i = 0;
    while (i < length) {
      const code = text.charCodeAt(i);
      if (hasLiterals && literalStarts[code] === 1) this.matchLiteral(text, i);
      if (code >= 128) {
        this.letterEnd = i + 1;
        i = code >= 0xff0b && code <= 0xff19 ? this.fullWidth(text, i, code) : i + 1;
        continue;
      }
      const kind = CHAR_KIND[code] as number;
      if (kind === Kind.Word) {
        const end = this.wordStart(text, i, code);
        const numeric = isDigit(code);
        if (end > i) {
          i = end;
          if (!numeric) this.letterEnd = i;
          // A finding that ends inside a word: the rest of that word starts nothing.
          if (i >= length || !isWord(text.charCodeAt(i)) || !isWord(text.charCodeAt(i - 1))) continue;
        } else i++;
        // The rest of the word: nothing starts inside one (a literal starting with a word character needs a word start too).
        let letters = !numeric;
        if (letters) {
          while (i < length) {
            const inner = text.charCodeAt(i);
            if (inner >= 128 || CHAR_KIND[inner] !== Kind.Word) break;
            i++;
          }
        } else {
          while (i < length) {
            const inner = text.charCodeAt(i);
            if (inner >= 128 || CHAR_KIND[inner] !== Kind.Word) break;
            if (inner > 0x39) letters = true;
            i++;
          }
        }
        if (letters) this.letterEnd = i;
        continue;
      }
      if (kind === Kind.Other) {
        i++;
        continue;
      }
      i = this.trigger(text, i, code);
    }
    let steps = length + reads.count;
    for (const pattern of this.regexPatterns) steps += this.matchRegex(text, pattern);
    this.lastSteps = steps;
    resolve(this.candidates, out);
    this.candidates.length = 0;
  }

  private matchLiteral(text: string, at: number): void {
    const end = this.literals.match(text, at);
    if (end !== -1) this.push(this.literals.detector, at, end, RANK_CUSTOM);
  }

  /** A trigger character at `at`: its detectors run; returns where the pass goes on. */
  private trigger(text: string, at: number, code: number): number {
    switch (code) {
      case 0x40: // @
        if (this.emailOn) {
          const found = email(text, at);
          if (found !== null) this.push('email', found.start, found.end, RANK_SPECIFIC);
        }
        break;
      case 0x3a: // :
      case 0x3d: // =
        if (this.assignmentOn) {
          // `scheme://user:password@host`; `name: value` is checked as well, the longer wins.
          const password = code === 0x3a ? urlPassword(text, at) : null;
          if (password !== null) this.push('secret_assignment', password.start, password.end, RANK_ASSIGNMENT);
          const found = secretAssignment(text, at);
          if (found !== null) this.push('secret_assignment', found.start, found.end, RANK_ASSIGNMENT);
        }
        break;
      case 0x2b: // +
        if (this.phoneOn) {
          const end = phoneInternational(text, at);
          if (end !== -1) {
            this.push('phone', at, end, RANK_SPECIFIC);
            return end;
          }
        }
        break;
      case 0x28: // (
        if (this.phoneOn && this.letterEnd > at - PHONE_CONTEXT && isDigit(text.charCodeAt(at + 1)) && (at === 0 || !isWord(text.charCodeAt(at - 1)))) {
          const end = phoneNational(text, at);
          if (end !== -1) {
            this.push('phone', at, end, RANK_SPECIFIC);
            return end;
          }
        }
        break;
      case 0x2d: // -
        if (this.privateKeyOn && text.charCodeAt(at + 1) === 0x2d) {
          const end = privateKey(text, at);
          if (end !== -1) {
            this.push('private_key', at, end, RANK_SPECIFIC);
            return end;
          }
        }
        break;
    }
    return at + 1;
  }

  /** A full-width `＋` or digit at `at`: a phone or card number written in full-width digits; returns where the pass goes on. */
  private fullWidth(text: string, at: number, code: number): number {
    if (code === 0xff0b) {
      if (!this.phoneOn) return at + 1;
      const end = phoneInternational(text, at);
      if (end === -1) return at + 1;
      this.push('phone', at, end, RANK_SPECIFIC);
      return end;
    }
    if (!isFullWidthDigit(code)) return at + 1;
    if (at === 0 || !gluesToNumber(text.charCodeAt(at - 1))) {
      const end = this.digitStart(text, at);
      if (end !== -1) return end;
    }
    let i = at + 1;
    while (i < text.length && isFullWidthDigit(text.charCodeAt(i))) i++;
    return i;
  }

  private wordStart(text: string, at: number, first: number): number {
    if (first <= 0x39) return first >= 0x30 ? this.digitStart(text, at) : -1;
    const second = text.charCodeAt(at + 1);
    const detectors = second < 128 ? this.byPair[first * 128 + second] : undefined;
    if (detectors !== undefined) {
      for (let k = 0; k < detectors.length; k++) {
        const entry = detectors[k] as WordEntry;
        const end = entry.find(text, at);
        if (end !== -1) {
          this.push(entry.detector, at, end, RANK_SPECIFIC);
          return end;
        }
      }
    }
    if (first === 0x41 && (second === 0x4b || second === 0x53) && this.aws) {
      const end = awsAccessKeyId(text, at);
      if (end !== -1) {
        this.push('aws_access_key', at, end, RANK_SPECIFIC);
        const secret = awsSecretNear(text, end);
        if (secret !== null) this.push('aws_access_key', secret.start, secret.end, RANK_SPECIFIC);
        return end;
      }
    }
    // An IBAN: two letters and two check digits.
    if (this.ibanOn && isDigit(text.charCodeAt(at + 2)) && isDigit(text.charCodeAt(at + 3))) {
      const end = iban(text, at);
      if (end !== -1) {
        this.push('iban', at, end, RANK_SPECIFIC);
        return end;
      }
    }
    return -1;
  }

  /** A number at a word start (ASCII or full-width digits): a card number, a US SSN or a national phone number. */
  private digitStart(text: string, at: number): number {
    let digits = 1;
    while (digits < 20 && digitValue(text.charCodeAt(at + digits)) !== -1) digits++;
    reads.count += digits;
    if (this.cardOn && (digits === 4 || digits >= 13)) {
      const end = cardNumber(text, at);
      if (end !== -1) {
        this.push('card_number', at, end, RANK_SPECIFIC);
        return end;
      }
    }
    if (this.ssnOn && digits === 3) {
      const end = usSsn(text, at);
      if (end !== -1) {
        this.push('us_ssn', at, end, RANK_SPECIFIC);
        return end;
      }
    }
    if (this.phoneOn && this.letterEnd > at - PHONE_CONTEXT && (at === 0 || text.charCodeAt(at - 1) !== 0x2b)) {
      const end = phoneNational(text, at);
      if (end !== -1) {
        this.push('phone', at, end, RANK_SPECIFIC);
        return end;
      }
    }
    return -1;
  }

  /** Each match of an operator regex, left to right, not overlapping; returns the steps taken. */
  private matchRegex(text: string, pattern: CompiledPattern): number {
    const regex = pattern.regex;
    if (regex === null) return 0;
    const allowed = REGEX_STEPS_PER_CHAR * (text.length + 1) * regex.ops.length;
    const budget = this.budget;
    budget.steps = allowed;
    let from = 0;
    let granted = allowed;
    while (from <= text.length) {
      const found = regex.findSpan(text, from, budget, MAX_REGEX_FINDING);
      if (found === Match.OutOfSteps) throw new GuardScanError(`the pattern ${pattern.detector} took more than ${granted} steps on a text of ${text.length} characters`);
      if (found === null) break;
      if (found.end > found.start) this.push(pattern.detector, found.start, found.end, RANK_CUSTOM);
      from = found.end > found.start ? found.end : found.end + 1;
      // Making a match longest reads at most MAX_REGEX_FINDING characters past its start: each
      // match earns that much, so the bound stays linear in the text however many matches it has.
      const earned = MAX_REGEX_FINDING * regex.ops.length;
      budget.steps += earned;
      granted += earned;
    }
    return granted - budget.steps;
  }
}

/** The longest finding an operator regex makes: a match is not extended past it. */
const MAX_REGEX_FINDING = 1024;

function byStartThenLongest(a: Candidate, b: Candidate): number {
  return a.start - b.start || b.end - b.start - (a.end - a.start) || a.rank - b.rank;
}

/** Ordered by start; at one start the longest, then the more specific; a candidate overlapping a kept one is dropped. */
function resolve(candidates: Candidate[], out: Finding[]): void {
  if (candidates.length === 0) return;
  candidates.sort(byStartThenLongest);
  let kept = -1;
  for (const candidate of candidates) {
    if (candidate.start < kept) continue;
    out.push({ detector: candidate.detector, start: candidate.start, end: candidate.end });
    kept = candidate.end;
  }
}
