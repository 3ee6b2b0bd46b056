// gzip with a header that says nothing about the machine or the moment: zlib
// already writes mtime 0; the OS byte (which zlib sets from the platform it
// was built for) is pinned to 255, "unknown" (RFC 1952, 2.3.1), so a build on
// macOS or Windows can give the same bytes as one on Linux.
import { gzipSync } from 'node:zlib';

/** The level npm packs with. */
export const GZIP_LEVEL = 9;
const OS_OFFSET = 9;
const OS_UNKNOWN = 255;

/** `data` gzipped at GZIP_LEVEL with mtime 0, no name, no comment, OS 255. */
export function gzipFixed(data: Uint8Array): Buffer {
  const out = gzipSync(data, { level: GZIP_LEVEL });
  // zlib's own header: magic, deflate, no flags, so the fixed fields are where RFC 1952 puts them.
  if (out[0] !== 0x1f || out[1] !== 0x8b || out[2] !== 8 || out[3] !== 0 || out.readUInt32LE(4) !== 0) {
    throw new Error(`zlib wrote an unexpected gzip header: ${out.subarray(0, 10).toString('hex')}`);
  }
  out[OS_OFFSET] = OS_UNKNOWN;
  return out;
}
