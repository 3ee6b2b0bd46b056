import assert from 'node:assert/strict';
import { test } from 'node:test';
import { commandName, hintFlags } from '../../src/cli/command-name.ts';

test('the command a hint shows is the one that can be typed where the user stands', () => {
  const cases: Array<[string | undefined, string, string]> = [
    ['/usr/local/bin/portcullis', '/home/me', 'portcullis'],
    ['/tmp/prefix/lib/node_modules/portcullis/dist/src/cli/main.js', '/tmp/prefix/lib/node_modules/portcullis', 'node dist/src/cli/main.js'],
    ['/work/main/dist/src/cli/main.js', '/work/main', 'node dist/src/cli/main.js'],
    ['/work/main/dist/src/cli/main.js', '/elsewhere', 'node /work/main/dist/src/cli/main.js'],
    ['/my dir/dist/src/cli/main.js', '/', "node 'my dir/dist/src/cli/main.js'"],
    ["/o'k $HOME/main.js", '/', `node 'o'\\''k $HOME/main.js'`],
    [undefined, '/', 'portcullis'],
  ];
  for (const [argv1, cwd, expected] of cases) assert.equal(commandName(argv1, cwd), expected, `${argv1} from ${cwd}`);
});

test('hints repeat --config and --data-dir, quoted for the shell', () => {
  assert.equal(hintFlags(undefined, undefined), '');
  assert.equal(hintFlags('/etc/portcullis/config.json', '/var/lib/x y'), " --config /etc/portcullis/config.json --data-dir '/var/lib/x y'");
});
