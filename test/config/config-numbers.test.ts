// Numbers beyond a double, for config files: they are read with the same JSON parser,
// so a number beyond a double (1e999) is refused there too, naming the setting,
// instead of becoming Infinity (an unbounded limit) or null.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { ConfigError } from '../../src/config/config.ts';
import { loadConfig } from '../../src/config/config-loader.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-config-numbers-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function loadText(text: string): unknown {
  const file = path.join(dir, 'config.json');
  writeFileSync(file, text);
  try {
    return loadConfig({ configPath: file, env: {}, cwd: dir });
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return { message: err.message, issues: err.issues };
  }
}

const BASE = '"providers":{"demo":{"type":"demo"}},"aliases":{"a":{"provider":"demo"}},"auto":{"default":"a"}';

test('a number beyond a double in a config file names its setting', () => {
  const file = path.join(dir, 'config.json');
  assert.deepEqual(loadText(`{${BASE},"limits":{"maxBodyBytes":1e999}}`), {
    message: `${file}: limits.maxBodyBytes: is a number beyond the largest double (1.7976931348623157e308)`,
    issues: [{ code: 'invalid_value', path: 'limits.maxBodyBytes', message: 'is a number beyond the largest double (1.7976931348623157e308)' }],
  });
  assert.deepEqual(loadText(`{${BASE.replace('"provider":"demo"', '"provider":"demo","maxOutputTokens":-1e400')}}`), {
    message: `${file}: aliases.a.maxOutputTokens: is a number beyond the largest double (1.7976931348623157e308)`,
    issues: [{ code: 'invalid_value', path: 'aliases.a.maxOutputTokens', message: 'is a number beyond the largest double (1.7976931348623157e308)' }],
  });
  // A file that is only a number is not JSON the config can use: the file itself is named.
  const alone = loadText('1e999') as { issues: Array<{ code: string; path: string }> };
  assert.deepEqual(alone.issues.map((i) => [i.code, i.path]), [['unreadable', '']]);
});
