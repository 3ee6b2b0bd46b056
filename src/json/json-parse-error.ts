// The one error type of the JSON parser: a stable code, the byte offset in the
// whole input, and for limits which limit was crossed. Messages name the problem
// and the offset and quote at most one byte, so a hostile body is never echoed
// back into logs or error responses.

export type JsonParseErrorCode =
  | 'unexpected_byte'
  | 'unexpected_end'
  | 'invalid_utf8'
  | 'invalid_escape'
  | 'invalid_number'
  | 'duplicate_key'
  | 'limit_exceeded';

export type JsonLimitName = 'maxBytes' | 'maxDepth' | 'maxStringBytes' | 'maxMembers';

export class JsonParseError extends Error {
  override name = 'JsonParseError';
  readonly code: JsonParseErrorCode;
  /** Offset, in bytes, from the start of the whole input (not of the chunk). */
  readonly offset: number;
  readonly limit?: JsonLimitName;

  constructor(code: JsonParseErrorCode, offset: number, message: string, limit?: JsonLimitName) {
    super(message);
    this.code = code;
    this.offset = offset;
    if (limit !== undefined) this.limit = limit;
  }
}

/** Renders one input byte for a message: printable ASCII quoted, anything else as hex. */
export function describeByte(byte: number): string {
  const hex = `0x${byte.toString(16).padStart(2, '0')}`;
  return byte > 0x20 && byte < 0x7f ? `'${String.fromCharCode(byte)}' (${hex})` : hex;
}
