// Whether a JSON schema stays inside the subset OpenAI's structured outputs
// accept in strict mode, and inside that mode's size limits: one walk over the
// schema that stops at the first problem and names its JSON path and keyword.
// A schema accepted here is what compileSchema (compile.ts) turns into a checker.
//
// https://platform.openai.com/docs/guides/structured-outputs#supported-schemas
// "Supported types: String, Number, Boolean, Integer, Object, Array, Enum, anyOf";
// "all fields must be required"; "additionalProperties: false must always be set
// in objects"; "the root level object must be an object, and not use anyOf";
// definitions and recursion through `$defs` and `$ref` are supported.

import { compileLinearPattern } from './pattern-match.ts';
import { renderPath, type PathSegment } from './schema-path.ts';
import { STRING_FORMATS, STRING_FORMAT_NAMES } from './string-formats.ts';

export interface StrictSchemaLimits {
  /** Objects nested in objects (through properties, items, anyOf and $defs); OpenAI allows 10. */
  readonly maxObjectDepth: number;
  /** Subschemas nested in subschemas, of any type: keeps the walk and the checker's recursion bounded. */
  readonly maxSchemaDepth: number;
  /** Subschemas in the whole schema, the root and every definition counted. */
  readonly maxSchemaNodes: number;
  /** Properties of all objects together; OpenAI allows 5,000. */
  readonly maxProperties: number;
  /** Enum values of all enums together; OpenAI allows 1,000. */
  readonly maxEnumValues: number;
  /** Characters of property names, definition names, enum and const string values together; OpenAI allows 120,000. */
  readonly maxNameLength: number;
  /** A string enum with more values than this has its own character bound (maxLargeEnumLength); OpenAI: 250. */
  readonly largeEnumValues: number;
  /** Characters of one large string enum's values together; OpenAI allows 15,000. */
  readonly maxLargeEnumLength: number;
  /** Characters of one `pattern`: a regular expression is compiled per schema, so its size is bounded. */
  readonly maxPatternLength: number;
}

export const DEFAULT_STRICT_SCHEMA_LIMITS: StrictSchemaLimits = Object.freeze({
  maxObjectDepth: 10,
  maxSchemaDepth: 32,
  maxSchemaNodes: 10_000,
  maxProperties: 5_000,
  maxEnumValues: 1_000,
  maxNameLength: 120_000,
  largeEnumValues: 250,
  maxLargeEnumLength: 15_000,
  maxPatternLength: 1_000,
});

/** Why a schema is outside the strict subset: where (a JSON path into the schema), which keyword, and a sentence naming both. */
export interface StrictSchemaProblem {
  readonly path: string;
  readonly keyword: string;
  readonly message: string;
}

export const SCHEMA_TYPES: readonly string[] = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'];

/** Annotations: read by no checker. LangChain (with zod 4) and pydantic put `title` on subschemas. */
const ANNOTATION = new Set(['description', 'title']);
const KEYWORDS_BY_TYPE: Readonly<Record<string, readonly string[]>> = {
  object: ['properties', 'required', 'additionalProperties'],
  array: ['items', 'minItems', 'maxItems'],
  string: ['pattern', 'format'],
  number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  integer: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
};
const TYPED_KEYWORDS = new Set(Object.values(KEYWORDS_BY_TYPE).flat());
const NUMBER_BOUNDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'] as const;
const DEFS_PREFIX = '#/$defs/';

