// `redis://[[username]:password@]host[:port][/db]`, and `rediss://` the same
// over TLS, read strictly: anything the client would silently ignore (a query,
// a fragment, a path after the db) is an error, so a typo in a deployment's
// REDIS_URL fails at startup.
// Schemes: https://www.iana.org/assignments/uri-schemes/prov/redis
//          https://www.iana.org/assignments/uri-schemes/prov/rediss
// The port defaults to 6379 for both: Redis has no separate well-known TLS
// port (its tls-port is whatever the operator sets; redis-cli --tls also
// defaults to 6379), so a TLS Redis on another port names it in the URL.

import { RedisUrlError } from './errors.ts';

export interface RedisAddress {
  host: string;
  port: number;
  /** rediss://: connect with TLS. */
  tls: boolean;
  username?: string;
  password?: string;
  db: number;
}

const DEFAULT_REDIS_PORT = 6379;
/** Redis's own ceiling on `databases` is far below this; SELECT reports a db
 * the server does not have. */
const MAX_DB_INDEX = 65_535;

/** Parses a redis:// or rediss:// URL; throws RedisUrlError naming what is
 * wrong. The password is never part of an error message. */
export function parseRedisUrl(text: string): RedisAddress {
  const tls = text.startsWith('rediss://');
  if (!tls && !text.startsWith('redis://')) {
    throw new RedisUrlError('A Redis URL must start with redis:// (or rediss:// for TLS), as in redis://127.0.0.1:6379/0.');
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new RedisUrlError('The Redis URL is not a valid URL; expected redis[s]://[[user]:password@]host[:port][/db].');
  }
  if (url.search !== '' || url.hash !== '') {
    throw new RedisUrlError('The Redis URL must not have a query (?...) or a fragment (#...).');
  }
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (host === '') throw new RedisUrlError('The Redis URL has no host, as in redis://127.0.0.1:6379.');

  let port = DEFAULT_REDIS_PORT;
  if (url.port !== '') {
    port = Number(url.port);
    if (!Number.isInteger(port) || port < 1 || port > 65_535) {
      throw new RedisUrlError(`The Redis URL port must be 1-65535, not ${url.port}.`);
    }
  }

  let db = 0;
  const path = url.pathname;
  if (path !== '' && path !== '/') {
    const digits = path.slice(1);
    if (!/^[0-9]{1,5}$/.test(digits) || Number(digits) > MAX_DB_INDEX) {
      throw new RedisUrlError(`The Redis URL path must be a database number such as /0, not ${path}.`);
    }
    db = Number(digits);
  }

  const address: RedisAddress = { host, port, tls, db };
  const username = decodePart(url.username, 'username');
  const password = decodePart(url.password, 'password');
  if (username !== '' && password === '') {
    throw new RedisUrlError('The Redis URL has a username but no password; use redis://user:password@host.');
  }
  if (username !== '') address.username = username;
  if (password !== '') address.password = password;
  return address;
}

function decodePart(raw: string, what: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new RedisUrlError(`The Redis URL ${what} has a malformed percent-escape.`);
  }
}
