// A ustar (POSIX.1-1988) archive writer over entries already in memory: pure,
// so the same entries always give the same bytes. The header carries only
// what a reproducible package may carry: the path, the mode, the size and one
// fixed mtime; owners are 0 and their names empty, so nothing of the machine
// that packed it gets in.
// Format: https://pubs.opengroup.org/onlinepubs/9699919799/utilities/pax.html#tag_20_92_13_06

/** One regular file of the archive. */
export interface TarFile {
  /** Path inside the archive, '/'-separated, relative (no leading '/', no '..'). */
  readonly path: string;
  /** Permission bits (0644 or 0755 in a package). */
  readonly mode: number;
  readonly data: Uint8Array;
}

const BLOCK = 512;
const NAME_MAX = 100;
const PREFIX_MAX = 155;
/** The largest size an 11-digit octal field holds (8 GiB - 1). */
const SIZE_MAX = 0o77777777777;

/** A file the archive cannot hold as given; the message names the path and what to change. */
export class TarEntryError extends Error {
  override readonly name = 'TarEntryError';
}

/**
 * The ustar name and prefix fields of a path: the whole path in `name` when it
 * fits in 100 bytes, else split at a '/' so the tail fits `name` and the head
 * fits `prefix` (155 bytes); a path no split fits is refused.
 */
export function splitPath(filePath: string): { name: string; prefix: string } {
  const bytes = Buffer.byteLength(filePath);
  if (bytes <= NAME_MAX) return { name: filePath, prefix: '' };
  for (let slash = filePath.indexOf('/'); slash >= 0; slash = filePath.indexOf('/', slash + 1)) {
    const prefix = filePath.slice(0, slash);
    const name = filePath.slice(slash + 1);
    if (Buffer.byteLength(prefix) <= PREFIX_MAX && Buffer.byteLength(name) <= NAME_MAX && name !== '') return { name, prefix };
  }
  throw new TarEntryError(
    `${filePath}: a ustar path is at most 100 bytes, or a directory part of at most 155 bytes and a rest of at most 100 bytes after a '/'; this one is ${bytes} bytes: shorten the path`,
  );
}

function checkPath(filePath: string): void {
  if (filePath === '' || filePath.startsWith('/') || filePath.split('/').some((part) => part === '' || part === '.' || part === '..')) {
    throw new TarEntryError(`${JSON.stringify(filePath)}: an archive path must be relative, with no empty, '.' or '..' part`);
  }
  if (filePath.includes('\0')) throw new TarEntryError(`${JSON.stringify(filePath)}: an archive path cannot hold a NUL byte`);
}

function writeString(header: Buffer, offset: number, length: number, value: string): void {
  header.write(value, offset, length, 'utf8');
}

/** An octal field of `length` bytes: digits zero-padded to length - 1, then NUL. */
function writeOctal(header: Buffer, offset: number, length: number, value: number): void {
  header.write(`${value.toString(8).padStart(length - 1, '0')}\0`, offset, length, 'ascii');
}

/** The 512-byte ustar header of a regular file. */
export function ustarHeader(file: { path: string; mode: number; size: number }, mtime: number): Buffer {
  checkPath(file.path);
  if (!Number.isInteger(file.size) || file.size < 0 || file.size > SIZE_MAX) throw new TarEntryError(`${file.path}: size ${file.size} does not fit a ustar header`);
  if (!Number.isInteger(file.mode) || file.mode < 0 || file.mode > 0o7777) throw new TarEntryError(`${file.path}: mode ${file.mode} is not a permission mode`);
  if (!Number.isInteger(mtime) || mtime < 0 || mtime > SIZE_MAX) throw new TarEntryError(`mtime ${mtime} does not fit a ustar header`);
  const { name, prefix } = splitPath(file.path);
  const header = Buffer.alloc(BLOCK, 0);
  writeString(header, 0, 100, name);
  writeOctal(header, 100, 8, file.mode);
  writeOctal(header, 108, 8, 0); // uid
  writeOctal(header, 116, 8, 0); // gid
  writeOctal(header, 124, 12, file.size);
  writeOctal(header, 136, 12, mtime);
  header.fill(0x20, 148, 156); // the checksum is computed with its own field as spaces
  header.write('0', 156, 1, 'ascii'); // typeflag: regular file
  writeString(header, 257, 6, 'ustar\0');
  writeString(header, 263, 2, '00');
  // uname (265) and gname (297) stay empty; devmajor/devminor are unused for files.
  writeOctal(header, 329, 8, 0);
  writeOctal(header, 337, 8, 0);
  writeString(header, 345, 155, prefix);
  let sum = 0;
  for (const byte of header) sum += byte;
  // Six octal digits, NUL, space: the layout GNU tar and npm's tar write.
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
  return header;
}

/** Bytewise order of UTF-8 paths, the same on every machine and locale. */
export function compareBytewise(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * The archive of `files` in bytewise path order, every header with `mtime`
 * (seconds), ended by two zero blocks. Duplicate paths are refused.
 */
export function ustarArchive(files: readonly TarFile[], mtime: number): Buffer {
  const sorted = [...files].sort((a, b) => compareBytewise(a.path, b.path));
  const parts: Buffer[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const file = sorted[i] as TarFile;
    if (i > 0 && (sorted[i - 1] as TarFile).path === file.path) throw new TarEntryError(`${file.path}: listed twice`);
    parts.push(ustarHeader({ path: file.path, mode: file.mode, size: file.data.byteLength }, mtime));
    parts.push(Buffer.from(file.data.buffer, file.data.byteOffset, file.data.byteLength));
    const padding = (BLOCK - (file.data.byteLength % BLOCK)) % BLOCK;
    if (padding > 0) parts.push(Buffer.alloc(padding, 0));
  }
  parts.push(Buffer.alloc(BLOCK * 2, 0));
  return Buffer.concat(parts);
}
