// Feeds one input to the streaming parser in every way a body can arrive (whole,
// one byte per chunk, split in two at every index) and checks that every way ends
// the same: same value, or same error with the same code, offset and message, and
// the same observer events up to that point.
//
// Each way's outcome is compared to the whole one by its fingerprint, a string
// made once per way; deepStrictEqual per split cost more than the parsing.

import assert from 'node:assert/strict';
import { createJsonParser, JsonParseError, type JsonObserver, type JsonParserOptions } from '../../src/json/parser.ts';

export type Outcome =
  | { ok: true; value: unknown; events: string[] }
  | { ok: false; error: ErrorSummary; events: string[] };

export interface ErrorSummary {
  name: string;
  message: string;
  code?: string;
  offset?: number;
  limit?: string;
  path?: readonly (string | number)[];
}

/** Options per run, so that each run gets a fresh observer. */
export type OptionsFactory = (events: string[]) => JsonParserOptions;

/** An observer that writes its calls into `events`. */
export function recordingObserver(events: string[]): JsonObserver {
  return {
    key(path, key) {
      events.push(`key ${JSON.stringify(path)} ${JSON.stringify(key)}`);
    },
    valueStart(path, kind) {
      events.push(`value ${JSON.stringify(path)} ${kind}`);
    },
  };
}

export function summarize(error: unknown): ErrorSummary {
  if (error instanceof JsonParseError) {
    const summary: ErrorSummary = { name: error.name, message: error.message, code: error.code, offset: error.offset };
    if (error.limit !== undefined) summary.limit = error.limit;
    if (error.path !== undefined) summary.path = [...error.path];
    return summary;
  }
  if (error instanceof Error) return { name: error.name, message: error.message };
  throw new Error(`not an Error: ${String(error)}`);
}

const SPACE = new Uint8Array([0x20]);

/** Fails unless `call` throws `error` itself (a failed parser stays failed). */
function assertRethrows(call: () => unknown, error: unknown, what: string): void {
  try {
    call();
  } catch (again) {
    if (again === error) return;
    assert.fail(`${what} after a failure threw something else: ${String(again)}`);
  }
  assert.fail(`${what} after a failure did not throw`);
}

/** Runs the parser over `chunks`; also checks that a failed parser stays failed. */
export function runChunks(chunks: readonly Uint8Array[], makeOptions: OptionsFactory = () => ({})): Outcome {
  const events: string[] = [];
  const parser = createJsonParser(makeOptions(events));
  let value: unknown;
  try {
    for (const chunk of chunks) parser.feed(chunk);
    value = parser.end();
  } catch (error) {
    assertRethrows(() => parser.feed(SPACE), error, 'feed()');
    assertRethrows(() => parser.end(), error, 'end()');
    return { ok: false, error: summarize(error), events };
  }
  return { ok: true, value, events };
}

let opaque = 0;

/**
 * A string two outcomes share only if they are deepStrictEqual. It covers what
 * outcomes hold, JSON values and error summaries: each value tagged with its
 * type, -0 apart from 0. Anything else (another prototype, symbol keys) gets a
 * string of its own, so that deepStrictEqual decides. Keys are taken in order,
 * which deepStrictEqual ignores, so a mismatch is confirmed by deepStrictEqual
 * before it fails a test.
 */
export function fingerprint(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Object.is(value, -0) ? 'n-0' : `n${value}`;
    case 'boolean':
    case 'undefined':
      return String(value);
    case 'object': {
      if (value === null) return 'null';
      const prototype = Object.getPrototypeOf(value) as unknown;
      if (prototype === Array.prototype) {
        const array = value as unknown[];
        let out = '[';
        for (let i = 0; i < array.length; i++) out += `${i === 0 ? '' : ','}${i in array ? fingerprint(array[i]) : 'hole'}`;
        return `${out}]`;
      }
      if (prototype !== Object.prototype || Object.getOwnPropertySymbols(value).length > 0) break;
      let out = '{';
      let first = true;
      for (const key of Object.keys(value)) {
        out += `${first ? '' : ','}${JSON.stringify(key)}:${fingerprint((value as Record<string, unknown>)[key])}`;
        first = false;
      }
      return `${out}}`;
    }
  }
  return `<opaque ${opaque++}>`;
}

/** Fails unless `actual` deepStrictEquals `expected`, whose fingerprint is given; deepStrictEqual runs only when the fingerprints differ. */
export function assertSameOutcome(actual: Outcome, expected: Outcome, expectedPrint: string, message: string): void {
  if (fingerprint(actual) !== expectedPrint) assert.deepStrictEqual(actual, expected, message);
}

export interface ModesOptions {
  /** Split at every index up to this many bytes (default 4096). */
  everySplitUpTo?: number;
  /** Longer inputs are split at this many evenly spaced indices (default 64). */
  sampledSplits?: number;
  /** Skip byte by byte above this many bytes. */
  byteByByteUpTo?: number;
}

/** The outcome shared by every way of feeding `input`; fails the test if the ways disagree. */
export function parseEveryWay(input: Uint8Array, makeOptions: OptionsFactory = () => ({}), modes: ModesOptions = {}): Outcome {
  const whole = runChunks([input], makeOptions);
  const wholePrint = fingerprint(whole);
  if (input.length <= (modes.byteByByteUpTo ?? Number.POSITIVE_INFINITY)) {
    const bytes: Uint8Array[] = [];
    for (let i = 0; i < input.length; i++) bytes.push(input.subarray(i, i + 1));
    assertSameOutcome(runChunks(bytes, makeOptions), whole, wholePrint, 'byte by byte differs from whole');
  }
  const step = input.length <= (modes.everySplitUpTo ?? 4096) ? 1 : Math.ceil(input.length / (modes.sampledSplits ?? 64));
  for (let at = 0; at <= input.length; at += step) {
    const split = runChunks([input.subarray(0, at), input.subarray(at)], makeOptions);
    assertSameOutcome(split, whole, wholePrint, `split at ${at} differs from whole`);
  }
  return whole;
}

export function bytesOf(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/** The outcome of a failure: `parseEveryWay(...)` must equal this. */
export function expectError(outcome: Outcome, code: string, offset: number, limit?: string): void {
  assert.equal(outcome.ok, false, `expected ${code} at ${offset}, got a value`);
  if (outcome.ok) return;
  assert.equal(outcome.error.name, 'JsonParseError', outcome.error.message);
  assert.deepStrictEqual(
    { code: outcome.error.code, offset: outcome.error.offset, limit: outcome.error.limit },
    { code, offset, limit },
    outcome.error.message,
  );
}

/** Feeds `input` every way and checks each fails with `code` at `offset` (and `limit`). */
export function errorEveryWay(input: string | readonly number[], code: string, offset: number, options: JsonParserOptions = {}, limit?: string): void {
  const bytes = typeof input === 'string' ? bytesOf(input) : Uint8Array.from(input);
  expectError(parseEveryWay(bytes, () => options), code, offset, limit);
}

/** The value of a successful outcome; fails the test on an error. */
export function valueOf(outcome: Outcome): unknown {
  if (!outcome.ok) assert.fail(`unexpected error: ${outcome.error.message}`);
  return outcome.value;
}
