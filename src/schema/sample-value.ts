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
// take minItems items.
//
// Bounded for every schema, strict or not: the walk builds at most MAX_VALUES
// values (every subschema it visits counts, objects, `$ref` and `anyOf` too),
// looks at most MAX_SCANNED property names, branches and type entries, and
// writes at most MAX_CHARACTERS characters of JSON (a `const` or `enum` value
// is measured once per subschema). A schema whose value would be larger (a
// definition that names the next one twice, 20 deep, is a value of a million
// strings) makes the walk give up: `buildSample` says it is not complete, and
// the demo provider answers with a refusal instead.
//
// A client's `pattern` runs only on the gateway's linear-time matcher
// (./pattern-match.ts; a pattern it cannot run gives no string: "demo"), at
// most MAX_PATTERN_LENGTH characters, its steps taken from MAX_PATTERN_STEPS
// for the whole value. Spelling a pattern costs 10 a character (a class is a
// small regular expression tried on a few characters). A pattern not run on a
// string does not give it: the string is "demo". Each pattern is worked out
// once per value, however often it is met.
import { compileLinearPattern, LinearPattern, Match } from './pattern-match.ts';
import { patternInstance } from './pattern-spelling.ts';
import { isPlainObject, refTarget } from './strict-schema.ts';

export { patternInstance } from './pattern-spelling.ts';

const RECURSION_DEPTH = 8;
const MAX_DEPTH = 64;
export const MAX_VALUES = 10_000;
const MAX_SCANNED = 100_000;
export const MAX_CHARACTERS = 1_000_000;
/** As the strict subset's default maxPatternLength. */
const MAX_PATTERN_LENGTH = 1000;
const MAX_PATTERN_STEPS = 10_000_000;
const SPELLING_STEPS_PER_CHARACTER = 10;
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
  scanned: number;
  characters: number;
  /** Set when a budget ran out: the value is cut short. */
  exhausted: boolean;
  /** JSON characters of each `const` or `enum` value met, by its subschema. */
  readonly sizes: WeakMap<Schema, number>;
  /** The string of each `pattern`, worked out once. */
  readonly patterned: Map<string, string>;
  /** The target of each subschema with a `$ref` (null: none), resolved once: a reference may be long. */
  readonly targets: WeakMap<Schema, Schema | null>;
  /** What is left of MAX_PATTERN_STEPS. */
  patternSteps: number;
}

/** The instance of a schema, and what building it took. */
export interface Sample {
  readonly value: unknown;
  /** False when a budget ran out: `value` is cut short and may not pass the schema. */
  readonly complete: boolean;
  readonly values: number;
  /** JSON characters of `value`, roughly (separators and numbers estimated). */
  readonly characters: number;
}

/** The instance of `schema` by the rules of the file header; `text` fills the first free string. */
export function buildSample(schema: unknown, text = FREE_STRING): Sample {
  const root = isPlainObject(schema) ? schema : {};
  const walk: Walk = { root, text, values: 0, scanned: 0, characters: 0, exhausted: false, sizes: new WeakMap(), patterned: new Map(), targets: new WeakMap(), patternSteps: MAX_PATTERN_STEPS };
  const value = instance(root, walk, 0);
  return { value, complete: !walk.exhausted, values: walk.values, characters: walk.characters };
}

/** The value of `buildSample`, complete or not. */
export function sampleValue(schema: unknown, text = FREE_STRING): unknown {
  return buildSample(schema, text).value;
}

/** Counts `scanned` entries; false (and the walk exhausted) past a budget. */
function spend(walk: Walk, scanned: number, characters: number): boolean {
  walk.scanned += scanned;
  walk.characters += characters;
  if (walk.scanned > MAX_SCANNED || walk.characters > MAX_CHARACTERS) walk.exhausted = true;
  return !walk.exhausted;
}

function instance(schema: Schema, walk: Walk, depth: number): unknown {
  if (walk.exhausted || walk.values >= MAX_VALUES) {
    walk.exhausted = true;
    return null;
  }
  walk.values++;
  if (Object.hasOwn(schema, 'const')) return fixed(schema, schema['const'], walk);
  const values = schema['enum'];
  if (Array.isArray(values) && values.length > 0) return fixed(schema, values[0], walk);
  if (depth >= MAX_DEPTH) return leaf(walk, null);
  const ref = schema['$ref'];
  if (typeof ref === 'string') {
    let target = walk.targets.get(schema);
    if (target === undefined) {
      target = resolve(walk.root, ref) ?? null;
      walk.targets.set(schema, target);
    }
    return target === null ? leaf(walk, null) : instance(target, walk, depth + 1);
  }
  const branches = schema['anyOf'];
  if (Array.isArray(branches) && branches.length > 0) {
    if (!spend(walk, branches.length, 0)) return null;
    const branch = depth >= RECURSION_DEPTH ? (branches.find((b) => isPlainObject(b) && !('$ref' in b)) ?? branches[0]) : branches[0];
    return isPlainObject(branch) ? instance(branch, walk, depth + 1) : leaf(walk, null);
  }
  const type = schema['type'];
  if (Array.isArray(type) && !spend(walk, type.length, 0)) return null;
  switch (typeOf(type, depth)) {
    case 'object':
      return objectInstance(schema, walk, depth);
    case 'array':
      return arrayInstance(schema, walk, depth);
    case 'string':
      return leaf(walk, stringInstance(schema, walk));
    case 'number':
      return leaf(walk, numberInstance(schema, false));
    case 'integer':
      return leaf(walk, numberInstance(schema, true));
    case 'boolean':
      return leaf(walk, true);
    default:
      return leaf(walk, null);
  }
}

