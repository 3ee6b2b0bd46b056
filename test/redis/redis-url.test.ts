import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RedisUrlError } from '../../src/redis/errors.ts';
import { parseRedisUrl } from '../../src/redis/redis-url.ts';

test('valid URLs', () => {
  const cases: [string, ReturnType<typeof parseRedisUrl>][] = [
    ['redis://127.0.0.1', { host: '127.0.0.1', port: 6379, db: 0 }],
    ['redis://redis.internal:6380', { host: 'redis.internal', port: 6380, db: 0 }],
    ['redis://localhost:6379/', { host: 'localhost', port: 6379, db: 0 }],
    ['redis://localhost:6379/3', { host: 'localhost', port: 6379, db: 3 }],
    ['redis://:s3cret@h:1/0', { host: 'h', port: 1, db: 0, password: 's3cret' }],
    ['redis://gateway:p%40ss%3Aword@h/15', { host: 'h', port: 6379, db: 15, username: 'gateway', password: 'p@ss:word' }],
    ['redis://[::1]:7000/2', { host: '::1', port: 7000, db: 2 }],
  ];
  for (const [url, expected] of cases) assert.deepEqual(parseRedisUrl(url), expected, url);
});

test('invalid URLs name the problem', () => {
  const cases: [string, RegExp][] = [
    ['rediss://h:6379', /rediss:\/\/ \(Redis over TLS\) is not supported/],
    ['http://h:6379', /must start with redis:\/\//],
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
