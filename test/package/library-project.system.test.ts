// The package as a TypeScript host uses it: the tarball installed offline into
// a "type": "module" project with the strictest usual settings (strict,
// exactOptionalPropertyTypes, NodeNext, skipLibCheck false, so every .d.ts the
// entries reach is checked too), a consumer type-checked against the shipped
// declarations and run with node; a wrong use fails the check with the
// expected error; a host's own ports pass the shipped contract suites under
// node --test (and a broken one fails them); paths past package.json `exports`
// are refused; and each example in docs/library/ type-checks and runs the
// same way (docs/library.md shows them): a host program is started as a user would (PORT=0, a fake
// upstream at UPSTREAM_URL, its own DATA_DIR), served real requests, and
// stopped with SIGTERM (library-examples.ts says what each must do).
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { repositoryRoot } from '../support/repository-root.ts';
import { EXAMPLE_SCENARIOS, MAX_EXAMPLE_LINES, runServedExample } from './library-examples.ts';
import { baseEnv, hostProject, linkTypeScript, packedSkipReason, packRepository, run, STEP_MS } from './packed-project.ts';

const root = repositoryRoot();
const skip = await packedSkipReason();
if (skip) console.log(`# library-project: skipped, ${skip}`);

/** The docs examples: every .ts file in docs/library/, by name. */
const EXAMPLES_DIR = path.join(root, 'docs', 'library');
const examples = existsSync(EXAMPLES_DIR) ? readdirSync(EXAMPLES_DIR).filter((name) => name.endsWith('.ts')).sort() : [];

const COMPILER_OPTIONS = {
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  target: 'ES2022',
  lib: ['ES2023'],
  types: ['node'],
  skipLibCheck: false,
  outDir: 'out',
  rootDir: '.',
};

const CONSUMER = `import { checkConfig, GatewayConfigError, type CheckConfigOptions, type ConfigIssue } from 'portcullis';
import * as testing from 'portcullis/testing';

const options: CheckConfigOptions = { env: {} };
const fine: ConfigIssue[] = checkConfig({ providers: { local: { type: 'demo' } }, aliases: { 'service-chat': { provider: 'local', model: 'm' } } }, options);
const broken = checkConfig({ providers: { up: { type: 'openai', baseUrl: 'https://llm.internal/v1', apiKeyEnv: 'UP_KEY' } }, aliases: {}, lsiten: {} }, options);
const error = new GatewayConfigError(broken);
const codes: string[] = broken.map((issue) => \`\${issue.code} \${issue.path}\`);
console.log(JSON.stringify({ fine, codes, error: [error.name, error.code, error instanceof Error, error.issues.length], testing: Object.keys(testing).sort() }));
`;

/** The runtime values of portcullis/testing: the contract suites, the fake upstream and its dialects. */
const TESTING_EXPORTS = [
  'ANTHROPIC_DIALECT',
  'OPENAI_DIALECT',
  'REQUEST_RECORD_FIELDS',
  'runAuditSinkContract',
  'runAuthenticatorContract',
  'runKeyStoreContract',
  'runLimiterContract',
  'runLoggerContract',
  'runProviderAdapterContract',
  'runProviderKeySourceContract',
  'runTraceExporterContract',
  'runUsageStoreContract',
  'sendJson',
  'startEventStream',
  'startFakeUpstream',
];

// A host's own ports held to the shipped contract suites, run with node --test: a
// key table and a vault cache that pass, and a key table that throws for an
// unknown key, which the authenticator suite must fail.
const CONTRACTS = `import { createHash } from 'node:crypto';
import type { Authenticator, KeyPolicy } from 'portcullis';
import { runAuthenticatorContract, runProviderKeySourceContract } from 'portcullis/testing';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const table = new Map<string, KeyPolicy>([[sha256('k-known'), { id: 'team-a', limits: { requestsPerMinute: 60 } }]]);
const authenticate: Authenticator = ({ apiKey }) => (apiKey === null ? null : (table.get(sha256(apiKey)) ?? null));
runAuthenticatorContract('a key table', () => ({ authenticate, knownKey: 'k-known', unknownKey: 'k-unknown' }));

const strict: Authenticator = ({ apiKey }) => {
  const policy = apiKey === null ? undefined : table.get(sha256(apiKey));
  if (policy === undefined) throw new Error('unknown key');
  return policy;
};
if (process.env['WITH_BROKEN'] === '1') runAuthenticatorContract('a key table that throws', () => ({ authenticate: strict, knownKey: 'k-known', unknownKey: 'k-unknown' }));

const vault = new Map([['upstream', 'sk-vault-1']]);
let version = 1;
runProviderKeySourceContract('a vault cache', () => ({
  source: (provider) => vault.get(provider),
  provider: 'upstream',
  unknownProvider: 'other',
  rotate: () => void vault.set('upstream', \`sk-vault-\${++version}\`),
}));
`;

