// Feeds one input to the streaming parser in every way a body can arrive (whole,
// one byte per chunk, split in two at every index) and checks that every way ends
// the same: same value, or same error with the same code, offset and message, and
// the same observer events up to that point.

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

/** Runs the parser over `chunks`; also checks that a failed parser stays failed. */
export function runChunks(chunks: readonly Uint8Array[], makeOptions: OptionsFactory = () => ({})): Outcome {
  const events: string[] = [];
  const parser = createJsonParser(makeOptions(events));
  let value: unknown;
  try {
    for (const chunk of chunks) parser.feed(chunk);
    value = parser.end();
  } catch (error) {
    assert.throws(() => parser.feed(new Uint8Array([0x20])), (again: unknown) => again === error);
    assert.throws(() => parser.end(), (again: unknown) => again === error);
    return { ok: false, error: summarize(error), events };
  }
  return { ok: true, value, events };
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
  if (input.length <= (modes.byteByByteUpTo ?? Number.POSITIVE_INFINITY)) {
    const bytes: Uint8Array[] = [];
    for (let i = 0; i < input.length; i++) bytes.push(input.subarray(i, i + 1));
    assert.deepStrictEqual(runChunks(bytes, makeOptions), whole, 'byte by byte differs from whole');
  }
  const step = input.length <= (modes.everySplitUpTo ?? 4096) ? 1 : Math.ceil(input.length / (modes.sampledSplits ?? 64));
  for (let at = 0; at <= input.length; at += step) {
    const split = runChunks([input.subarray(0, at), input.subarray(at)], makeOptions);
    assert.deepStrictEqual(split, whole, `split at ${at} differs from whole`);
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
