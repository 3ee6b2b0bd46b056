// Whether a pattern repeats a group that itself holds a repetition
// (`^(a+)+$`), the common shape of patterns on which a backtracking engine
// takes exponential time. Answers are not matched with V8's RegExp but in
// linear time (pattern-match.ts), so this is no rule for schemas; the demo
// provider's value generator (sample-value.ts), which does try patterns with
// V8's RegExp, uses it to leave such patterns alone. It does not catch every
// slow pattern (`(a|a)*`, `a*a*a*a*$`).

const Char = { Backslash: 0x5c, OpenBracket: 0x5b, CloseBracket: 0x5d, OpenParen: 0x28, CloseParen: 0x29, Star: 0x2a, Plus: 0x2b, OpenBrace: 0x7b } as const;

/**
 * Where a quantifier of varying count that can repeat (`*`, `+`, `{2,}`, `{1,3}`;
 * not `?`, `{0,1}` or a fixed `{4}`) starting at `at` ends, or -1 when none does.
 */
function repeatingQuantifierEnd(pattern: string, at: number): number {
  const code = pattern.charCodeAt(at);
  if (code === Char.Star || code === Char.Plus) return at + 1;
  if (code !== Char.OpenBrace) return -1;
  const match = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(at, at + 24));
  if (match === null) return -1;
  const low = Number(match[1]);
  const high = match[2] === undefined ? low : match[3] === '' ? Infinity : Number(match[3]);
  return high > 1 && high > low ? at + match[0].length : -1;
}

/** The index of a group that repeats while holding a repetition, or -1 when there is none. */
export function nestedRepetitionAt(pattern: string): number {
  // One entry per open group: its start index and whether a repeating quantifier occurred inside it.
  const starts: number[] = [];
  const repeats: boolean[] = [];
  let lastRepeats = false;
  for (let i = 0; i < pattern.length; i++) {
    const code = pattern.charCodeAt(i);
    lastRepeats = false;
    if (code === Char.Backslash) {
      i++;
    } else if (code === Char.OpenBracket) {
      // A class is one atom: skip to its unescaped closing bracket.
      for (i++; i < pattern.length && pattern.charCodeAt(i) !== Char.CloseBracket; i++) if (pattern.charCodeAt(i) === Char.Backslash) i++;
    } else if (code === Char.OpenParen) {
      starts.push(i);
      repeats.push(false);
      continue;
    } else if (code === Char.CloseParen) {
      const start = starts.pop() ?? 0;
      const inner = repeats.pop() ?? false;
      const end = repeatingQuantifierEnd(pattern, i + 1);
      if (end !== -1 && inner) return start;
      lastRepeats = inner;
    }
    const end = repeatingQuantifierEnd(pattern, i + 1);
    if (end !== -1 || lastRepeats) {
      if (repeats.length > 0) repeats[repeats.length - 1] = true;
      if (end !== -1) i = end - 1;
    }
  }
  return -1;
}