const WRONG = `import { checkConfig } from 'portcullis';

const count: number = checkConfig({}, { baseDir: 42 });
console.log(count);
`;

const DEEP = `import type { Gateway } from 'portcullis/dist/src/gateway/gateway.js';

export const gateway: Gateway | null = null;
`;

// Resolved at run time through exports: the entries resolve, paths past them do not.
const RESOLVE = `const outcome = {};
for (const specifier of ['portcullis', 'portcullis/testing', 'portcullis/package.json', 'portcullis/dist/src/gateway/gateway.js', 'portcullis/dist/src/index.js', 'portcullis/src/index.ts']) {
  try {
    outcome[specifier] = new URL(import.meta.resolve(specifier)).pathname.replace(/^.*\\/node_modules\\//, '');
  } catch (err) {
    outcome[specifier] = err.code;
  }
}
try {
  await import('portcullis/dist/src/gateway/gateway.js');
  outcome.imported = 'loaded';
} catch (err) {
  outcome.imported = err.code;
}
console.log(JSON.stringify(outcome));
`;

let tmp = '';
let project = '';

before(async () => {
  if (skip) return;
  tmp = mkdtempSync(path.join(os.tmpdir(), 'portcullis-library-project-'));
  const { tarball } = await packRepository(root, tmp);
  project = await hostProject(tmp, tarball, 'host');
  linkTypeScript(root, project);
  mkdirSync(path.join(project, 'src'));
  mkdirSync(path.join(project, 'examples'));
  for (const [name, text] of Object.entries({ 'consumer.ts': CONSUMER, 'wrong.ts': WRONG, 'deep.ts': DEEP, 'contracts.test.ts': CONTRACTS })) writeFileSync(path.join(project, 'src', name), text);
  writeFileSync(path.join(project, 'resolve.mjs'), RESOLVE);
  for (const example of examples) copyFileSync(path.join(EXAMPLES_DIR, example), path.join(project, 'examples', example));
});

after(() => {
  if (tmp !== '') rmSync(tmp, { recursive: true, force: true });
});

