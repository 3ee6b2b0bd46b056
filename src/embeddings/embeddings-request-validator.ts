// Validation of an embeddings request body (POST /v1/embeddings), already
// parsed from JSON, and the observer that refuses the same structural faults
// while the body is still arriving.
//
// OpenAI's request: `model`, `input` (a string, an array of strings, an array
// of token ids, or an array of arrays of token ids), `encoding_format`
// ("float" | "base64"), `dimensions`, `user`. Any other top-level field is an
// unknown parameter (there is no streaming). `encoding_format`, `dimensions`
// and `user` given as null are absent: clients that build the body from
// optional settings send null for an unset one.
//
// Two passes, as for chat (src/chat/request-validator.ts), so a body refused
// early by the observer and the same body refused whole get the same param,
// code and message. The structural pass finds, in document order, what the
// observer can see in the bytes: the root not an object, an unknown field,
// one token list past embeddings.maxInputTokens, the inputs past
// embeddings.maxInputs. Only a body free of those gets the rule pass, whose
// first fault is the answer. A key that starts with a digit is left to the
// rule pass: an object lists such keys first, out of document order.
import { Buffer } from 'node:buffer';
import { InvalidRequestError } from '../errors/api-error.ts';
import type { JsonObserver, JsonPath, JsonValueKind } from '../json/parser.ts';
import { MAX_IDENTIFIER } from '../chat/request-fields.ts';
import { createIssue, issueToError, type IssuePath, type RequestIssue } from '../chat/request-issues.ts';
import { isIndexLikeKey, isJsonObject, jsonKindOf } from '../chat/request-shape.ts';
import { unknownField } from '../chat/request-structure.ts';
import { MAX_MODEL_LENGTH } from '../chat/request-validator.ts';
import { INPUT_OVERHEAD, InputShape, MAX_TOKEN_ID, TOKEN_BYTES, type EmbeddingInput, type EmbeddingLimits, type EmbeddingsRequest, type EncodingFormat } from './embeddings-types.ts';

const FIELDS: ReadonlySet<string> = new Set(['model', 'input', 'encoding_format', 'dimensions', 'user']);
const ENCODINGS: readonly EncodingFormat[] = ['float', 'base64'];
/** OpenAI's models take fewer; a target that takes fewer answers for itself. */
export const MAX_DIMENSIONS = 65_536;

const INPUT_KINDS = 'a string, an array of strings, an array of token ids or an array of arrays of token ids';

// The bounds of the config's `embeddings` section: each message names the
// bound and its setting, so the client knows what to change and the
// operator which setting admits more.

function tooManyInputs(maximum: number): InvalidRequestError {
  return new InvalidRequestError(
    `Invalid 'input': array too long. Expected at most ${maximum} inputs in one request (the gateway's embeddings.maxInputs); send the inputs in several requests.`,
    'input',
    'array_above_max_length',
  );
}

function tooManyTokens(path: IssuePath, maximum: number): InvalidRequestError {
  const where = render(path);
  return new InvalidRequestError(
    `Invalid '${where}': array too long. Expected at most ${maximum} token ids in one input (the gateway's embeddings.maxInputTokens); shorten the input or split it in several.`,
    where,
    'array_above_max_length',
  );
}

function tooManyBytes(path: IssuePath, bytes: number, maximum: number): InvalidRequestError {
  const where = render(path);
  return new InvalidRequestError(
    `Invalid value for '${where}': ${bytes} bytes of UTF-8 text. Expected at most ${maximum} bytes in one input (the gateway's embeddings.maxInputBytes); shorten the input or split it in several.`,
    where,
    'invalid_value',
  );
}

function tooManyTotalBytes(maximum: number): InvalidRequestError {
  return new InvalidRequestError(
    `Invalid value for 'input': the inputs come to more than ${maximum} bytes (UTF-8 text, ${TOKEN_BYTES} bytes a token id), the most one request takes (the gateway's embeddings.maxTotalBytes); send the inputs in several requests.`,
    'input',
    'invalid_value',
  );
}

function render(path: IssuePath): string {
  return path.length === 1 ? 'input' : `input[${path[1] as number}]`;
}

function rootNotObject(received: JsonValueKind | undefined): RequestIssue {
  return createIssue([], { code: 'invalid_type', expected: 'an object', received: received ?? 'non-JSON value' });
}

/**
 * Early refusals while the body arrives. It remembers the kind of the first
 * entry of `input` (a token id: the list is one input, bounded by
 * maxInputTokens; else a list of inputs, bounded by maxInputs), so make one
 * per request. Each call is a few comparisons; it allocates only to throw.
 */
class EmbeddingsRequestObserver implements JsonObserver {
  readonly #limits: EmbeddingLimits;
  /** The kind of input[0], null before it is seen. */
  #firstKind: JsonValueKind | null = null;

  constructor(limits: EmbeddingLimits) {
    this.#limits = limits;
  }

