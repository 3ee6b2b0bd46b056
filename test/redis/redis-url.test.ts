import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RedisUrlError } from '../../src/redis/errors.ts';
import { parseRedisUrl } from '../../src/redis/redis-url.ts';

test('valid URLs', () => {
  const cases: [string, ReturnType<typeof parseRedisUrl>][] = [
    ['redis://127.0.0.1', { tls: false, host: '127.0.0.1', port: 6379, db: 0 }],
    ['redis://redis.internal:6380', { tls: false, host: 'redis.internal', port: 6380, db: 0 }],
    ['redis://localhost:6379/', { tls: false, host: 'localhost', port: 6379, db: 0 }],
    ['redis://localhost:6379/3', { tls: false, host: 'localhost', port: 6379, db: 3 }],
    ['redis://:s3cret@h:1/0', { tls: false, host: 'h', port: 1, db: 0, password: 's3cret' }],
    ['redis://gateway:p%40ss%3Aword@h/15', { tls: false, host: 'h', port: 6379, db: 15, username: 'gateway', password: 'p@ss:word' }],
    ['redis://[::1]:7000/2', { tls: false, host: '::1', port: 7000, db: 2 }],
    // rediss:// is the same URL over TLS; the default port stays 6379 (Redis has no separate TLS port).
    ['rediss://redis.internal', { tls: true, host: 'redis.internal', port: 6379, db: 0 }],
    ['rediss://10.0.0.5:6380/2', { tls: true, host: '10.0.0.5', port: 6380, db: 2 }],
    ['rediss://gateway:pw@[::1]/1', { tls: true, host: '::1', port: 6379, db: 1, username: 'gateway', password: 'pw' }],
  ];
  for (const [url, expected] of cases) assert.deepEqual(parseRedisUrl(url), expected, url);
});

test('invalid URLs name the problem', () => {
  const cases: [string, RegExp][] = [
    ['http://h:6379', /must start with redis:\/\/ \(or rediss:\/\/ for TLS\)/],
    ['redis+tls://h:6379', /must start with redis:\/\//],
    ['rediss://h/x', /path must be a database number/],
    ['rediss://:6379', /not a valid URL|no host/],
    ['h:6379', /must start with redis:\/\//],
    ['redis://', /no host/],
    ['redis://h:0', /port must be 1-65535, not 0/],
    ['redis://h:99999', /not a valid URL/],
    ['redis://h/abc', /path must be a database number such as \/0, not \/abc/],
    ['redis://h/1/2', /not \/1\/2/],
    ['redis://h/-1', /not \/-1/],
    ['redis://h/?db=1', /query/],
    ['redis://h/0#x', /fragment/],
    ['redis://user@h', /username but no password/],
    ['redis://:%E0%A4%A@h', /password has a malformed percent-escape/],
  ];
  for (const [url, message] of cases) {
    assert.throws(() => parseRedisUrl(url), (error: unknown) => {
      assert.ok(error instanceof RedisUrlError, url);
      assert.equal(error.code, 'redis_url_invalid');
      assert.match(error.message, message, url);
      return true;
    });
  }
});

test('the password never appears in an error message', () => {
  assert.throws(() => parseRedisUrl('redis://:hunter2@h/zz'), (error: unknown) => {
    return error instanceof RedisUrlError && !error.message.includes('hunter2');
  });
});