/** Type-checks and compiles `files` of the project (to out/) with its own tsconfig; the exit code and the compiler's output. */
async function compile(name: string, files: readonly string[]): Promise<{ code: number; output: string }> {
  const config = path.join(project, `tsconfig.${name}.json`);
  writeFileSync(config, `${JSON.stringify({ compilerOptions: COMPILER_OPTIONS, files }, null, 2)}\n`);
  const tsc = path.join(project, 'node_modules', 'typescript', 'bin', 'tsc');
  try {
    const { stdout, stderr } = await run(process.execPath, [tsc, '-p', config, '--pretty', 'false'], { cwd: project, env: baseEnv, timeout: STEP_MS });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const failed = err as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw err;
    return { code: failed.code, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

async function runNode(file: string, cwd = project): Promise<string> {
  const { stdout } = await run(process.execPath, [path.join(project, file)], { cwd, env: baseEnv, timeout: STEP_MS });
  return stdout;
}

describe('a strict TypeScript project using the packed package', { skip }, () => {
  test('a consumer type-checks against the shipped declarations and runs with node', async () => {
    const compiled = await compile('consumer', ['src/consumer.ts']);
    assert.deepEqual(compiled, { code: 0, output: '' });
    assert.deepEqual(JSON.parse(await runNode('out/src/consumer.js')), {
      fine: [],
      codes: ['unknown_setting lsiten', 'required aliases'],
      error: ['GatewayConfigError', 'invalid_config', true, 2],
      testing: TESTING_EXPORTS,
    });
  });

  test('a wrong use fails the type check with the errors a host would see', async () => {
    const compiled = await compile('wrong', ['src/wrong.ts']);
    assert.equal(compiled.code, 2, compiled.output);
    assert.deepEqual(compiled.output.trim().split('\n'), [
      "src/wrong.ts(3,7): error TS2322: Type 'ConfigIssue[]' is not assignable to type 'number'.",
      "src/wrong.ts(3,41): error TS2322: Type 'number' is not assignable to type 'string'.",
    ]);
  });

  test("a host's ports pass the contract suites of portcullis/testing under node --test, and a broken one fails them", async () => {
    const compiled = await compile('contracts', ['src/contracts.test.ts']);
    assert.deepEqual(compiled, { code: 0, output: '' });
    const args = ['--test', '--test-reporter=tap', path.join('out', 'src', 'contracts.test.js')];
    // A run of its own, not a subtest of this one (node:test marks its children with NODE_TEST_CONTEXT).
    const { NODE_TEST_CONTEXT: _, ...env } = baseEnv;
    const passing = await run(process.execPath, args, { cwd: project, env, timeout: STEP_MS });
    assert.match(passing.stdout, /^# suites 2$/m);
    assert.match(passing.stdout, /^# pass [1-9][0-9]*$/m);
    assert.match(passing.stdout, /^# fail 0$/m);
    await assert.rejects(run(process.execPath, args, { cwd: project, env: { ...env, WITH_BROKEN: '1' }, timeout: STEP_MS }), (err: { code?: unknown; stdout?: string }) => {
      assert.equal(err.code, 1);
      assert.match(err.stdout ?? '', /^# suites 3$/m);
      assert.match(err.stdout ?? '', /^# fail 2$/m, 'the unknown key and the keyless request');
      return true;
    });
  });

  test('a path past package.json exports is refused: by the type check, and at run time with ERR_PACKAGE_PATH_NOT_EXPORTED', async () => {
    const compiled = await compile('deep', ['src/deep.ts']);
    assert.equal(compiled.code, 2, compiled.output);
    assert.equal(compiled.output, "src/deep.ts(1,30): error TS2307: Cannot find module 'portcullis/dist/src/gateway/gateway.js' or its corresponding type declarations.\n");
    assert.deepEqual(JSON.parse(await runNode('resolve.mjs')), {
      portcullis: 'portcullis/dist/src/index.js',
      'portcullis/testing': 'portcullis/dist/src/testing.js',
      'portcullis/package.json': 'portcullis/package.json',
      'portcullis/dist/src/gateway/gateway.js': 'ERR_PACKAGE_PATH_NOT_EXPORTED',
      'portcullis/dist/src/index.js': 'ERR_PACKAGE_PATH_NOT_EXPORTED',
      'portcullis/src/index.ts': 'ERR_PACKAGE_PATH_NOT_EXPORTED',
      imported: 'ERR_PACKAGE_PATH_NOT_EXPORTED',
    });
  });

  test('docs/library/ has examples, each run below, and docs/library.md shows each one whole', () => {
    assert.ok(examples.length > 0, `no .ts example in ${EXAMPLES_DIR}`);
    const page = readFileSync(path.join(root, 'docs', 'library.md'), 'utf8');
    for (const example of examples) {
      const text = readFileSync(path.join(EXAMPLES_DIR, example), 'utf8');
      assert.ok(page.includes(`[docs/library/${example}](library/${example}):\n\n\`\`\`ts\n${text}\`\`\``), `docs/library.md shows docs/library/${example} whole, under a link to it`);
    }
  });

  test(`each example is a whole program under ${MAX_EXAMPLE_LINES} lines, and each one serving is held to a scenario`, () => {
    for (const example of examples) {
      const lines = readFileSync(path.join(EXAMPLES_DIR, example), 'utf8').split('\n').length - 1;
      assert.ok(lines < MAX_EXAMPLE_LINES, `docs/library/${example} has ${lines} lines`);
    }
    const served = examples.filter((example) => readFileSync(path.join(EXAMPLES_DIR, example), 'utf8').includes("process.once('SIGTERM'"));
    assert.deepEqual(served, Object.keys(EXAMPLE_SCENARIOS).sort());
  });

  for (const example of examples) {
    const scenario = EXAMPLE_SCENARIOS[example];
    const what = scenario === undefined ? 'runs to exit 0' : `serves: ${scenario.title}; SIGTERM ends it with exit 0`;
    test(`docs/library/${example} type-checks and ${what}`, async () => {
      const compiled = await compile(`example-${example.replace(/\.ts$/, '')}`, [`examples/${example}`]);
      assert.deepEqual(compiled, { code: 0, output: '' });
      const cwd = mkdtempSync(path.join(tmp, 'example-'));
      const file = path.join(project, 'out', 'examples', example.replace(/\.ts$/, '.js'));
      if (scenario === undefined) await runNode(path.relative(project, file), cwd);
      else await runServedExample({ project, file, cwd, env: baseEnv, scenario, timeoutMs: STEP_MS });
    });
  }
});
