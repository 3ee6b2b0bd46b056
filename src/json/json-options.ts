// What a caller can ask of the JSON parser: limits, an observer, duplicate keys.

import type { JsonLimitName } from './json-parse-error.ts';

export interface JsonLimits {
  /** Bytes in the whole input. */
  maxBytes: number;
  /** Containers open at once: 1 for `[]`, 2 for `[[]]`. 0 allows only a scalar. */
  maxDepth: number;
  /** Raw bytes between the quotes of one string or key, escape sequences counted as written. */
  maxStringBytes: number;
  /** Entries in any single array, or members in any single object (a duplicated key counts each time). */
  maxMembers: number;
}

export const DEFAULT_JSON_LIMITS: Readonly<JsonLimits> = Object.freeze({
  maxBytes: Number.POSITIVE_INFINITY,
  maxDepth: 10_000,
  maxStringBytes: Number.POSITIVE_INFINITY,
  maxMembers: Number.POSITIVE_INFINITY,
});

export type JsonValueKind = 'object' | 'array' | 'string' | 'number' | 'boolean' | 'null';

/** A path into the document: object keys and array indices, [] for the root. */
export type JsonPath = readonly (string | number)[];

/**
 * Hooks called while parsing. The path array is reused and mutated by the parser:
 * copy it to keep it. A hook may throw to abort parsing; the error leaves feed()
 * unchanged and the parser stays terminated.
 */
export interface JsonObserver {
  /** An object key is complete; `path` is the path of the object holding it. */
  key?(path: JsonPath, key: string): void;
  /** The first byte of a value was seen; `path` is the path of that value. */
  valueStart?(path: JsonPath, kind: JsonValueKind): void;
}

export interface JsonParserOptions {
  limits?: Partial<JsonLimits>;
  observer?: JsonObserver;
  /** Fail with 'duplicate_key' instead of letting the last occurrence win. */
  rejectDuplicateKeys?: boolean;
}

export interface JsonParser {
  /** Parses the next bytes of the input. Throws JsonParseError, or what an observer threw. */
  feed(chunk: Uint8Array): void;
  /** Declares the input complete and returns the value. */
  end(): unknown;
}

/**
 * The limit in force for `name`: the default when not given; a negative or NaN
 * limit is a programming error. Read one by one so a parse makes no limits object.
 */
export function resolveLimit(partial: Partial<JsonLimits> | undefined, name: JsonLimitName): number {
  const value = partial?.[name];
  if (value === undefined) return DEFAULT_JSON_LIMITS[name];
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0) {
    throw new RangeError(`JSON limit ${name} must be a non-negative number, got ${String(value)}`);
  }
  return value;
}
