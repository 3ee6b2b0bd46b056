// Operator patterns, checked once at config time: a list of literals (matched
// case-insensitively, not inside a longer word) or a regular expression run on
// the linear-time matcher of src/schema (what it cannot run in linear time is
// refused, with the feature and its position).
import { compileLinearPattern, type LinearPattern } from '../schema/pattern-match.ts';
import { CUSTOM_DETECTOR_PREFIX } from './detector-names.ts';
import type { CustomPattern } from './guard-types.ts';

export const MAX_LITERALS = 1000;
export const MAX_LITERAL_LENGTH = 256;
const NAME_SHAPE = /^[a-z0-9][a-z0-9_-]{0,63}$/;

export interface CompiledPattern {
  readonly name: string;
  /** `custom:<name>`, the detector name of its findings. */
  readonly detector: string;
  /** Lower-cased literals, or null for a regular expression. */
  readonly literals: readonly string[] | null;
  readonly regex: LinearPattern | null;
}

export function compileCustomPattern(pattern: CustomPattern): CompiledPattern | { problem: string } {
  if (typeof pattern.name !== 'string' || !NAME_SHAPE.test(pattern.name)) {
    return { problem: 'name must be 1 to 64 characters of a-z, 0-9, "_" and "-", starting with a letter or digit' };
  }
  const detector = CUSTOM_DETECTOR_PREFIX + pattern.name;
  if ((pattern.literals === undefined) === (pattern.regex === undefined)) return { problem: 'give exactly one of "literals" or "regex"' };
  if (pattern.literals !== undefined) {
    if (!Array.isArray(pattern.literals) || pattern.literals.length === 0 || pattern.literals.length > MAX_LITERALS) {
      return { problem: `literals must be a list of 1 to ${MAX_LITERALS} strings` };
    }
    for (const [i, literal] of pattern.literals.entries()) {
      if (typeof literal !== 'string' || literal.trim().length === 0 || literal.length > MAX_LITERAL_LENGTH) {
        return { problem: `literals[${i}] must be a string of 1 to ${MAX_LITERAL_LENGTH} characters, not only spaces` };
      }
    }
    return { name: pattern.name, detector, literals: pattern.literals.map((literal) => literal.toLowerCase()), regex: null };
  }
  if (typeof pattern.regex !== 'string' || pattern.regex.length === 0) return { problem: 'regex must be a non-empty string' };
  try {
    new RegExp(pattern.regex, 'u');
  } catch (error) {
    return { problem: `regex is not a valid regular expression: ${(error as Error).message}` };
  }
  const regex = compileLinearPattern(pattern.regex);
  if ('feature' in regex) {
    const where = regex.at >= 0 ? ` at offset ${regex.at}` : '';
    return { problem: `regex cannot be run in linear time: ${regex.feature}${where}; rewrite it without that feature` };
  }
  if (regex.findSpan('', 0, { steps: 1e6 }) !== null) return { problem: 'regex matches the empty string: it must match at least one character' };
  return { name: pattern.name, detector, literals: null, regex };
}
