// Where a byte offset falls in a text a person wrote: line and column, both
// from 1, as editors count them. Columns count characters (UTF-8 sequences),
// not bytes, so a line with "é" before the mistake still points at it; a tab
// is one column. Lines end at LF (a CR before it is the line's last character).

const LF = 0x0a;

export interface TextPosition {
  line: number;
  column: number;
}

/** The position of the byte at `offset` (the end of the text when beyond it). */
export function positionAt(bytes: Uint8Array, offset: number): TextPosition {
  const end = Math.min(Math.max(offset, 0), bytes.length);
  let line = 1;
  let column = 1;
  for (let i = 0; i < end; i++) {
    const byte = bytes[i] as number;
    if (byte === LF) {
      line++;
      column = 1;
    } else if ((byte & 0xc0) !== 0x80) {
      // Not a UTF-8 continuation byte: a new character starts here.
      column++;
    }
  }
  return { line, column };
}
