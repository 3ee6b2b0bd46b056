// Operator patterns, checked once at config time: a list of literals (matched
// case-insensitively, not inside a longer word) or a regular expression run on
// the linear-time matcher of src/schema (what it cannot run in linear time is
// refused, with the feature and its position).
import { compileLinearPattern, type LinearPattern } from '../schema/pattern-match.ts';
import { CUSTOM_DETECTOR_PREFIX } from './detector-names.ts';
import type { CustomPattern } from './guard-types.ts';
import { isWord, reads } from './text-checks.ts';

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

let foldTable: Uint16Array | null = null;

/** Each UTF-16 code unit lower-cased where toLowerCase keeps it one unit, else itself; made on first use. */
function fold(): Uint16Array {
  if (foldTable === null) {
    foldTable = new Uint16Array(65536);
    for (let code = 0; code < 65536; code++) {
      const lower = String.fromCharCode(code).toLowerCase();
      foldTable[code] = lower.length === 1 ? lower.charCodeAt(0) : code;
    }
  }
  return foldTable;
}

/**
 * Every operator literal in one trie over case-folded code units: at a
 * position whose character can start a literal, one walk finds the longest
 * literal there, whichever pattern it belongs to. A walk reads at most the
 * longest literal's length; the scanner calls it only where a literal can start.
 */
export class LiteralMatcher {
  /** Code units that start some literal, either case: the scanner's one-lookup filter. */
  readonly starts = new Uint8Array(65536);
  private readonly children: Array<Map<number, number>> = [new Map()];
  /** The detector of the first pattern whose literal ends at each node, or null. */
  private readonly ends: Array<string | null> = [null];
  private readonly folded: Uint16Array;
  /** The detector of the last match. */
  detector = '';

  constructor(patterns: readonly CompiledPattern[]) {
    this.folded = fold();
    for (const pattern of patterns) {
      for (const literal of pattern.literals ?? []) {
        let node = 0;
        for (let k = 0; k < literal.length; k++) {
          const code = this.folded[literal.charCodeAt(k)] as number;
          const children = this.children[node] as Map<number, number>;
          let child = children.get(code);
          if (child === undefined) {
            child = this.children.length;
            children.set(code, child);
            this.children.push(new Map());
            this.ends.push(null);
          }
          node = child;
        }
        this.ends[node] ??= pattern.detector;
      }
    }
    const roots = this.children[0] as Map<number, number>;
    for (let code = 0; code < 65536; code++) if (roots.has(this.folded[code] as number)) this.starts[code] = 1;
  }

  get empty(): boolean {
    return (this.children[0] as Map<number, number>).size === 0;
  }

  /**
   * The end of the longest literal at `at`, compared case-insensitively and
   * not inside a longer word ("Project X" is not in "Project Xylophone"), its
   * detector in `detector`; -1 when none.
   */
  match(text: string, at: number): number {
    if (at > 0 && isWord(text.charCodeAt(at)) && isWord(text.charCodeAt(at - 1))) return -1;
    let node = 0;
    let best = -1;
    let i = at;
    while (i < text.length) {
      const child = (this.children[node] as Map<number, number>).get(this.folded[text.charCodeAt(i)] as number);
      if (child === undefined) break;
      node = child;
      i++;
      const detector = this.ends[node] as string | null;
      if (detector !== null && !(isWord(text.charCodeAt(i - 1)) && i < text.length && isWord(text.charCodeAt(i)))) {
        best = i;
        this.detector = detector;
      }
    }
    reads.count += i - at + 1;
    return best;
  }
}
