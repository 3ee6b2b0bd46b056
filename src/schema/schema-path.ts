// JSON paths as messages show them: `$` for the root, identifier keys after a
// dot, any other key quoted in brackets, array indices in brackets
// (`$.items[2].name`, `$.properties["first name"]`). One renderer for the
// schema's paths and the checked value's paths, so both read alike.

export type PathSegment = string | number;

/** Keys longer than this are cut in messages, so a hostile key cannot make a message huge. */
const KEY_SHOWN_MAX = 64;
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

export function renderPath(segments: readonly PathSegment[]): string {
  let out = '$';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (IDENTIFIER.test(segment) && segment.length <= KEY_SHOWN_MAX) out += `.${segment}`;
    else out += `[${JSON.stringify(segment.length > KEY_SHOWN_MAX ? `${segment.slice(0, KEY_SHOWN_MAX)}...` : segment)}]`;
  }
  return out;
}
