// A deterministic instance of a JSON schema: what the demo provider answers a
// json_schema request with, so structured outputs can be tried with no model.
// Built for the strict subset (./strict-schema.ts); any other schema gets the
// same rules as far as they go, with no promise that the value passes.
//
// Rules, per subschema:
// - `const` is its value; `enum` its first value; `anyOf` its first branch;
//   `$ref` (`#` or `#/$defs/<name>`) the schema it names.
// - `type`: the first listed type that is not "null" ("null" when it is the only one).
// - object: every required property, in the order of `properties`.
// - array: max(minItems, 1) items, at most maxItems, each the instance of `items`.
// - string: a `format`'s fixed example (FORMAT_EXAMPLES); with a `pattern`,
//   "demo" when it matches, else the shortest string the pattern's first
//   alternatives spell (`patternInstance`); otherwise the first such free
//   string gets `text` (the caller's echo) and every later one "demo".
// - number and integer: 0 when the bounds allow it, else the bound nearest 0
//   (an exclusive bound stepped past by 1, or by multipleOf when given),
//   rounded to a multiple of multipleOf away from 0.
// - boolean true, null null.
// Below depth RECURSION_DEPTH the value heads for the smallest end: a type
// list takes "null" when it has it, anyOf a branch without `$ref`, arrays
// take minItems items; past MAX_VALUES values in all, arrays stop growing,
// so a hostile schema (nested minItems of millions) cannot make a large value.
import { nestedRepetitionAt } from './pattern-safety.ts';
import { isPlainObject, refTarget } from './strict-schema.ts';

const RECURSION_DEPTH = 8;
const MAX_DEPTH = 64;
const MAX_VALUES = 10_000;
const MAX_REPEAT = 1000;
/** The longest string a pattern may spell: fixed counts multiply (`((a{1000}){1000}){1000}`). */
const MAX_SPELLED = 1000;
const FREE_STRING = 'demo';

/** One example each format of ./string-formats.ts accepts. */
export const FORMAT_EXAMPLES: Readonly<Record<string, string>> = Object.freeze({
  'date-time': '2000-01-01T00:00:00Z',
  date: '2000-01-01',
  time: '00:00:00Z',
  duration: 'P1D',
  email: 'demo@example.com',
  hostname: 'example.com',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  uuid: '00000000-0000-4000-8000-000000000000',
});

type Schema = Record<string, unknown>;

interface Walk {
  readonly root: Schema;
  /** The text for the first free string; undefined once used. */
  text: string | undefined;
  values: number;
}

/** The instance of `schema` by the rules of the file header; `text` fills the first free string. */
export function sampleValue(schema: unknown, text = FREE_STRING): unknown {
  const root = isPlainObject(schema) ? schema : {};
  return instance(root, { root, text, values: 0 }, 0);
}

function instance(schema: Schema, walk: Walk, depth: number): unknown {
  walk.values++;
  if (Object.hasOwn(schema, 'const')) return schema['const'];
  const values = schema['enum'];
  if (Array.isArray(values) && values.length > 0) return values[0];
  if (depth >= MAX_DEPTH) return null;
  const ref = schema['$ref'];
  if (typeof ref === 'string') {
    const target = resolve(walk.root, ref);
    return target === undefined ? null : instance(target, walk, depth + 1);
  }
  const branches = schema['anyOf'];
  if (Array.isArray(branches) && branches.length > 0) {
    const branch = depth >= RECURSION_DEPTH ? (branches.find((b) => isPlainObject(b) && !('$ref' in b)) ?? branches[0]) : branches[0];
    return isPlainObject(branch) ? instance(branch, walk, depth + 1) : null;
  }
  switch (typeOf(schema['type'], depth)) {
    case 'object':
      return objectInstance(schema, walk, depth);
    case 'array':
      return arrayInstance(schema, walk, depth);
    case 'string':
      return stringInstance(schema, walk);
    case 'number':
      return numberInstance(schema, false);
    case 'integer':
      return numberInstance(schema, true);
    case 'boolean':
      return true;
    default:
      return null;
  }
}

function typeOf(type: unknown, depth: number): string | undefined {
  if (!Array.isArray(type)) return typeof type === 'string' ? type : undefined;
  if (depth >= RECURSION_DEPTH && type.includes('null')) return 'null';
  const first = type.find((t) => t !== 'null');
  return typeof first === 'string' ? first : type.length > 0 ? 'null' : undefined;
}

