// The width and height of a base64 image, read from its header without
// decoding the image: PNG (IHDR), GIF (logical screen), WebP (VP8, VP8L,
// VP8X) and JPEG (the first start-of-frame marker, found by hopping from
// segment to segment). Only the few bytes each format needs are decoded, from
// the 4-character groups that hold them, so the work is bounded whatever the
// image's size: a JPEG walk stops after MAX_JPEG_SEGMENTS segments.
// Formats: PNG https://www.w3.org/TR/png-3/#11IHDR, GIF89a section 18,
// WebP https://developers.google.com/speed/webp/docs/riff_container,
// JPEG ITU T.81 annex B.

export interface ImageDimensions {
  width: number;
  height: number;
}

/** Segments a JPEG walk reads before it gives up (EXIF, ICC and thumbnails come before the frame). */
const MAX_JPEG_SEGMENTS = 64;

/** Bytes of a base64 text, read a few at a time from the groups that hold them. */
class Base64Bytes {
  readonly #text: string;
  /** Decoded length, from the text's length and its padding. */
  readonly length: number;

  constructor(text: string) {
    this.#text = text;
    let padding = 0;
    if (text.endsWith('==')) padding = 2;
    else if (text.endsWith('=')) padding = 1;
    this.length = Math.floor((text.length * 3) / 4) - padding;
  }

  /** `count` bytes from `offset`, or null past the end (or for text that is not base64 there). */
  read(offset: number, count: number): Buffer | null {
    if (offset < 0 || offset + count > this.length) return null;
    const first = Math.floor(offset / 3);
    const last = Math.floor((offset + count - 1) / 3);
    const bytes = Buffer.from(this.#text.slice(first * 4, (last + 1) * 4), 'base64');
    const skip = offset - first * 3;
    if (bytes.length < skip + count) return null;
    return bytes.subarray(skip, skip + count);
  }
}

/** The image's dimensions, or null when the header is not one of the four formats or is cut short. */
export function imageDimensions(base64: string): ImageDimensions | null {
  const bytes = new Base64Bytes(base64);
  const head = bytes.read(0, 12);
  if (head === null) return null;
  if (head[0] === 0x89 && head.toString('latin1', 1, 4) === 'PNG') return png(bytes);
  if (head.toString('latin1', 0, 4) === 'GIF8') return gif(bytes);
  if (head.toString('latin1', 0, 4) === 'RIFF' && head.toString('latin1', 8, 12) === 'WEBP') return webp(bytes);
  if (head[0] === 0xff && head[1] === 0xd8) return jpeg(bytes);
  return null;
}

function positive(width: number, height: number): ImageDimensions | null {
  return width > 0 && height > 0 ? { width, height } : null;
}

/** IHDR is the first chunk: width and height at bytes 16 and 20, big-endian. */
function png(bytes: Base64Bytes): ImageDimensions | null {
  const ihdr = bytes.read(12, 12);
  if (ihdr === null || ihdr.toString('latin1', 0, 4) !== 'IHDR') return null;
  return positive(ihdr.readUInt32BE(4), ihdr.readUInt32BE(8));
}

/** The logical screen: width and height at bytes 6 and 8, little-endian. */
function gif(bytes: Base64Bytes): ImageDimensions | null {
  const screen = bytes.read(6, 4);
  return screen === null ? null : positive(screen.readUInt16LE(0), screen.readUInt16LE(2));
}

function webp(bytes: Base64Bytes): ImageDimensions | null {
  const chunk = bytes.read(12, 18);
  if (chunk === null) return null;
  const kind = chunk.toString('latin1', 0, 4);
  if (kind === 'VP8 ') {
    // Lossy: after the 3-byte frame tag and the start code, 14-bit width and height.
    return positive(chunk.readUInt16LE(14) & 0x3fff, chunk.readUInt16LE(16) & 0x3fff);
  }
  if (kind === 'VP8L') {
    // Lossless: after the signature byte, width-1 and height-1 in 14 bits each.
    const bits = chunk.readUInt32LE(9);
    return positive((bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
  }
  if (kind === 'VP8X') {
    // Extended: canvas width-1 and height-1 in 24 bits each, after 4 bytes of flags.
    return positive(chunk.readUIntLE(12, 3) + 1, chunk.readUIntLE(15, 3) + 1);
  }
  return null;
}

const JPEG_SOI_LENGTH = 2;

/** Start-of-frame markers carry the dimensions; C4 (DHT), C8 (JPG) and CC (DAC) do not. */
function isStartOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

function jpeg(bytes: Base64Bytes): ImageDimensions | null {
  let offset = JPEG_SOI_LENGTH;
  for (let segment = 0; segment < MAX_JPEG_SEGMENTS; segment++) {
    const header = bytes.read(offset, 4);
    if (header === null || header[0] !== 0xff) return null;
    const marker = header[1] as number;
    if (marker === 0xff) {
      // A fill byte before the marker.
      offset += 1;
      continue;
    }
    // Standalone markers (TEM, RSTn) have no length.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      offset += 2;
      continue;
    }
    if (isStartOfFrame(marker)) {
      const frame = bytes.read(offset + 5, 4);
      return frame === null ? null : positive(frame.readUInt16BE(2), frame.readUInt16BE(0));
    }
    const length = header.readUInt16BE(2);
    if (length < 2) return null;
    offset += 2 + length;
  }
  return null;
}
