// The shortest string a regular expression's first alternatives spell: what
// the demo provider's answer (./sample-value.ts) puts in a string with a
// `pattern` that "demo" does not match. A guess the caller tests against the
// pattern: it follows a subset of the syntax and says so (undefined) outside it.

const MAX_REPEAT = 1000;
/** The longest string a pattern may spell: fixed counts multiply (`((a{1000}){1000}){1000}`). */
const MAX_SPELLED = 1000;

/** Characters tried, in order, for a class or an escape such as `[A-Z]`, `\d`, `.`. */
const CLASS_CANDIDATES = ['a', '0', 'A', 'z', '9', 'Z', ' ', '-', '_', '.', '@', ':', '/', '+', '#', 'é', '\u00a0'];

/**
 * The shortest string the pattern's first alternatives spell: anchors dropped,
 * each quantifier at its least count, a class by the first of
 * CLASS_CANDIDATES it takes. Undefined for what it does not follow
 * (lookarounds, back-references, a class none of the candidates satisfies,
 * more than MAX_SPELLED characters);
 * the caller tests the result against the pattern either way.
 */
export function patternInstance(pattern: string): string | undefined {
  const state = { pattern, at: 0 };
  try {
    const spelled = alternation(state);
    return state.at === pattern.length ? spelled : undefined;
  } catch {
    return undefined;
  }
}

interface PatternState {
  readonly pattern: string;
  at: number;
}

/** The first alternative, with the others skipped. */
function alternation(s: PatternState): string {
  const first = sequence(s);
  while (s.pattern[s.at] === '|') {
    s.at++;
    sequence(s);
  }
  return first;
}

function sequence(s: PatternState): string {
  let out = '';
  while (s.at < s.pattern.length) {
    const char = s.pattern[s.at] as string;
    if (char === '|' || char === ')') break;
    if (char === '^' || char === '$') {
      s.at++;
      continue;
    }
    const atom = atomAt(s);
    const count = leastCount(s);
    if (out.length + atom.length * count > MAX_SPELLED) throw new Error('longer than MAX_SPELLED');
    out += atom.repeat(count);
  }
  return out;
}

function atomAt(s: PatternState): string {
  const p = s.pattern;
  const char = p[s.at] as string;
  if (char === '(') {
    s.at++;
    if (p[s.at] === '?') {
      if (p[s.at + 1] !== ':') throw new Error('lookaround or named group');
      s.at += 2;
    }
    const inner = alternation(s);
    if (p[s.at] !== ')') throw new Error('unclosed group');
    s.at++;
    return inner;
  }
  if (char === '[') {
    let end = s.at + 1;
    // As in JavaScript, a `]` right after `[` or `[^` closes the class (`[]` matches nothing, `[^]` anything).
    if (p[end] === '^') end++;
    while (end < p.length && p[end] !== ']') end += p[end] === '\\' ? 2 : 1;
    const text = p.slice(s.at, end + 1);
    s.at = end + 1;
    return classCharacter(text);
  }
  if (char === '.') {
    s.at++;
    return 'a';
  }
  if (char === '\\') return escapeAt(s);
  s.at += char.length;
  return char;
}

function escapeAt(s: PatternState): string {
  const p = s.pattern;
  const next = p[s.at + 1];
  if (next === undefined) throw new Error('trailing backslash');
  if ((next === 'p' || next === 'P') && p[s.at + 2] === '{') {
    const end = p.indexOf('}', s.at);
    if (end === -1) throw new Error('unclosed property escape');
    const text = p.slice(s.at, end + 1);
    s.at = end + 1;
    return classCharacter(text);
  }
  if (next === 'u' || next === 'x') {
    const braced = next === 'u' && p[s.at + 2] === '{';
    const end = braced ? p.indexOf('}', s.at) + 1 : s.at + (next === 'u' ? 6 : 4);
    if (end === 0 || end > p.length) throw new Error('unclosed escape');
    const hex = p.slice(s.at + (braced ? 3 : 2), braced ? end - 1 : end);
    s.at = end;
    return String.fromCodePoint(Number.parseInt(hex, 16));
  }
  if (next >= '1' && next <= '9') throw new Error('back-reference');
  s.at += 2;
  if (next === 'b' || next === 'B') return '';
  if ('dDwWsS'.includes(next)) return classCharacter(`\\${next}`);
  if (Object.hasOwn(CONTROL_ESCAPES, next)) return CONTROL_ESCAPES[next] as string;
  return next;
}

const CONTROL_ESCAPES: Readonly<Record<string, string>> = { t: '\t', n: '\n', r: '\r', f: '\f', v: '\v', '0': '\0' };

/** The first candidate the class or escape matches. */
function classCharacter(text: string): string {
  const whole = new RegExp(`^${text}$`, 'u');
  const found = CLASS_CANDIDATES.find((c) => whole.test(c));
  if (found !== undefined) return found;
  throw new Error(`no candidate for ${text}`);
}

/** The least count of the quantifier at `s.at` (1 when there is none); a lazy `?` after it is skipped. */
function leastCount(s: PatternState): number {
  const p = s.pattern;
  const char = p[s.at];
  let count = 1;
  if (char === '*' || char === '?') {
    count = 0;
    s.at++;
  } else if (char === '+') {
    s.at++;
  } else if (char === '{') {
    const close = p.indexOf('}', s.at);
    const match = close === -1 ? null : /^\{(\d+)(,\d*)?\}$/.exec(p.slice(s.at, close + 1));
    if (match === null) return 1;
    count = Math.min(Number(match[1]), MAX_REPEAT);
    s.at = close + 1;
  } else {
    return 1;
  }
  if (p[s.at] === '?') s.at++;
  return count;
}
