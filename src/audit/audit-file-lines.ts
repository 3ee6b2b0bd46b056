// Bounded line reading for the audit files: forward (verify), backward
// (list, newest first) and the last line (append). No read holds more than
// one line of MAX_RECORD_LINE_BYTES plus a 64 KiB chunk, whatever the file's size.
import type { FileHandle } from 'node:fs/promises';
import { MAX_RECORD_LINE_BYTES } from './audit-record.ts';

const CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

/** A line longer than MAX_RECORD_LINE_BYTES: portcullis never writes one. */
export class OverlongLineError extends Error {
  override name = 'OverlongLineError';
  /** 1-based line number when reading forward; null backward. */
  readonly line: number | null;
  constructor(line: number | null) {
    super(`a line is longer than ${MAX_RECORD_LINE_BYTES} bytes, more than any audit record`);
    this.line = line;
  }
}

/**
 * Calls `onLine` for every line from the start: its text (without the newline),
 * its 1-based number and whether a newline ended it (only the last line can
 * lack one). `onLine` returns false to stop. Reads up to `end` (a size taken
 * earlier), or to the end of the file.
 */
export async function forEachLine(handle: FileHandle, onLine: (text: string, line: number, terminated: boolean) => boolean, end: number = Infinity): Promise<void> {
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  let parts: Buffer[] = [];
  let pending = 0;
  let line = 1;
  let position = 0;
  for (;;) {
    // Bytes past `end` (appended after a snapshot of the file) are not read.
    const want = Math.min(CHUNK_BYTES, end - position);
    if (want <= 0) break;
    const { bytesRead } = await handle.read(chunk, 0, want, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start);
      if (nl === -1 || nl >= bytesRead) break;
      if (pending + nl - start > MAX_RECORD_LINE_BYTES) throw new OverlongLineError(line);
      parts.push(Buffer.from(chunk.subarray(start, nl)));
      const text = Buffer.concat(parts).toString('utf8');
      parts = [];
      pending = 0;
      if (!onLine(text, line, true)) return;
      line += 1;
      start = nl + 1;
    }
    if (start < bytesRead) {
      pending += bytesRead - start;
      if (pending > MAX_RECORD_LINE_BYTES) throw new OverlongLineError(line);
      parts.push(Buffer.from(chunk.subarray(start, bytesRead)));
    }
  }
  if (pending > 0) onLine(Buffer.concat(parts).toString('utf8'), line, false);
}

/**
 * Calls `onLine` for every line from the end, newest first, skipping a last
 * line without its newline (a torn write: not a record). Returns false from
 * `onLine` to stop. Throws OverlongLineError for a line too long.
 */
export async function forEachLineBackward(handle: FileHandle, size: number, onLine: (text: string) => boolean): Promise<void> {
  // Everything after the last newline is an unterminated tail: not a record.
  const lastNewline = await lastNewlineBefore(handle, size, size);
  if (lastNewline === null || lastNewline === -1) return;
  // `rest` holds the bytes [position, lastNewline) not yet handed out: the ends of lines whose starts are still unread.
  let rest: Buffer = Buffer.alloc(0);
  let position = lastNewline;
  while (position > 0) {
    const length = Math.min(CHUNK_BYTES, position);
    position -= length;
    const chunk = Buffer.allocUnsafe(length);
    await readExactly(handle, chunk, position);
    let buffer = rest.length === 0 ? chunk : Buffer.concat([chunk, rest]);
    for (let nl = buffer.lastIndexOf(NEWLINE); nl !== -1; nl = buffer.lastIndexOf(NEWLINE)) {
      if (buffer.length - nl - 1 > MAX_RECORD_LINE_BYTES) throw new OverlongLineError(null);
      if (!onLine(buffer.subarray(nl + 1).toString('utf8'))) return;
      buffer = buffer.subarray(0, nl);
    }
    if (buffer.length > MAX_RECORD_LINE_BYTES) throw new OverlongLineError(null);
    rest = Buffer.from(buffer);
  }
  onLine(rest.toString('utf8'));
}

/**
 * Offset of the last newline before `end` (exclusive), -1 when there is none
 * from the start of the file, null when none within `limit` bytes.
 */
export async function lastNewlineBefore(handle: FileHandle, end: number, limit: number = MAX_RECORD_LINE_BYTES + 1): Promise<number | null> {
  let position = end;
  const floor = Math.max(0, end - limit);
  while (position > floor) {
    const length = Math.min(CHUNK_BYTES, position - floor);
    position -= length;
    const chunk = Buffer.allocUnsafe(length);
    await readExactly(handle, chunk, position);
    const nl = chunk.lastIndexOf(NEWLINE);
    if (nl !== -1) return position + nl;
  }
  return floor === 0 ? -1 : null;
}

/** The bytes [start, end) of the file. */
export async function readRange(handle: FileHandle, start: number, end: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(end - start);
  await readExactly(handle, buffer, start);
  return buffer;
}

async function readExactly(handle: FileHandle, buffer: Buffer, position: number): Promise<void> {
  let offset = 0;
  while (offset < buffer.length) {
    const { bytesRead } = await handle.read(buffer, offset, buffer.length - offset, position + offset);
    if (bytesRead === 0) throw new Error('the file became shorter while it was read');
    offset += bytesRead;
  }
}