  key(path: JsonPath, key: string): void {
    if (path.length !== 0 || FIELDS.has(key) || isIndexLikeKey(key)) return;
    throw issueToError(unknownField([key]));
  }

  valueStart(path: JsonPath, kind: JsonValueKind): void {
    const depth = path.length;
    if (depth === 0) {
      if (kind !== 'object') throw issueToError(rootNotObject(kind));
      return;
    }
    if (path[0] !== 'input') return;
    if (depth === 1) {
      // A repeated `input` key starts over.
      this.#firstKind = null;
      return;
    }
    const index = path[1];
    if (typeof index !== 'number') return;
    if (depth === 2) {
      if (index === 0) this.#firstKind = kind;
      if (this.#firstKind === 'number') {
        if (index >= this.#limits.maxInputTokens) throw tooManyTokens(['input'], this.#limits.maxInputTokens);
      } else if (index >= this.#limits.maxInputs) throw tooManyInputs(this.#limits.maxInputs);
    } else if (depth === 3) {
      const token = path[2];
      if (typeof token === 'number' && token >= this.#limits.maxInputTokens) throw tooManyTokens(['input', index], this.#limits.maxInputTokens);
    }
  }
}

/** The observer for one request's body (it holds that request's state). */
export function embeddingsObserver(limits: EmbeddingLimits): JsonObserver {
  return new EmbeddingsRequestObserver(limits);
}

/** The first structural fault of `body`, in document order; null when none. */
function structuralFault(body: unknown, limits: EmbeddingLimits): InvalidRequestError | null {
  if (!isJsonObject(body)) return issueToError(rootNotObject(jsonKindOf(body)));
  for (const key of Object.keys(body)) {
    if (!FIELDS.has(key)) {
      if (!isIndexLikeKey(key)) return issueToError(unknownField([key]));
      continue;
    }
    const input = body[key];
    if (key !== 'input' || !Array.isArray(input)) continue;
    const list: readonly unknown[] = input;
    const oneTokenList = typeof list[0] === 'number';
    const limit = oneTokenList ? limits.maxInputTokens : limits.maxInputs;
    const walked = Math.min(list.length, limit);
    for (let i = 0; i < walked; i++) {
      const entry = list[i];
      if (Array.isArray(entry) && entry.length > limits.maxInputTokens) return tooManyTokens(['input', i], limits.maxInputTokens);
    }
    if (list.length > limit) return oneTokenList ? tooManyTokens(['input'], limit) : tooManyInputs(limit);
  }
  return null;
}

/** What the walk over `input` adds up. */
interface InputTally {
  readonly inputs: EmbeddingInput[];
  promptBound: number;
  totalBytes: number;
}

function checkText(text: string, path: IssuePath, limits: EmbeddingLimits, tally: InputTally): void {
  if (text === '') throw issueToError(createIssue(path, { code: 'invalid_value', reason: { rule: 'non_empty' } }));
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > limits.maxInputBytes) throw tooManyBytes(path, bytes, limits.maxInputBytes);
  tally.totalBytes += bytes;
  if (tally.totalBytes > limits.maxTotalBytes) throw tooManyTotalBytes(limits.maxTotalBytes);
  tally.promptBound += bytes + INPUT_OVERHEAD;
  tally.inputs.push(text);
}

/** `tokens` is not empty and within maxInputTokens (the structural pass saw to that). */
function checkTokens(tokens: readonly unknown[], path: IssuePath, limits: EmbeddingLimits, tally: InputTally): void {
  for (let j = 0; j < tokens.length; j++) {
    const token = tokens[j];
    if (typeof token !== 'number') {
      const kind = jsonKindOf(token);
      throw issueToError(createIssue([...path, j], { code: 'invalid_type', expected: "a token id (an integer), as the input's first entry is", received: kind ?? 'non-JSON value' }));
    }
    if (!Number.isInteger(token)) throw issueToError(createIssue([...path, j], { code: 'invalid_type', expected: 'an integer token id', received: 'decimal' }));
    if (token < 0 || token > MAX_TOKEN_ID) {
      throw issueToError(createIssue([...path, j], { code: 'invalid_value', reason: { rule: 'range', received: token, minimum: 0, maximum: MAX_TOKEN_ID, integer: true } }));
    }
  }
  tally.totalBytes += tokens.length * TOKEN_BYTES;
  if (tally.totalBytes > limits.maxTotalBytes) throw tooManyTotalBytes(limits.maxTotalBytes);
  tally.promptBound += tokens.length + INPUT_OVERHEAD;
  tally.inputs.push(tokens as readonly number[]);
}

function wrongEntry(index: number, expected: string, entry: unknown): InvalidRequestError {
  return issueToError(createIssue(['input', index], { code: 'invalid_type', expected, received: jsonKindOf(entry) ?? 'non-JSON value' }));
}

function normaliseInput(value: unknown, limits: EmbeddingLimits, tally: InputTally): InputShape {
  if (typeof value === 'string') {
    checkText(value, ['input'], limits, tally);
    return InputShape.String;
  }
  if (!Array.isArray(value)) throw issueToError(createIssue(['input'], { code: 'invalid_type', expected: INPUT_KINDS, received: jsonKindOf(value) ?? 'non-JSON value' }));
  const list: readonly unknown[] = value;
  if (list.length === 0) throw issueToError(createIssue(['input'], { code: 'array_below_min_length', minimum: 1 }));
  const first = list[0];
  if (typeof first === 'number') {
    checkTokens(list, ['input'], limits, tally);
    return InputShape.Tokens;
  }
  if (typeof first === 'string') {
    for (let i = 0; i < list.length; i++) {
      const entry = list[i];
      if (typeof entry !== 'string') throw wrongEntry(i, "a string, as 'input[0]' is", entry);
      checkText(entry, ['input', i], limits, tally);
    }
    return InputShape.Strings;
  }
  if (Array.isArray(first)) {
    for (let i = 0; i < list.length; i++) {
      const entry = list[i];
      if (!Array.isArray(entry)) throw wrongEntry(i, "an array of token ids, as 'input[0]' is", entry);
      if (entry.length === 0) throw issueToError(createIssue(['input', i], { code: 'array_below_min_length', minimum: 1 }));
      checkTokens(entry, ['input', i], limits, tally);
    }
    return InputShape.TokenArrays;
  }
  throw wrongEntry(0, 'a string, a token id or an array of token ids', first);
}

/**
 * The request, or InvalidRequestError for its first fault. Pure; never
 * mutates `body` (the inputs are the body's own strings and arrays).
 */
export function validateEmbeddingsRequest(body: unknown, limits: EmbeddingLimits): EmbeddingsRequest {
  const fault = structuralFault(body, limits);
  if (fault !== null) throw fault;
  const object = body as Record<string, unknown>;
  let model: string | null = null;
  let shape: InputShape | null = null;
  let encoding: EncodingFormat = 'float';
  let encodingGiven = false;
  let dimensions: number | null = null;
  let user: string | null = null;
  const tally: InputTally = { inputs: [], promptBound: 0, totalBytes: 0 };
  for (const key of Object.keys(object)) {
    const value = object[key];
    // An own property holding undefined is absent, as JSON.stringify would have it.
    if (value === undefined) continue;
    switch (key) {
      case 'model':
        if (typeof value !== 'string') throw issueToError(createIssue([key], { code: 'invalid_type', expected: 'a string', received: jsonKindOf(value) ?? 'non-JSON value' }));
        if (value === '') throw issueToError(createIssue([key], { code: 'invalid_value', reason: { rule: 'non_empty' } }));
        if (value.length > MAX_MODEL_LENGTH) throw issueToError(createIssue([key], { code: 'invalid_value', reason: { rule: 'too_long', maximum: MAX_MODEL_LENGTH } }));
        model = value;
        break;
      case 'input':
        shape = normaliseInput(value, limits, tally);
        break;
      case 'encoding_format':
        if (value === null) break;
        if (typeof value !== 'string') throw issueToError(createIssue([key], { code: 'invalid_type', expected: 'a string', received: jsonKindOf(value) ?? 'non-JSON value' }));
        if (value !== 'float' && value !== 'base64') throw issueToError(createIssue([key], { code: 'invalid_value', reason: { rule: 'one_of', received: value, allowed: ENCODINGS } }));
        encoding = value;
        encodingGiven = true;
        break;
      case 'dimensions':
        if (value === null) break;
        if (typeof value !== 'number') throw issueToError(createIssue([key], { code: 'invalid_type', expected: 'an integer', received: jsonKindOf(value) ?? 'non-JSON value' }));
        if (!Number.isInteger(value)) throw issueToError(createIssue([key], { code: 'invalid_type', expected: 'an integer', received: 'decimal' }));
        if (value < 1 || value > MAX_DIMENSIONS) {
          throw issueToError(createIssue([key], { code: 'invalid_value', reason: { rule: 'range', received: value, minimum: 1, maximum: MAX_DIMENSIONS, integer: true } }));
        }
        dimensions = value;
        break;
      case 'user':
        if (value === null) break;
        if (typeof value !== 'string') throw issueToError(createIssue([key], { code: 'invalid_type', expected: 'a string', received: jsonKindOf(value) ?? 'non-JSON value' }));
        if (value.length > MAX_IDENTIFIER) throw issueToError(createIssue([key], { code: 'invalid_value', reason: { rule: 'too_long', maximum: MAX_IDENTIFIER } }));
        user = value;
        break;
      default:
        // A digit-led key the structural pass left here.
        throw issueToError(unknownField([key]));
    }
  }
  if (model === null) throw issueToError(createIssue(['model'], { code: 'missing_required_parameter' }));
  if (shape === null) throw issueToError(createIssue(['input'], { code: 'missing_required_parameter' }));
  return { model, inputs: tally.inputs, shape, encoding, encodingGiven, dimensions, user, promptBound: tally.promptBound };
}
