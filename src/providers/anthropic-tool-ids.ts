// Tool-call ids between OpenAI's shapes and Anthropic's. Pure.
//
// Anthropic requires every tool_use id and tool_result tool_use_id to match
// ^[a-zA-Z0-9_-]+$; OpenAI allows any string, and other providers make ids
// such as `functions.get_weather:0`. A conversation that moves between targets
// (a fallback, service-auto) replays such ids, so they are encoded on the way
// to Anthropic and decoded on the way back, and the client always sees its own
// ids.
//
// The encoding is a bijection onto its image, identity wherever it can be:
// - an id that matches the pattern and does not begin with ENCODED_ID_PREFIX
//   is sent as it is (every OpenAI `call_...` and Anthropic `toolu_...` id);
// - any other id is ENCODED_ID_PREFIX followed by its UTF-16 code units, each
//   letter, digit and `-` as itself and every other unit as `_` and four
//   lowercase hex digits (so `functions.f:0` is `pcl_id-functions_002ef_003a0`).
//   Lone surrogates survive, which a UTF-8 round trip would not.
// Decoding returns the original for exactly the encoded forms and leaves every
// other id (those Anthropic makes) unchanged, so no two ids ever meet.

/** Anthropic's tool_use id rule. */
const ANTHROPIC_TOOL_ID = /^[a-zA-Z0-9_-]+$/;

/** Marks an encoded id. An id that begins with it is itself encoded. */
export const ENCODED_ID_PREFIX = 'pcl_id-';

const Char = {
  Digit0: 0x30,
  Digit9: 0x39,
  UpperA: 0x41,
  UpperZ: 0x5a,
  LowerA: 0x61,
  LowerF: 0x66,
  LowerZ: 0x7a,
  Hyphen: 0x2d,
  Underscore: 0x5f,
} as const;

function isKeptAsIs(code: number): boolean {
  return (
    (code >= Char.Digit0 && code <= Char.Digit9) ||
    (code >= Char.UpperA && code <= Char.UpperZ) ||
    (code >= Char.LowerA && code <= Char.LowerZ) ||
    code === Char.Hyphen
  );
}

/** The id Anthropic receives for the client's `id`. */
export function toAnthropicToolId(id: string): string {
  if (ANTHROPIC_TOOL_ID.test(id) && !id.startsWith(ENCODED_ID_PREFIX)) return id;
  const out: string[] = [ENCODED_ID_PREFIX];
  let literalStart = 0;
  for (let i = 0; i < id.length; i++) {
    const code = id.charCodeAt(i);
    if (isKeptAsIs(code)) continue;
    if (i > literalStart) out.push(id.slice(literalStart, i));
    out.push('_', code.toString(16).padStart(4, '0'));
    literalStart = i + 1;
  }
  if (literalStart < id.length) out.push(id.slice(literalStart));
  return out.join('');
}

function hexValue(code: number): number {
  if (code >= Char.Digit0 && code <= Char.Digit9) return code - Char.Digit0;
  if (code >= Char.LowerA && code <= Char.LowerF) return code - Char.LowerA + 10;
  return -1;
}

/** The client's id for an id Anthropic sent or echoed: the inverse of
 * toAnthropicToolId on its image, the identity elsewhere. */
export function fromAnthropicToolId(id: string): string {
  if (!id.startsWith(ENCODED_ID_PREFIX)) return id;
  const units: number[] = [];
  for (let i = ENCODED_ID_PREFIX.length; i < id.length; i++) {
    const code = id.charCodeAt(i);
    if (isKeptAsIs(code)) {
      units.push(code);
      continue;
    }
    if (code !== Char.Underscore || i + 4 >= id.length) return id;
    let unit = 0;
    for (let k = 1; k <= 4; k++) {
      const digit = hexValue(id.charCodeAt(i + k));
      if (digit < 0) return id;
      unit = unit * 16 + digit;
    }
    units.push(unit);
    i += 4;
  }
  let decoded = '';
  // Ids are bounded by the request body; chunks keep the argument lists short.
  for (let i = 0; i < units.length; i += 4096) decoded += String.fromCharCode(...units.slice(i, i + 4096));
  // Only the canonical form decodes: anything else was never made here.
  return toAnthropicToolId(decoded) === id ? decoded : id;
}