/** A string, number, boolean or null, its characters counted. */
function leaf<T>(walk: Walk, value: T): T {
  spend(walk, 0, typeof value === 'string' ? value.length + 2 : typeof value === 'number' ? String(value).length : 5);
  return value;
}

/** A `const` or `enum` value, its JSON size measured once per subschema. */
function fixed(schema: Schema, value: unknown, walk: Walk): unknown {
  let size = walk.sizes.get(schema);
  if (size === undefined) {
    size = jsonSize(value, MAX_CHARACTERS + 1);
    walk.sizes.set(schema, size);
  }
  spend(walk, 0, size);
  return value;
}

/** Characters of `value` as JSON, roughly, counted up to `limit` at most. */
function jsonSize(value: unknown, limit: number): number {
  if (typeof value === 'string') return value.length + 2;
  if (typeof value !== 'object' || value === null) return 24;
  let size = 2;
  if (Array.isArray(value)) {
    for (const item of value) {
      size += jsonSize(item, limit - size) + 1;
      if (size > limit) return size;
    }
    return size;
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    size += key.length + 4 + jsonSize((value as Record<string, unknown>)[key], limit - size);
    if (size > limit) return size;
  }
  return size;
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
  const names = Object.keys(properties);
  const listed = Array.isArray(schema['required']) ? schema['required'] : [];
  if (!spend(walk, names.length + listed.length, 2)) return out;
  const required = new Set<unknown>(listed);
  for (const name of names) {
    const property = properties[name];
    if (!required.has(name) || !isPlainObject(property)) continue;
    if (!spend(walk, 0, name.length + 4)) break;
    Object.defineProperty(out, name, { value: instance(property, walk, depth + 1), enumerable: true, writable: true, configurable: true });
    if (walk.exhausted) break;
  }
  return out;
}

function arrayInstance(schema: Schema, walk: Walk, depth: number): unknown[] {
  const min = nonNegative(schema['minItems'], 0);
  const max = nonNegative(schema['maxItems'], Infinity);
  const wanted = Math.min(depth >= RECURSION_DEPTH ? min : Math.max(min, 1), max);
  const items = schema['items'];
  const out: unknown[] = [];
  if (!spend(walk, 0, 2) || !isPlainObject(items)) return out;
  while (out.length < wanted && !walk.exhausted) {
    const item = instance(items, walk, depth + 1);
    if (walk.exhausted) break;
    out.push(item);
    spend(walk, 0, 1);
  }
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
    let string = walk.patterned.get(pattern);
    if (string === undefined) {
      string = patternedString(pattern, walk);
      walk.patterned.set(pattern, string);
    }
    return string;
  }
  const text = walk.text;
  if (text === undefined) return FREE_STRING;
  walk.text = undefined;
  return text;
}

/** "demo" when the pattern matches it, else the spelled string when the pattern matches that, else "demo". */
function patternedString(pattern: string, walk: Walk): string {
  const compiled = runnablePattern(pattern);
  if (compiled === null || matches(compiled, FREE_STRING, walk) !== false) return FREE_STRING;
  const spelling = pattern.length * SPELLING_STEPS_PER_CHARACTER;
  if (spelling > walk.patternSteps) return FREE_STRING;
  walk.patternSteps -= spelling;
  const spelled = patternInstance(pattern);
  return spelled !== undefined && matches(compiled, spelled, walk) === true ? spelled : FREE_STRING;
}

/** The pattern on the linear-time matcher, when it is short and the matcher runs it; null otherwise. */
function runnablePattern(pattern: string): LinearPattern | null {
  if (pattern.length > MAX_PATTERN_LENGTH) return null;
  const compiled = compileLinearPattern(pattern);
  return compiled instanceof LinearPattern ? compiled : null;
}

/** Whether the pattern matches `subject`; undefined when the steps left run out first. */
function matches(pattern: LinearPattern, subject: string, walk: Walk): boolean | undefined {
  const budget = { steps: walk.patternSteps };
  const result = pattern.test(subject, budget);
  walk.patternSteps = Math.max(0, budget.steps);
  return result === Match.OutOfSteps ? undefined : result === Match.Yes;
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
