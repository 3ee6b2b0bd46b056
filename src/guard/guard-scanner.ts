// The scanner: one pass over a text's characters. Word starts and a few
// trigger characters (`@`, `=`, `:`, `+`, `(`, `-`) hand over to the enabled
// detectors, each of which reads a bounded window; operator literals are
// checked at the positions whose character can start one. Candidates are then
// ordered by start and overlaps resolved (the longest wins at one start, the
// earlier start wins otherwise). Operator regular expressions run on the
// linear-time matcher, one search after another, within a step budget.
import { Match } from '../schema/pattern-match.ts';
import type { CompiledPattern } from './custom-patterns.ts';
import { DETECTOR_NAMES, isDetectorName } from './detector-names.ts';
import type { Finding, GuardScanner } from './guard-types.ts';
import { cardNumber, email, iban, phoneInternational, phoneNational, usSsn } from './personal-detectors.ts';
import {
  anthropicKey, awsAccessKeyId, awsSecretNear, githubToken, googleApiKey, jwt, openaiKey, portcullisKey, privateKey,
  secretAssignment, slackToken, stripeKey,
} from './secret-detectors.ts';
import { isDigit, isUpper, isWord, reads } from './text-checks.ts';


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

/** Word-start detectors of secrets, by the first character they need. */
type WordDetector = (text: string, at: number) => number;

export function createGuardScanner(options: { detectors: ReadonlySet<string>; patterns: readonly CompiledPattern[] }): GuardScanner {
  for (const name of options.detectors) {
    if (!isDetectorName(name)) throw new RangeError(`unknown guard detector "${name}"; known: ${DETECTOR_NAMES.join(', ')}`);
  }
  const on = (name: string): boolean => options.detectors.has(name);
  const byFirst: Array<Array<{ detector: string; find: WordDetector }> | undefined> = new Array(128).fill(undefined);
  const add = (firsts: string, detector: string, find: WordDetector): void => {
    if (!on(detector)) return;
    for (const first of firsts) {
      const list = byFirst[first.charCodeAt(0)] ?? [];
      list.push({ detector, find });
      byFirst[first.charCodeAt(0)] = list;
    }
  };
  add('g', 'github_token', githubToken);
  add('x', 'slack_token', slackToken);
  add('sr', 'stripe_key', stripeKey);
  add('A', 'google_api_key', googleApiKey);
  add('s', 'anthropic_key', anthropicKey);
  add('s', 'openai_key', openaiKey);
  add('e', 'jwt', jwt);
  add('p', 'portcullis_key', portcullisKey);
  const aws = on('aws_access_key');
  const ibanOn = on('iban');
  const cardOn = on('card_number');
  const ssnOn = on('us_ssn');
  const phoneOn = on('phone');
  const emailOn = on('email');
  const assignmentOn = on('secret_assignment');
  const privateKeyOn = on('private_key');

  const literalPatterns = options.patterns.filter((pattern) => pattern.literals !== null);
  const regexPatterns = options.patterns.filter((pattern) => pattern.regex !== null);
  // Lower-cased first characters that can start a literal: one table lookup per position.
  const literalFirsts = new Map<number, Array<{ detector: string; literal: string }>>();
  for (const pattern of literalPatterns) {
    for (const literal of pattern.literals as readonly string[]) {
      const first = literal.charCodeAt(0);
      const list = literalFirsts.get(first) ?? [];
      list.push({ detector: pattern.detector, literal });
      literalFirsts.set(first, list);
    }
  }
  const literalStart = new Uint8Array(65536);
  for (const first of literalFirsts.keys()) {
    literalStart[first] = 1;
    const upper = String.fromCharCode(first).toUpperCase();
    if (upper.length === 1) literalStart[upper.charCodeAt(0)] = 1;
  }
  const hasLiterals = literalFirsts.size > 0;

  const scanner = {
    lastSteps: 0,
    scan(text: string, out: Finding[]): void {
      reads.count = 0;
      const candidates: Candidate[] = [];
      const push = (detector: string, start: number, end: number, rank: number): void => {
        candidates.push({ detector, start, end, rank });
      };
      const length = text.length;
      let i = 0;
      while (i < length) {
        const code = text.charCodeAt(i);
        const kind = code < 128 ? (CHAR_KIND[code] as number) : Kind.Other;
        if (hasLiterals && literalStart[code] === 1) matchLiterals(text, i, literalFirsts, push);
        if (kind === Kind.Word) {
          const end = wordStart(text, i, code);
          if (end > i) {
            i = end;
            // A finding that ends inside a word: the rest of that word starts nothing.
            if (i >= length || !isWord(text.charCodeAt(i)) || !isWord(text.charCodeAt(i - 1))) continue;
          } else i++;
          while (i < length) {
            const inner = text.charCodeAt(i);
            if (inner >= 128 || CHAR_KIND[inner] !== Kind.Word) break;
            if (hasLiterals && literalStart[inner] === 1) matchLiterals(text, i, literalFirsts, push);
            i++;
          }
          continue;
        }
        if (kind === Kind.Other) {
          i++;
          continue;
        }
        switch (code) {
          case 0x40: // @
            if (emailOn) {
              const found = email(text, i);
              if (found !== null) push('email', found.start, found.end, RANK_SPECIFIC);
            }
            break;
          case 0x3d: // =
          case 0x3a: // :
            if (assignmentOn) {
              const found = secretAssignment(text, i);
              if (found !== null) push('secret_assignment', found.start, found.end, RANK_ASSIGNMENT);
            }
            break;
          case 0x2b: // +
            if (phoneOn) {
              const end = phoneInternational(text, i);
              if (end !== -1) {
                push('phone', i, end, RANK_SPECIFIC);
                i = end;
                continue;
              }
            }
            break;
          case 0x28: // (
            if (phoneOn && isDigit(text.charCodeAt(i + 1)) && (i === 0 || !isWord(text.charCodeAt(i - 1)))) {
              const end = phoneNational(text, i);
              if (end !== -1) {
                push('phone', i, end, RANK_SPECIFIC);
                i = end;
                continue;
              }
            }
            break;
          case 0x2d: // -
            if (privateKeyOn && text.charCodeAt(i + 1) === 0x2d) {
              const end = privateKey(text, i);
              if (end !== -1) {
                push('private_key', i, end, RANK_SPECIFIC);
                i = end;
                continue;
              }
            }
            break;
        }
        i++;
      }
      let steps = length + reads.count;
      for (const pattern of regexPatterns) steps += matchRegex(text, pattern, push);
      scanner.lastSteps = steps;
      resolve(candidates, out);

      function wordStart(text: string, at: number, first: number): number {
        const detectors = byFirst[first];
        if (detectors !== undefined) {
          for (const { detector, find } of detectors) {
            const end = find(text, at);
            if (end !== -1) {
              push(detector, at, end, RANK_SPECIFIC);
              return end;
            }
          }
        }
        if (first === 0x41 && aws) {
          const end = awsAccessKeyId(text, at);
          if (end !== -1) {
            push('aws_access_key', at, end, RANK_SPECIFIC);
            const secret = awsSecretNear(text, end);
            if (secret !== null) push('aws_access_key', secret.start, secret.end, RANK_SPECIFIC);
            return end;
          }
        }
        if (isUpper(first)) {
          if (ibanOn) {
            const end = iban(text, at);
            if (end !== -1) {
              push('iban', at, end, RANK_SPECIFIC);
              return end;
            }
          }
          return -1;
        }
        if (!isDigit(first)) return -1;
        let digits = 1;
        while (digits < 20 && isDigit(text.charCodeAt(at + digits))) digits++;
        if (cardOn && (digits === 4 || digits >= 13)) {
          const end = cardNumber(text, at);
          if (end !== -1) {
            push('card_number', at, end, RANK_SPECIFIC);
            return end;
          }
        }
        if (ssnOn && digits === 3) {
          const end = usSsn(text, at);
          if (end !== -1) {
            push('us_ssn', at, end, RANK_SPECIFIC);
            return end;
          }
        }
        if (phoneOn && (at === 0 || text.charCodeAt(at - 1) !== 0x2b)) {
          const end = phoneNational(text, at);
          if (end !== -1) {
            push('phone', at, end, RANK_SPECIFIC);
            return end;
          }
        }
        return -1;
      }
    },
  };
  return scanner;
}

