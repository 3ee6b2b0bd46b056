// Files a config names besides itself (an upstream key, a Redis password, TLS
// certificates and keys): `${NAME}` in the path is replaced by that environment
// variable, so a systemd unit can say "${CREDENTIALS_DIRECTORY}/upstream-key",
// and a relative path is relative to the config file (the working directory
// for the embedded default). Read with a size bound; each failure is a
// ConfigError naming the setting and the resolved path.
import { closeSync, constants as fsConstants, fstatSync, openSync, readSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from './config.ts';
import type { ConfigIssueCode } from './config-issues.ts';

/** The absolute path `file` names; throws `code` when a `${NAME}` in it is not set. */
export function resolveConfigPath(source: string | null, at: string, file: string, env: NodeJS.ProcessEnv, code: ConfigIssueCode): string {
  const expanded = file.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => {
    const value = env[name];
    if (value === undefined || value === '') throw new ConfigError(source, at, `environment variable ${name} (used in the path) is not set`, code);
    return value;
  });
  return path.resolve(source === null ? process.cwd() : path.dirname(source), expanded);
}

/** The bytes of the file `file` names, at most `maxBytes`. */
export function readConfigFile(source: string | null, at: string, file: string, env: NodeJS.ProcessEnv, maxBytes: number, code: ConfigIssueCode): { path: string; bytes: Buffer } {
  const resolved = resolveConfigPath(source, at, file, env, code);
  let bytes: Buffer;
  try {
    bytes = readAtMost(resolved, maxBytes + 1);
  } catch (err) {
    const errno = (err as NodeJS.ErrnoException).code;
    const why =
      errno === 'ENOENT' ? 'does not exist' : errno === 'EACCES' ? 'cannot be read (permission denied)' : errno === 'EISDIR' ? 'is a directory' : errno === 'ENOTREGULAR' ? 'is a named pipe or socket, not a file' : `cannot be read (${errno ?? 'error'})`;
    throw new ConfigError(source, at, `${resolved} ${why}`, code);
  }
  if (bytes.length > maxBytes) throw new ConfigError(source, at, `${resolved} is larger than ${maxBytes} bytes`, code);
  return { path: resolved, bytes };
}

/**
 * At most `limit` bytes of a file: the bound holds while reading, so a
 * path naming a huge file or a device (/dev/zero, /dev/urandom) costs at most
 * `limit` bytes instead of all the memory there is.
 */
function readAtMost(file: string, limit: number): Buffer {
  // Non-blocking: opening a named pipe would otherwise wait for a writer, and
  // freeze a reload; such a path is refused once it is open.
  const fd = openSync(file, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  try {
    const stat = fstatSync(fd);
    if (stat.isFIFO() || stat.isSocket()) throw Object.assign(new Error('not a regular file'), { code: 'ENOTREGULAR' });
    const buffer = Buffer.allocUnsafe(limit);
    let length = 0;
    while (length < limit) {
      const n = readSync(fd, buffer, length, limit - length, null);
      if (n === 0) break;
      length += n;
    }
    // A copy: the bytes are kept (TLS material) and the buffer may be far larger.
    return Buffer.from(buffer.subarray(0, length));
  } finally {
    closeSync(fd);
  }
}
