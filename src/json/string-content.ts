// Checks on the raw bytes of a JSON string, for the slow path only: the parser
// decodes a run of string bytes first and comes here when the decoded text shows
// a control character or U+FFFD, to learn whether the input is really at fault
// and at which byte.

export interface StringContentFault {
  code: 'invalid_utf8' | 'control_character';
  /** Index in the scanned bytes of the first byte of the faulty sequence. */
  index: number;
}

const Byte = {
  Space: 0x20,
  Ascii: 0x80,
  ContinuationMin: 0x80,
  ContinuationMax: 0xbf,
  TwoByteLeadMin: 0xc2,
  TwoByteLeadMax: 0xdf,
  ThreeByteLeadE0: 0xe0,
  ThreeByteLeadED: 0xed,
  ThreeByteLeadMax: 0xef,
  FourByteLeadF0: 0xf0,
  FourByteLeadF4: 0xf4,
} as const;

/**
 * The first control character (RFC 8259 section 7: U+0000 through U+001F must be
 * escaped) or ill-formed UTF-8 sequence (Unicode 15, table 3-7: no overlong forms,
 * no surrogates, nothing above U+10FFFF, no truncated or stray continuation bytes)
 * in bytes[start, end), or undefined when the bytes are clean.
 */
export function findStringContentFault(bytes: Uint8Array, start: number, end: number): StringContentFault | undefined {
  let i = start;
  while (i < end) {
    const lead = bytes[i] as number;
    if (lead < Byte.Ascii) {
      if (lead < Byte.Space) return { code: 'control_character', index: i - start };
      i++;
      continue;
    }
    const length = sequenceLength(bytes, i, end);
    if (length === 0) return { code: 'invalid_utf8', index: i - start };
    i += length;
  }
  return undefined;
}

/** Length of the well-formed sequence starting at bytes[i] (a non-ASCII lead), or 0. */
function sequenceLength(bytes: Uint8Array, i: number, end: number): number {
  const lead = bytes[i] as number;
  let length: number;
  let secondMin: number = Byte.ContinuationMin;
  let secondMax: number = Byte.ContinuationMax;
  if (lead >= Byte.TwoByteLeadMin && lead <= Byte.TwoByteLeadMax) length = 2;
  else if (lead >= Byte.ThreeByteLeadE0 && lead <= Byte.ThreeByteLeadMax) {
    length = 3;
    if (lead === Byte.ThreeByteLeadE0) secondMin = 0xa0; // overlong below U+0800
    if (lead === Byte.ThreeByteLeadED) secondMax = 0x9f; // UTF-16 surrogates
  } else if (lead >= Byte.FourByteLeadF0 && lead <= Byte.FourByteLeadF4) {
    length = 4;
    if (lead === Byte.FourByteLeadF0) secondMin = 0x90; // overlong below U+10000
    if (lead === Byte.FourByteLeadF4) secondMax = 0x8f; // above U+10FFFF
  } else return 0;
  if (i + length > end) return 0;
  const second = bytes[i + 1] as number;
  if (second < secondMin || second > secondMax) return 0;
  for (let k = 2; k < length; k++) {
    const next = bytes[i + k] as number;
    if (next < Byte.ContinuationMin || next > Byte.ContinuationMax) return 0;
  }
  return length;
}
