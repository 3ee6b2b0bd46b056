// The one error type of the JSON parser: a stable code, the byte offset in the
// whole input, for limits which limit was crossed, and for a number out of range
// the path of that number. Messages name the problem and the offset and quote at
// most one byte, so a hostile body is never echoed back into logs or error
// responses; a caller that names the path renders it with renderJsonPath.

import type { JsonPath } from './json-options.ts';

export type JsonParseErrorCode =
  | 'unexpected_byte'
  | 'unexpected_end'
  | 'invalid_utf8'
  | 'invalid_escape'
  | 'invalid_number'
  | 'number_out_of_range'
  | 'duplicate_key'
  | 'limit_exceeded';

export type JsonLimitName = 'maxBytes' | 'maxDepth' | 'maxStringBytes' | 'maxMembers';

export class JsonParseError extends Error {
  override name = 'JsonParseError';
  readonly code: JsonParseErrorCode;
  /** Offset, in bytes, from the start of the whole input (not of the chunk). */
  readonly offset: number;
  readonly limit?: JsonLimitName;
  /** number_out_of_range: where the number is in the document ([] for a number alone). */
  readonly path?: JsonPath;

  constructor(code: JsonParseErrorCode, offset: number, message: string, limit?: JsonLimitName, path?: JsonPath) {
    super(message);
    this.code = code;
    this.offset = offset;
    if (limit !== undefined) this.limit = limit;
    if (path !== undefined) this.path = path;
  }
}

/** Characters of one object key quoted in a rendered path: keys are the sender's bytes. */
const PATH_SEGMENT_MAX = 64;

/**
 * `tools[0].function.parameters`: keys joined by dots, array indices in
 * brackets, each key cut to 64 characters; '' for the root.
 */
export function renderJsonPath(path: JsonPath): string {
  let out = '';
  for (let i = 0; i < path.length; i++) {
    const segment = path[i] as string | number;
    if (typeof segment === 'number') out += `[${segment}]`;
    else {
      const key = segment.length > PATH_SEGMENT_MAX ? `${segment.slice(0, PATH_SEGMENT_MAX)}...` : segment;
      out += i === 0 ? key : `.${key}`;
    }
  }
  return out;
}

/** Renders one input byte for a message: printable ASCII quoted, anything else as hex. */
export function describeByte(byte: number): string {
  const hex = `0x${byte.toString(16).padStart(2, '0')}`;
  return byte > 0x20 && byte < 0x7f ? `'${String.fromCharCode(byte)}' (${hex})` : hex;
}