function matchLiterals(
  text: string, at: number, literalFirsts: ReadonlyMap<number, ReadonlyArray<{ detector: string; literal: string }>>,
  push: (detector: string, start: number, end: number, rank: number) => void,
): void {
  const first = text[at]?.toLowerCase().charCodeAt(0) as number;
  const list = literalFirsts.get(first);
  if (list === undefined) return;
  for (const { detector, literal } of list) {
    const end = at + literal.length;
    if (end > text.length) continue;
    reads.count += literal.length;
    if (text.slice(at, end).toLowerCase() !== literal) continue;
    // Not inside a longer word: "Project X" is not found in "Project Xylophone".
    if (isWord(literal.charCodeAt(0)) && at > 0 && isWord(text.charCodeAt(at - 1))) continue;
    if (isWord(literal.charCodeAt(literal.length - 1)) && end < text.length && isWord(text.charCodeAt(end))) continue;
    push(detector, at, end, RANK_CUSTOM);
  }
}

/** Every match of an operator regex, left to right, not overlapping; returns the steps taken. */
/** The longest finding an operator regex makes: a match is not extended past it. */
const MAX_REGEX_FINDING = 1024;

function matchRegex(text: string, pattern: CompiledPattern, push: (detector: string, start: number, end: number, rank: number) => void): number {
  const regex = pattern.regex;
  if (regex === null) return 0;
  const allowed = REGEX_STEPS_PER_CHAR * (text.length + 1) * regex.ops.length;
  const budget = { steps: allowed };
  let from = 0;
  let granted = allowed;
  while (from <= text.length) {
    const found = regex.findSpan(text, from, budget, MAX_REGEX_FINDING);
    if (found === Match.OutOfSteps) throw new GuardScanError(`the pattern ${pattern.detector} took more than ${granted} steps on a text of ${text.length} characters`);
    if (found === null) break;
    if (found.end > found.start) push(pattern.detector, found.start, found.end, RANK_CUSTOM);
    from = found.end > found.start ? found.end : found.end + 1;
    // Making a match longest reads at most MAX_REGEX_FINDING characters past its start: each
    // match earns that much, so the bound stays linear in the text however many matches it has.
    const earned = MAX_REGEX_FINDING * regex.ops.length;
    budget.steps += earned;
    granted += earned;
  }
  return granted - budget.steps;
}

/** Ordered by start; at one start the longest, then the more specific; a candidate overlapping a kept one is dropped. */
function resolve(candidates: Candidate[], out: Finding[]): void {
  if (candidates.length === 0) return;
  candidates.sort((a, b) => a.start - b.start || b.end - b.start - (a.end - a.start) || a.rank - b.rank);
  let kept = -1;
  for (const candidate of candidates) {
    if (candidate.start < kept) continue;
    out.push({ detector: candidate.detector, start: candidate.start, end: candidate.end });
    kept = candidate.end;
  }
}
