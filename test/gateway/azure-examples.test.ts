// The Azure OpenAI configs an operator copies: the two of docs/config.md's
// "Azure OpenAI" section and deploy/examples/portcullis-azure.json. Each passes
// `portcullis check-config` as written, and each, with only the resource's
// address rewritten to a fake Azure on loopback (./azure-fake.ts), serves every
// alias it defines, non-stream and stream.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { runCheckConfigCommand } from '../../src/cli/check-config-command.ts';
import { repositoryRoot } from '../support/repository-root.ts';
import { tempDir } from '../support/temp-dir.ts';
import { API_VERSION, azure, AZURE_KEY, violations } from './azure-fake.ts';
import { postChat, sseData, startFakeUpstream, startGateway, type FakeUpstream } from './harness.ts';

const ROOT = repositoryRoot();
const EXAMPLE = join(ROOT, 'deploy/examples/portcullis-azure.json');
const RESOURCE = 'https://my-resource.openai.azure.com';

let dir: string;
let credentials: string;
let upstream: FakeUpstream;

before(async () => {
  dir = tempDir('azure-examples');
  credentials = join(dir, 'credentials');
  mkdirSync(credentials);
  writeFileSync(join(credentials, 'azure-openai-key'), `${AZURE_KEY}\n`);
  upstream = await startFakeUpstream(azure);
});
after(async () => {
  await upstream?.close();
});

/** The ```json blocks of docs/config.md's "## Azure OpenAI" section. */
function documentedConfigs(): string[] {
  const doc = readFileSync(join(ROOT, 'docs/config.md'), 'utf8');
  const start = doc.indexOf('\n## Azure OpenAI\n');
  assert.ok(start > 0, 'docs/config.md has an "Azure OpenAI" section');
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1] as string);
}

function checkConfig(args: string[], env: NodeJS.ProcessEnv): { code: number; stdout: string; stderr: string } {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const sink = (parts: Buffer[]): Writable =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        parts.push(Buffer.from(chunk));
        done();
      },
    });
  const code = runCheckConfigCommand(args, { configPath: undefined, env, cwd: dir, stdout: sink(out), stderr: sink(err) });
  return { code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
}

/** Every alias of `text` (a config file's content, the resource's address pointed at the fake) answers. */
async function servesEveryAlias(text: string, env: NodeJS.ProcessEnv): Promise<void> {
  assert.ok(text.includes(RESOURCE));
  const value = JSON.parse(text.replaceAll(RESOURCE, new URL(upstream.baseUrl).origin)) as { aliases: Record<string, unknown> };
  const gw = await startGateway({ configValue: value, env });
  try {
    for (const alias of Object.keys(value.aliases)) {
      upstream.requests.length = 0;
      violations.length = 0;
      const plain = await postChat(gw, { model: alias, messages: [{ role: 'user', content: 'Hi' }] });
      assert.equal(plain.status, 200, `${alias}: ${plain.text}`);
      assert.equal((plain.json() as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content, 'Hello from Azure.');
      const stream = await postChat(gw, { model: alias, messages: [{ role: 'user', content: 'Hi' }], stream: true });
      assert.equal(stream.status, 200, `${alias}: ${stream.text}`);
      assert.equal(sseData(stream.text).at(-1), '[DONE]');
      assert.deepEqual(violations, []);
      assert.equal(upstream.requests.length, 2);
      for (const seen of upstream.requests) {
        assert.equal(seen.headers['api-key'], AZURE_KEY, alias);
        assert.equal(seen.headers['authorization'], undefined, alias);
        assert.match(seen.url, new RegExp(`^/openai/(v1/chat/completions$|deployments/[^/]+/chat/completions\\?api-version=${API_VERSION}$)`));
      }
    }
  } finally {
    await gw.close();
  }
}

test('docs/config.md shows both Azure endpoint styles, and check-config accepts each as written', () => {
  const configs = documentedConfigs();
  assert.equal(configs.length, 2);
  assert.match(configs[0] as string, /\/openai\/deployments\/gpt-4o\?api-version=2024-10-21"/);
  assert.match(configs[1] as string, /\/openai\/v1"/);
  configs.forEach((text, i) => {
    const file = join(dir, `documented-${i}.json`);
    writeFileSync(file, text);
    const result = checkConfig([file], { AZURE_OPENAI_API_KEY: AZURE_KEY });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.ok(result.stdout.startsWith(`${file}: ok\n`), result.stdout);
  });
});

test('the documented configs serve every alias against the fake Azure', async () => {
  for (const text of documentedConfigs()) await servesEveryAlias(text, { AZURE_OPENAI_API_KEY: AZURE_KEY });
});

test('deploy/examples/portcullis-azure.json passes check-config with its credentials directory', () => {
  const result = checkConfig(['--credentials-dir', credentials, EXAMPLE], {});
  assert.deepEqual(result, {
    code: 0,
    stdout:
      `${EXAMPLE}: ok\n` +
      '  2 providers: azure-gpt-4o (openai), azure-v1 (openai); 2 aliases: service-chat, service-mini; ' +
      'service-auto defaults to service-chat; listen 127.0.0.1:8080; data /var/lib/portcullis\n',
    stderr: '',
  });
});

test('deploy/examples/portcullis-azure.json serves both aliases against the fake Azure, the key read from the credential', async () => {
  await servesEveryAlias(readFileSync(EXAMPLE, 'utf8'), { CREDENTIALS_DIRECTORY: credentials });
});