class Refusal extends Error {
  readonly problem: StrictSchemaProblem;
  constructor(problem: StrictSchemaProblem) {
    super(problem.message);
    this.problem = problem;
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The definition a `$ref` names, decoded per RFC 6901 (`~1` is `/`, `~0` is `~`), or null for `#` (the root). */
export function refTarget(ref: string): string | null {
  if (ref === '#') return null;
  return ref.slice(DEFS_PREFIX.length).replaceAll('~1', '/').replaceAll('~0', '~');
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function allows(types: readonly string[], value: unknown): boolean {
  const type = jsonType(value);
  return types.includes(type) || (type === 'integer' && types.includes('number'));
}

class StrictSchemaWalk {
  readonly limits: StrictSchemaLimits;
  readonly defs: Record<string, unknown>;
  readonly path: PathSegment[] = [];
  nodes = 0;
  properties = 0;
  enumValues = 0;
  nameLength = 0;

  constructor(limits: StrictSchemaLimits, defs: Record<string, unknown>) {
    this.limits = limits;
    this.defs = defs;
  }

  refuse(keyword: string, text: string, extra?: PathSegment): never {
    const segments = extra === undefined ? this.path : [...this.path, extra];
    const path = renderPath(segments);
    throw new Refusal({ path, keyword, message: `${path}: ${text}` });
  }

  countName(name: string, keyword: string): void {
    this.nameLength += name.length;
    if (this.nameLength > this.limits.maxNameLength) {
      this.refuse(keyword, `the schema's names and enum values are longer than ${this.limits.maxNameLength} characters together`, keyword);
    }
  }

  child(segments: readonly PathSegment[], schema: unknown, depth: number, objectDepth: number): void {
    for (const segment of segments) this.path.push(segment);
    this.node(schema, depth, objectDepth);
    this.path.length -= segments.length;
  }

  node(schema: unknown, depth: number, objectDepth: number): void {
    if (!isPlainObject(schema)) this.refuse('type', `a schema must be a JSON object, not ${jsonType(schema)}`);
    if (++this.nodes > this.limits.maxSchemaNodes) this.refuse('type', `the schema has more than ${this.limits.maxSchemaNodes} subschemas`);
    if (depth > this.limits.maxSchemaDepth) this.refuse('type', `subschemas are nested deeper than ${this.limits.maxSchemaDepth} levels`);
    if ('$ref' in schema) return this.ref(schema);
    if ('anyOf' in schema) return this.anyOf(schema, depth, objectDepth);
    const types = this.types(schema);
    for (const key of Object.keys(schema)) {
      if (key === 'type' || key === 'enum' || key === 'const' || ANNOTATION.has(key)) continue;
      // Every SDK that makes schemas from zod names the dialect; it changes nothing here.
      if ((key === '$defs' || key === '$schema') && depth === 0) continue;
      if (!TYPED_KEYWORDS.has(key)) {
        this.refuse(key, key === '$defs' || key === '$schema' ? `"${key}" is allowed only at the root` : `"${key}" is not supported in strict mode`, key);
      }
      if (types === null || !types.some((type) => KEYWORDS_BY_TYPE[type]?.includes(key))) {
        this.refuse(key, `"${key}" needs a type that uses it (${types === null ? 'no type is given' : `type is ${types.join(', ')}`})`, key);
      }
    }
    if (depth === 0 && '$schema' in schema && typeof schema.$schema !== 'string') this.refuse('$schema', '"$schema" must be a string', '$schema');
    if ('description' in schema && typeof schema.description !== 'string') this.refuse('description', '"description" must be a string', 'description');
    if ('title' in schema && typeof schema.title !== 'string') this.refuse('title', '"title" must be a string', 'title');
    if ('enum' in schema) this.enumeration(schema.enum, types);
    if ('const' in schema) this.constant(schema.const, types);
    if (types === null) {
      if (!('enum' in schema) && !('const' in schema)) this.refuse('type', 'a schema needs "type", "enum", "const", "anyOf" or "$ref"');
      return;
    }
    let childObjectDepth = objectDepth;
    if (types.includes('object')) {
      if (objectDepth + 1 > this.limits.maxObjectDepth) this.refuse('type', `objects are nested deeper than ${this.limits.maxObjectDepth} levels`);
      childObjectDepth = objectDepth + 1;
      this.object(schema, depth, childObjectDepth);
    }
    if (types.includes('array')) this.array(schema, depth, childObjectDepth);
    if (types.includes('string')) this.string(schema);
    if (types.includes('number') || types.includes('integer')) this.number(schema);
  }

  types(schema: Record<string, unknown>): readonly string[] | null {
    if (!('type' in schema)) return null;
    const type = schema.type;
    const list = Array.isArray(type) ? type : [type];
    if (list.length === 0) this.refuse('type', '"type" must name at least one type', 'type');
    for (let i = 0; i < list.length; i++) {
      const entry: unknown = list[i];
      if (typeof entry !== 'string' || !SCHEMA_TYPES.includes(entry)) {
        this.refuse('type', `"type" must be one of ${SCHEMA_TYPES.join(', ')}`, 'type');
      }
      if (list.indexOf(entry) !== i) this.refuse('type', `"type" names ${entry} twice`, 'type');
    }
    return list as string[];
  }

  ref(schema: Record<string, unknown>): void {
    for (const key of Object.keys(schema)) {
      if (key !== '$ref' && !ANNOTATION.has(key)) this.refuse(key, `"${key}" cannot stand beside "$ref"`, key);
    }
    const ref = schema.$ref;
    if (typeof ref !== 'string' || (ref !== '#' && !ref.startsWith(DEFS_PREFIX))) {
      this.refuse('$ref', '"$ref" must be "#" or "#/$defs/<name>"', '$ref');
    }
    const name = refTarget(ref);
    if (name !== null && !Object.hasOwn(this.defs, name)) this.refuse('$ref', `"$ref" names ${JSON.stringify(name)}, which "$defs" does not define`, '$ref');
  }

  anyOf(schema: Record<string, unknown>, depth: number, objectDepth: number): void {
    if (depth === 0) this.refuse('anyOf', 'the root must be an object, not "anyOf"', 'anyOf');
    for (const key of Object.keys(schema)) {
      if (key !== 'anyOf' && !ANNOTATION.has(key)) this.refuse(key, `"${key}" cannot stand beside "anyOf"`, key);
    }
    const branches = schema.anyOf;
    if (!Array.isArray(branches) || branches.length === 0) this.refuse('anyOf', '"anyOf" must be a non-empty array of schemas', 'anyOf');
    for (let i = 0; i < branches.length; i++) this.child(['anyOf', i], branches[i], depth + 1, objectDepth);
  }

  enumeration(values: unknown, types: readonly string[] | null): void {
    if (!Array.isArray(values) || values.length === 0) this.refuse('enum', '"enum" must be a non-empty array', 'enum');
    this.enumValues += values.length;
    if (this.enumValues > this.limits.maxEnumValues) this.refuse('enum', `the schema has more than ${this.limits.maxEnumValues} enum values`, 'enum');
    let stringLength = 0;
    for (let i = 0; i < values.length; i++) {
      const value: unknown = values[i];
      if (value !== null && typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
        this.refuse('enum', 'enum values must be strings, numbers, booleans or null', 'enum');
      }
      if (types !== null && !allows(types, value)) this.refuse('enum', `enum value ${JSON.stringify(value)} is not of type ${types.join(', ')}`, 'enum');
      if (values.indexOf(value) !== i) this.refuse('enum', `enum value ${JSON.stringify(value)} is listed twice`, 'enum');
      if (typeof value === 'string') {
        stringLength += value.length;
        this.countName(value, 'enum');
      }
    }
    if (values.length > this.limits.largeEnumValues && stringLength > this.limits.maxLargeEnumLength) {
      this.refuse('enum', `an enum of more than ${this.limits.largeEnumValues} values may hold ${this.limits.maxLargeEnumLength} characters, this one holds ${stringLength}`, 'enum');
    }
  }

  constant(value: unknown, types: readonly string[] | null): void {
    if (value !== null && typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      this.refuse('const', '"const" must be a string, number, boolean or null', 'const');
    }
    if (types !== null && !allows(types, value)) this.refuse('const', `"const" ${JSON.stringify(value)} is not of type ${types.join(', ')}`, 'const');
    if (typeof value === 'string') this.countName(value, 'const');
  }

  object(schema: Record<string, unknown>, depth: number, objectDepth: number): void {
    if (schema.additionalProperties !== false) this.refuse('additionalProperties', 'an object must set "additionalProperties": false', 'additionalProperties');
    const properties = schema.properties;
    if (!isPlainObject(properties)) this.refuse('properties', 'an object must list its "properties" (an object of schemas)', 'properties');
    const names = Object.keys(properties);
    this.properties += names.length;
    if (this.properties > this.limits.maxProperties) this.refuse('properties', `the schema has more than ${this.limits.maxProperties} properties`, 'properties');
    const required = schema.required ?? [];
    if (!Array.isArray(required)) this.refuse('required', '"required" must be an array of property names', 'required');
    for (let i = 0; i < required.length; i++) {
      const name: unknown = required[i];
      if (typeof name !== 'string') this.refuse('required', '"required" must be an array of property names', 'required');
      if (!Object.hasOwn(properties, name)) this.refuse('required', `"required" names ${JSON.stringify(name)}, which "properties" does not define`, 'required');
      if (required.indexOf(name) !== i) this.refuse('required', `"required" names ${JSON.stringify(name)} twice`, 'required');
    }
    for (const name of names) {
      if (!required.includes(name)) this.refuse('required', `every property must be required: add ${JSON.stringify(name)} to "required" (allow null in its type to make it optional)`, 'required');
      this.countName(name, 'properties');
      this.child(['properties', name], properties[name], depth + 1, objectDepth);
    }
  }

  array(schema: Record<string, unknown>, depth: number, objectDepth: number): void {
    if (!('items' in schema)) this.refuse('items', 'an array must give its "items" schema', 'items');
    const min = this.count(schema, 'minItems');
    const max = this.count(schema, 'maxItems');
    if (min !== null && max !== null && min > max) this.refuse('minItems', '"minItems" is larger than "maxItems"', 'minItems');
    this.child(['items'], schema.items, depth + 1, objectDepth);
  }

  count(schema: Record<string, unknown>, keyword: string): number | null {
    if (!(keyword in schema)) return null;
    const value = schema[keyword];
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) this.refuse(keyword, `"${keyword}" must be a non-negative integer`, keyword);
    return value;
  }

  string(schema: Record<string, unknown>): void {
    if ('format' in schema) {
      const format = schema.format;
      if (typeof format !== 'string' || !Object.hasOwn(STRING_FORMATS, format)) {
        this.refuse('format', `"format" must be one of ${STRING_FORMAT_NAMES.join(', ')}`, 'format');
      }
    }
    if ('pattern' in schema) {
      const pattern = schema.pattern;
      if (typeof pattern !== 'string') this.refuse('pattern', '"pattern" must be a string', 'pattern');
      if (pattern.length > this.limits.maxPatternLength) this.refuse('pattern', `"pattern" is longer than ${this.limits.maxPatternLength} characters`, 'pattern');
      try {
        new RegExp(pattern, 'u');
      } catch (error) {
        this.refuse('pattern', `"pattern" is not a valid regular expression (${(error as Error).message})`, 'pattern');
      }
      // Answers are matched in linear time, by the gateway's own matcher; what it cannot run is refused here, not met on an answer.
      const compiled = compileLinearPattern(pattern);
      if ('feature' in compiled) {
        this.refuse('pattern', compiled.at === -1
          ? `"pattern" ${compiled.feature}`
          : `"pattern" uses ${compiled.feature} at character ${compiled.at}, which the gateway's linear-time matcher does not support`, 'pattern');
      }
    }
  }

  number(schema: Record<string, unknown>): void {
    for (const keyword of NUMBER_BOUNDS) {
      if (keyword in schema && (typeof schema[keyword] !== 'number' || !Number.isFinite(schema[keyword]))) {
        this.refuse(keyword, `"${keyword}" must be a number`, keyword);
      }
    }
    if ('multipleOf' in schema) {
      const step = schema.multipleOf;
      if (typeof step !== 'number' || !Number.isFinite(step) || step <= 0) this.refuse('multipleOf', '"multipleOf" must be a number above 0', 'multipleOf');
    }
  }
}

/** The definitions a schema stands for without reading into the value: its `$ref`, or its anyOf branches' (recursively). */
function immediateRefs(schema: unknown, out: string[]): string[] {
  if (!isPlainObject(schema)) return out;
  if (typeof schema.$ref === 'string') {
    const name = refTarget(schema.$ref);
    if (name !== null) out.push(name);
  } else if (Array.isArray(schema.anyOf)) {
    for (const branch of schema.anyOf) immediateRefs(branch, out);
  }
  return out;
}

/**
 * Recursion is allowed only through an object's properties or an array's
 * items, where each step reads one level deeper into the value. Definitions
 * that stand for each other directly (`a` is `$ref b`, `b` is `anyOf [$ref a]`)
 * would make the checker loop without consuming anything, so they are refused.
 */
function refuseUnguardedCycles(walk: StrictSchemaWalk, defs: Record<string, unknown>): void {
  // A depth-first search with its own stack, not recursion: a chain of such definitions may be thousands long.
  const Visit = { Open: 1, Done: 2 } as const;
  const state = new Map<string, number>();
  const trail: string[] = [];
  const pending: string[][] = [];
  for (const start of Object.keys(defs)) {
    if (state.has(start)) continue;
    state.set(start, Visit.Open);
    trail.push(start);
    pending.push(immediateRefs(defs[start], []).reverse());
    while (trail.length > 0) {
      const next = (pending[pending.length - 1] as string[]).pop();
      if (next === undefined) {
        state.set(trail.pop() as string, Visit.Done);
        pending.pop();
        continue;
      }
      const seen = state.get(next);
      if (seen === Visit.Done) continue;
      if (seen === Visit.Open) {
        const cycle = [...trail.slice(trail.indexOf(next)), next].join(' -> ');
        walk.path.length = 0;
        walk.path.push('$defs', next);
        walk.refuse('$ref', `definitions refer to each other with no object or array between (${cycle})`);
      }
      state.set(next, Visit.Open);
      trail.push(next);
      pending.push(immediateRefs(defs[next], []).reverse());
    }
  }
}

/**
 * Null when `schema` is inside OpenAI's strict subset and `limits`, else the
 * first problem found: its JSON path in the schema, its keyword and a message.
 */
export function checkStrictSchema(schema: unknown, limits: StrictSchemaLimits = DEFAULT_STRICT_SCHEMA_LIMITS): StrictSchemaProblem | null {
  try {
    if (!isPlainObject(schema)) throw new Refusal({ path: '$', keyword: 'type', message: `$: a schema must be a JSON object, not ${jsonType(schema)}` });
    if ('$ref' in schema || 'anyOf' in schema || schema.type !== 'object') {
      const keyword = '$ref' in schema ? '$ref' : 'anyOf' in schema ? 'anyOf' : 'type';
      throw new Refusal({ path: '$', keyword, message: '$: the root must be a schema of "type": "object"' });
    }
    const defsValue = schema.$defs ?? {};
    const defs = isPlainObject(defsValue) ? defsValue : {};
    const walk = new StrictSchemaWalk(limits, defs);
    if (!isPlainObject(defsValue)) walk.refuse('$defs', '"$defs" must be an object of schemas', '$defs');
    walk.node(schema, 0, 0);
    for (const name of Object.keys(defs)) {
      walk.countName(name, '$defs');
      walk.child(['$defs', name], defs[name], 1, 0);
    }
    refuseUnguardedCycles(walk, defs);
    return null;
  } catch (error) {
    if (error instanceof Refusal) return error.problem;
    throw error;
  }
}
