// The building blocks of the Messages request validator: value checks as
// data, built once when the module loads, and one walk over the body that
// runs them. The walk keeps the path to the value it is at in one array
// (pushed and popped), so a valid body costs no allocation beyond it; the
// path is rendered (`messages[2].content[0].source.media_type`) only for the
// error. Anthropic answers one error per request: the first fault throws.
//
// Wording: every message names the path and says what to change.
import { InvalidRequestError } from '../errors/api-error.ts';
import type { InvalidRequestCode } from '../errors/catalogue.ts';
import { renderJsonPath } from '../json/parser.ts';

/** The path from the body to the value being checked. */
export type Cursor = Array<string | number>;

/** Checks the value at `at`; throws InvalidRequestError naming `at` for the first fault. */
export type Check = (value: unknown, at: Cursor) => void;

/** Client strings echoed in a message are cut to this many characters. */
const ECHO_LIMIT = 64;

export function echo(text: string): string {
  return text.length > ECHO_LIMIT ? `${text.slice(0, ECHO_LIMIT)}...` : text;
}

export function where(at: Cursor): string {
  return at.length === 0 ? 'the request body' : `'${renderJsonPath(at)}'`;
}

export function fail(at: Cursor, code: InvalidRequestCode, message: string): never {
  throw new InvalidRequestError(message, at.length === 0 ? null : renderJsonPath(at), code);
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'object':
      return 'an object';
    case 'number':
      return Number.isInteger(value) ? 'an integer' : 'a number';
    case 'string':
      return 'a string';
    case 'boolean':
      return 'a boolean';
    default:
      return 'a non-JSON value';
  }
}

export function wrongType(at: Cursor, expected: string, value: unknown): never {
  fail(at, 'invalid_type', `Invalid type for ${where(at)}: expected ${expected}, but got ${kindOf(value)} instead.`);
}

export function missing(at: Cursor, field: string, hint = ''): never {
  at.push(field);
  fail(at, 'missing_required_parameter', `Missing required field ${where(at)}.${hint === '' ? '' : ` ${hint}`}`);
}

export function listQuoted(values: readonly string[]): string {
  return values.map((v) => `'${v}'`).join(', ');
}

export const anyJson: Check = () => {};

export const string: Check = (value, at) => {
  if (typeof value !== 'string') wrongType(at, 'a string', value);
};

export function stringUpTo(maximum: number): Check {
  return (value, at) => {
    if (typeof value !== 'string') wrongType(at, 'a string', value);
    if (value.length > maximum) fail(at, 'invalid_value', `Invalid value for ${where(at)}: expected at most ${maximum} characters.`);
  };
}

export const nonEmptyString: Check = (value, at) => {
  if (typeof value !== 'string') wrongType(at, 'a string', value);
  if (value === '') fail(at, 'invalid_value', `Invalid value for ${where(at)}: expected a non-empty string.`);
};

export const boolean: Check = (value, at) => {
  if (typeof value !== 'boolean') wrongType(at, 'a boolean', value);
};

export const object: Check = (value, at) => {
  if (!isObject(value)) wrongType(at, 'an object', value);
};

export function nullable(check: Check): Check {
  return (value, at) => {
    if (value !== null) check(value, at);
  };
}

export function oneOf(values: readonly string[]): Check {
  const allowed = new Set(values);
  return (value, at) => {
    if (typeof value !== 'string') wrongType(at, 'a string', value);
    if (!allowed.has(value)) fail(at, 'invalid_value', `Invalid value for ${where(at)}: '${echo(value)}'. Supported values are: ${listQuoted(values)}.`);
  };
}

export function integerIn(minimum: number, maximum: number): Check {
  return (value, at) => {
    if (typeof value !== 'number' || !Number.isInteger(value)) wrongType(at, 'an integer', value);
    if (value < minimum || value > maximum) fail(at, 'invalid_value', `Invalid value for ${where(at)}: ${value}. Expected an integer from ${minimum} to ${maximum}.`);
  };
}

export function numberIn(minimum: number, maximum: number): Check {
  return (value, at) => {
    if (typeof value !== 'number') wrongType(at, 'a number', value);
    if (!(value >= minimum && value <= maximum)) fail(at, 'invalid_value', `Invalid value for ${where(at)}: ${value}. Expected a number from ${minimum} to ${maximum}.`);
  };
}

/** An array of at most `maximum` entries (at least `minimum`), each checked by `item`. */
export function arrayOf(item: Check, maximum: number, minimum = 0): Check {
  return (value, at) => {
    if (!Array.isArray(value)) wrongType(at, 'an array', value);
    if (value.length > maximum) fail(at, 'array_above_max_length', `Invalid ${where(at)}: array too long. Expected an array with at most ${maximum} entries.`);
    if (value.length < minimum) fail(at, 'array_below_min_length', `Invalid ${where(at)}: empty array. Expected an array with at least ${minimum} ${minimum === 1 ? 'entry' : 'entries'}.`);
    for (let i = 0; i < value.length; i++) {
      at.push(i);
      item(value[i], at);
      at.pop();
    }
  };
}

/** A string, or an array of entries checked by `item`. */
export function stringOr(item: Check): Check {
  return (value, at) => {
    if (typeof value === 'string') return;
    if (!Array.isArray(value)) wrongType(at, 'a string or an array', value);
    item(value, at);
  };
}

/** The fields an object may hold, as data: which exist, which are required, how each is checked. */
export interface ObjectShape {
  /** How messages name the object: "a text block", "a tool". */
  readonly name: string;
  readonly fields: ReadonlyMap<string, Check>;
  readonly required: readonly string[];
  /** Fields listed in an unknown-field message. */
  readonly listed: string;
}

export function objectShape(name: string, required: Record<string, Check>, optional: Record<string, Check> = {}): ObjectShape {
  const fields = new Map<string, Check>([...Object.entries(required), ...Object.entries(optional)]);
  return { name, fields, required: Object.keys(required), listed: listQuoted([...fields.keys()]) };
}

export function unknownField(at: Cursor, key: string, shape: ObjectShape): never {
  at.push(key);
  fail(at, 'unknown_parameter', `Unknown field ${where(at)}: ${shape.name} takes only ${shape.listed}. Remove it.`);
}

/**
 * Checks every field of `value` against `shape`, in the body's order, then
 * the required ones that are absent. A field holding undefined is absent
 * (JSON has no undefined; JSON.stringify would leave it out).
 */
export function checkFields(value: Record<string, unknown>, shape: ObjectShape, at: Cursor): void {
  for (const key in value) {
    const field = value[key];
    if (field === undefined) continue;
    const check = shape.fields.get(key);
    if (check === undefined) unknownField(at, key, shape);
    at.push(key);
    check(field, at);
    at.pop();
  }
  for (const key of shape.required) if (value[key] === undefined) missing(at, key);
}

export function shaped(shape: ObjectShape): Check {
  return (value, at) => {
    if (!isObject(value)) wrongType(at, 'an object', value);
    checkFields(value, shape, at);
  };
}
