// Lua scripts are sent by SHA-1 (EVALSHA) so each call carries 40 bytes, not
// the script; the digest is computed once, when the script is defined.

import { createHash } from 'node:crypto';

export interface RedisScript {
  readonly source: string;
  /** Lowercase hex SHA-1 of the source, as SCRIPT LOAD returns it. */
  readonly sha1: string;
}

export function defineScript(source: string): RedisScript {
  if (typeof source !== 'string' || source.length === 0) throw new TypeError('A Redis script needs a non-empty source.');
  return Object.freeze({ source, sha1: createHash('sha1').update(source, 'utf8').digest('hex') });
}
