// W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent`
// and `tracestate` request headers, parsed strictly and made anew. Pure
// functions over strings; ids come from node:crypto. A header that does not
// parse is ignored (the gateway starts its own trace), never echoed.
import { randomFillSync } from 'node:crypto';

export interface TraceParent {
  /** 32 lowercase hex digits, not all zero. */
  traceId: string;
  /** The caller's span: 16 lowercase hex digits, not all zero. */
  parentId: string;
  /** The caller recorded (or may record) its part of the trace: flag 01. */
  sampled: boolean;
}

/** The sampled bit of trace-flags. */
const SAMPLED = 0x01;
/** `00-` + 32 + `-` + 16 + `-` + 2. */
const VERSION_00_LENGTH = 55;
const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);
const HEX = /^[0-9a-f]+$/;

/** At most this many list members and characters in a tracestate we accept and pass on. */
export const TRACESTATE_MAX_MEMBERS = 32;
export const TRACESTATE_MAX_LENGTH = 512;

/**
 * The `traceparent` header, or undefined when it is absent or invalid. A
 * header repeated in the request (node joins repeats with ", ") is invalid.
 *
 * Spec 3.2.2 (version 00): `00-<trace-id>-<parent-id>-<trace-flags>`, lowercase
 * hex only, trace-id and parent-id not all zeros. Spec 3.2.4 (future
 * versions): version `ff` is invalid; a higher version is parsed as 00 over its
 * first 55 characters, and whatever follows must start with `-`.
 */
export function parseTraceparent(header: string | readonly string[] | undefined): TraceParent | undefined {
  if (typeof header !== 'string') return undefined;
  const value = header.trim();
  if (value.length < VERSION_00_LENGTH) return undefined;
  const version = value.slice(0, 2);
  if (!isHex(version) || version === 'ff') return undefined;
  if (version === '00' && value.length !== VERSION_00_LENGTH) return undefined;
  if (value.length > VERSION_00_LENGTH && value.charCodeAt(VERSION_00_LENGTH) !== DASH) return undefined;
  if (value.charCodeAt(2) !== DASH || value.charCodeAt(35) !== DASH || value.charCodeAt(52) !== DASH) return undefined;
  const traceId = value.slice(3, 35);
  const parentId = value.slice(36, 52);
  const flags = value.slice(53, 55);
  if (!isHex(traceId) || !isHex(parentId) || !isHex(flags)) return undefined;
  if (traceId === ZERO_TRACE_ID || parentId === ZERO_SPAN_ID) return undefined;
  return { traceId, parentId, sampled: (Number.parseInt(flags, 16) & SAMPLED) !== 0 };
}

/** The header value for the span `spanId` of trace `traceId` (version 00). */
export function formatTraceparent(traceId: string, spanId: string, sampled: boolean): string {
  return `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;
}

// Spec 3.3.1.3: key = simple-key / multi-tenant-key; value = 0*255(chr) nblk-chr.
const SIMPLE_KEY = /^[a-z][a-z0-9_\-*/]{0,255}$/;
const TENANT_KEY = /^[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13}$/;
const VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/**
 * The `tracestate` header re-serialized (members joined by ","), or undefined
 * when it is absent, empty, or invalid: a bad member, a key repeated, more than
 * 32 members or more than 512 characters. The whole header is dropped rather
 * than repaired, so nothing unchecked reaches an upstream.
 */
export function parseTracestate(header: string | readonly string[] | undefined): string | undefined {
  // Repeated tracestate headers are one list (spec 3.3.1.1): node joins them with ", ".
  const value = typeof header === 'string' ? header : undefined;
  if (value === undefined || value.length > TRACESTATE_MAX_LENGTH * 2) return undefined;
  const members: string[] = [];
  const keys = new Set<string>();
  for (const raw of value.split(',')) {
    const member = raw.trim();
    // Empty list members are allowed and skipped.
    if (member === '') continue;
    const eq = member.indexOf('=');
    if (eq <= 0) return undefined;
    const key = member.slice(0, eq);
    const memberValue = member.slice(eq + 1);
    if (!(SIMPLE_KEY.test(key) || TENANT_KEY.test(key)) || !VALUE.test(memberValue) || keys.has(key)) return undefined;
    keys.add(key);
    members.push(member);
    if (members.length > TRACESTATE_MAX_MEMBERS) return undefined;
  }
  const joined = members.join(',');
  if (joined === '' || joined.length > TRACESTATE_MAX_LENGTH) return undefined;
  return joined;
}

/** A random trace id (16 bytes, never all zero). */
export function newTraceId(): string {
  return nonZeroHex(16);
}

/** A random span id (8 bytes, never all zero). */
export function newSpanId(): string {
  return nonZeroHex(8);
}

const DASH = 0x2d;

function isHex(text: string): boolean {
  return HEX.test(text);
}

/** Random bytes drawn 4 KiB at a time: a request takes several ids, and one
 * randomFillSync per 256 of them costs far less than one call per id. */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function nonZeroHex(bytes: number): string {
  for (;;) {
    if (poolOffset + bytes > pool.length) {
      randomFillSync(pool);
      poolOffset = 0;
    }
    const hex = pool.toString('hex', poolOffset, poolOffset + bytes);
    poolOffset += bytes;
    // All zeros is invalid; at 2^-64 or less, but a loop costs nothing.
    if (hex !== ZERO_SPAN_ID && hex !== ZERO_TRACE_ID) return hex;
  }
}
