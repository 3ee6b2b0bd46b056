// The value of a JSON number from its bytes, as JSON.parse computes it.

import type { Buffer } from 'node:buffer';

const Byte = { Minus: 0x2d, Plus: 0x2b, Point: 0x2e, Zero: 0x30, Nine: 0x39 } as const;

/** Powers of ten that a double holds exactly. */
const EXACT_POWERS_OF_TEN: readonly number[] = Array.from({ length: 23 }, (_, power) => 10 ** power);
/** Below 10^15 every integer is exact in a double (2^53 is about 9.007e15). */
const MAX_EXACT_DIGITS = 15;

/**
 * bytes[start, end) must already match the number grammar of RFC 8259 section 6.
 *
 * Most numbers take Clinger's fast path: when the digits form an integer below
 * 2^53 and the decimal exponent is within 22, both operands are exact doubles and
 * one IEEE multiplication or division rounds correctly. Anything else goes to
 * Number(), whose grammar contains JSON's and which rounds like JSON.parse.
 */
export function numberFromBytes(bytes: Buffer, start: number, end: number): number {
  let k = start;
  const negative = bytes[k] === Byte.Minus;
  if (negative) k++;
  let digits = 0;
  let mantissa = 0;
  let scale = 0;
  let inFraction = false;
  for (; k < end; k++) {
    const byte = bytes[k] as number;
    if (byte >= Byte.Zero && byte <= Byte.Nine) {
      mantissa = mantissa * 10 + (byte - Byte.Zero);
      digits++;
      if (inFraction) scale--;
    } else if (byte === Byte.Point) inFraction = true;
    else break; // 'e' or 'E'
  }
  if (k < end) {
    k++;
    const sign = bytes[k] as number;
    const negativeExponent = sign === Byte.Minus;
    if (sign === Byte.Minus || sign === Byte.Plus) k++;
    let exponent = 0;
    for (; k < end; k++) exponent = exponent * 10 + ((bytes[k] as number) - Byte.Zero);
    scale += negativeExponent ? -exponent : exponent;
  }
  if (digits <= MAX_EXACT_DIGITS && scale >= -22 && scale <= 22) {
    const magnitude = scale >= 0 ? mantissa * (EXACT_POWERS_OF_TEN[scale] as number) : mantissa / (EXACT_POWERS_OF_TEN[-scale] as number);
    return negative ? -magnitude : magnitude;
  }
  return Number(bytes.toString('latin1', start, end));
}
