import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/config.ts';
import { embeddedConfigValue } from '../../src/config/config-loader.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { restartOnlyChanges } from '../../src/gateway/restart-settings.ts';

const base = embeddedConfigValue() as Record<string, unknown>;
const parse = (audit: unknown) => parseConfig({ ...base, audit }, '/etc/portcullis.json', '/tmp');

function fails(audit: unknown, at: string, problem: RegExp): void {
  assert.throws(
    () => parse(audit),
    (err: unknown) => err instanceof ConfigError && err.issues.length === 1 && err.path === at && problem.test(err.message),
    at,
  );
}

test('audit.rotateBytes: default 64 MiB, at least 64 KiB', () => {
  assert.deepEqual(parseConfig(base, null, '/tmp').audit, { rotateBytes: 67_108_864 });
  assert.deepEqual(parse({}).audit, { rotateBytes: 67_108_864 });
  assert.deepEqual(parse({ rotateBytes: 65_536 }).audit, { rotateBytes: 65_536 });
  fails({ rotateBytes: 65_535 }, 'audit.rotateBytes', /65536/);
  fails({ rotateBytes: 1.5 }, 'audit.rotateBytes', /integer/);
  fails({ rotateBytes: '1MB' }, 'audit.rotateBytes', /integer|number/);
  // The unit and an example, whatever is wrong with it.
  for (const wrong of ['64MiB', 1000, 2 ** 41, 1.5]) {
    assert.throws(
      () => parse({ rotateBytes: wrong }),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.problem === 'audit.rotateBytes: must be a number of bytes, an integer from 65536 (64 KiB) to 1099511627776 (1 TiB), e.g. 67108864 for 64 MiB',
      String(wrong),
    );
  }
  fails({ rotate: 1 }, 'audit.rotate', /unknown|not a setting|Unknown/i);
  fails([], 'audit', /object/);
});

test('audit needs a restart: a reload that changes it names it and keeps the running value', () => {
  const running = parse({ rotateBytes: 65_536 });
  const next = parse({ rotateBytes: 131_072 });
  assert.deepEqual(restartOnlyChanges(running, next), [{ setting: 'audit.rotateBytes', running: 65_536, configured: 131_072 }]);
});
