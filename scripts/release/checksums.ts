// SHA256SUMS in the format `sha256sum` writes and `sha256sum -c` reads: one
// line per file, the lowercase hex digest, two spaces (text mode, which is the
// same as binary on the systems that matter here), the bare file name; sorted
// by name, so the list is the same whatever order the files were made in.
import { createHash } from 'node:crypto';

export const SUMS_FILE = 'SHA256SUMS';

/** Lowercase hex SHA-256 of `data`. */
export function sha256Hex(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The SHA256SUMS text of `files` (name -> bytes): names bare, with no '/', newline or backslash. */
export function sha256Sums(files: ReadonlyMap<string, Uint8Array>): string {
  const names = [...files.keys()].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  let text = '';
  for (const name of names) {
    // sha256sum escapes such names with a leading backslash; a release never needs them.
    if (name === '' || /[/\\\n\r]/.test(name)) throw new Error(`${JSON.stringify(name)}: a SHA256SUMS entry is a bare file name`);
    text += `${sha256Hex(files.get(name) as Uint8Array)}  ${name}\n`;
  }
  return text;
}
