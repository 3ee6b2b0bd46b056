// Byte-level facts of the JSON grammar (RFC 8259), as tables for the parser's hot loop.

import type { JsonValueKind } from './json-options.ts';

export const Byte = {
  Tab: 0x09,
  LineFeed: 0x0a,
  CarriageReturn: 0x0d,
  Space: 0x20,
  Quote: 0x22,
  Plus: 0x2b,
  Comma: 0x2c,
  Minus: 0x2d,
  Point: 0x2e,
  Zero: 0x30,
  One: 0x31,
  Nine: 0x39,
  Colon: 0x3a,
  UpperE: 0x45,
  OpenBracket: 0x5b,
  Backslash: 0x5c,
  CloseBracket: 0x5d,
  LowerE: 0x65,
  LowerF: 0x66,
  LowerN: 0x6e,
  LowerT: 0x74,
  LowerU: 0x75,
  OpenBrace: 0x7b,
  CloseBrace: 0x7d,
} as const;

/** RFC 8259 section 7: the character a two-character escape stands for, by the byte after the backslash; 0 for none. */
export const SHORT_ESCAPES: Uint8Array = (() => {
  const table = new Uint8Array(256);
  const pairs: [string, string][] = [['"', '"'], ['\\', '\\'], ['/', '/'], ['b', '\b'], ['f', '\f'], ['n', '\n'], ['r', '\r'], ['t', '\t']];
  for (const [letter, value] of pairs) table[letter.charCodeAt(0)] = value.charCodeAt(0);
  return table;
})();

/** Hex digit values by byte, -1 for anything else. */
export const HEX_VALUES: Int8Array = (() => {
  const table = new Int8Array(256).fill(-1);
  for (let d = 0; d < 10; d++) table[0x30 + d] = d;
  for (let d = 0; d < 6; d++) {
    table[0x41 + d] = 10 + d;
    table[0x61 + d] = 10 + d;
  }
  return table;
})();

/** The kind of value each byte starts, undefined for bytes that start none. */
export const VALUE_KINDS: readonly (JsonValueKind | undefined)[] = (() => {
  const table = new Array<JsonValueKind | undefined>(256).fill(undefined);
  table[Byte.Quote] = 'string';
  table[Byte.OpenBrace] = 'object';
  table[Byte.OpenBracket] = 'array';
  table[Byte.Minus] = 'number';
  for (let digit = Byte.Zero; digit <= Byte.Nine; digit++) table[digit] = 'number';
  table[Byte.LowerT] = 'boolean';
  table[Byte.LowerF] = 'boolean';
  table[Byte.LowerN] = 'null';
  return table;
})();

export function isWhitespace(byte: number): boolean {
  return byte === Byte.Space || byte === Byte.LineFeed || byte === Byte.CarriageReturn || byte === Byte.Tab;
}

export function isDigit(byte: number): boolean {
  return byte >= Byte.Zero && byte <= Byte.Nine;
}