function resolve(root: Schema, ref: string): Schema | undefined {
  if (ref === '#') return root;
  const name = refTarget(ref);
  const defs = root['$defs'];
  if (name === null || !isPlainObject(defs) || !Object.hasOwn(defs, name)) return undefined;
  const target = defs[name];
  return isPlainObject(target) ? target : undefined;
}

function objectInstance(schema: Schema, walk: Walk, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const properties = isPlainObject(schema['properties']) ? schema['properties'] : {};
  const required = Array.isArray(schema['required']) ? new Set(schema['required']) : new Set<unknown>();
  for (const name of Object.keys(properties)) {
    const property = properties[name];
    if (!required.has(name) || !isPlainObject(property)) continue;
    Object.defineProperty(out, name, { value: instance(property, walk, depth + 1), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function arrayInstance(schema: Schema, walk: Walk, depth: number): unknown[] {
  const min = nonNegative(schema['minItems'], 0);
  const max = nonNegative(schema['maxItems'], Infinity);
  const wanted = Math.min(depth >= RECURSION_DEPTH ? min : Math.max(min, 1), max);
  const items = schema['items'];
  const out: unknown[] = [];
  if (!isPlainObject(items)) return out;
  while (out.length < wanted && walk.values < MAX_VALUES) out.push(instance(items, walk, depth + 1));
  return out;
}

function nonNegative(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : fallback;
}

function stringInstance(schema: Schema, walk: Walk): string {
  const format = schema['format'];
  const pattern = schema['pattern'];
  if (typeof format === 'string' && Object.hasOwn(FORMAT_EXAMPLES, format)) return FORMAT_EXAMPLES[format] as string;
  if (typeof pattern === 'string') {
    const compiled = compilePattern(pattern);
    if (compiled === null || compiled.test(FREE_STRING)) return FREE_STRING;
    // A pattern that can backtrack exponentially (refused in strict schemas) is not run on a longer string.
    if (nestedRepetitionAt(pattern) !== -1) return FREE_STRING;
    const spelled = patternInstance(pattern);
    return spelled !== undefined && compiled.test(spelled) ? spelled : FREE_STRING;
  }
  const text = walk.text;
  if (text === undefined) return FREE_STRING;
  walk.text = undefined;
  return text;
}

function compilePattern(pattern: string): RegExp | null {
  try {
    return new RegExp(pattern, 'u');
  } catch {
    return null;
  }
}

function numberInstance(schema: Schema, integer: boolean): number {
  const step = typeof schema['multipleOf'] === 'number' && schema['multipleOf'] > 0 ? schema['multipleOf'] : integer ? 1 : 0;
  const low = bound(schema, 'minimum', 'exclusiveMinimum', -1, step);
  const high = bound(schema, 'maximum', 'exclusiveMaximum', 1, step);
  let value = low > 0 ? low : high < 0 ? high : 0;
  if (step > 0) value = (value >= 0 ? Math.ceil(value / step - 1e-9) : Math.floor(value / step + 1e-9)) * step;
  return Object.is(value, -0) ? 0 : value;
}

/** The inclusive bound on one side: the tighter of the inclusive and the stepped-past exclusive one. */
function bound(schema: Schema, inclusive: string, exclusive: string, side: -1 | 1, step: number): number {
  let limit = side * Infinity;
  const a = schema[inclusive];
  if (typeof a === 'number' && Number.isFinite(a)) limit = a;
  const b = schema[exclusive];
  if (typeof b === 'number' && Number.isFinite(b)) {
    const stepped = b - side * (step > 0 ? step : 1);
    limit = side < 0 ? Math.max(limit, stepped) : Math.min(limit, stepped);
  }
  return limit;
}

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
    if (p[end] === '^') end++;
    if (p[end] === ']') end++;
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
    const text = p.slice(s.at, end + 1);
    s.at = end + 1;
    return classCharacter(text);
  }
  if (next === 'u' || next === 'x') {
    const braced = next === 'u' && p[s.at + 2] === '{';
    const end = braced ? p.indexOf('}', s.at) + 1 : s.at + (next === 'u' ? 6 : 4);
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
