// The SBOM as data: the exact document for a known tarball hash and time, the
// serial number derived from the hash, the release time and commit, the engines
// range in vers syntax.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { COMMIT_PROPERTY, npmPurl, SOURCE_DATE_PROPERTY, sbomDocument, sbomFileName, sbomText, serialNumberOf, versFromEngines } from '../../scripts/release/sbom.ts';

const HASH = '792a6980f6759279f152f4ea91a078ebe0d65c59a6c33a0c0338ab2bf830a480';
const input = {
  name: 'portcullis',
  version: '0.1.0',
  description: 'An auditable gateway',
  license: 'Apache-2.0',
  nodeRange: '>=20.11',
  tarballSha256: HASH,
  seconds: 1767225600,
  commit: '0123456789abcdef0123456789abcdef01234567',
};

test('the document: the package with its hash and licence, Node.js as the one (platform) component, the dependency graph', () => {
  assert.deepEqual(sbomDocument(input), {
    bomFormat: 'CycloneDX',
    specVersion: '1.6',
    serialNumber: 'urn:uuid:792a6980-f675-8279-b152-f4ea91a078eb',
    version: 1,
    metadata: {
      timestamp: '2026-01-01T00:00:00Z',
      component: {
        type: 'application',
        'bom-ref': 'pkg:npm/portcullis@0.1.0',
        name: 'portcullis',
        version: '0.1.0',
        description: 'An auditable gateway',
        licenses: [{ license: { id: 'Apache-2.0' } }],
        purl: 'pkg:npm/portcullis@0.1.0',
        hashes: [{ alg: 'SHA-256', content: HASH }],
      },
      properties: [
        { name: 'portcullis:build:sourceDateEpoch', value: '1767225600' },
        { name: 'portcullis:build:commit', value: '0123456789abcdef0123456789abcdef01234567' },
      ],
    },
    components: [
      {
        type: 'platform',
        'bom-ref': 'platform:nodejs',
        name: 'Node.js',
        description: 'The runtime the package needs: Node.js >=20.11 (package.json engines.node)',
        scope: 'required',
        externalReferences: [{ type: 'website', url: 'https://nodejs.org/' }],
        properties: [{ name: 'portcullis:node:versionRange', value: 'vers:npm/>=20.11.0' }],
      },
    ],
    dependencies: [
      { ref: 'pkg:npm/portcullis@0.1.0', dependsOn: ['platform:nodejs'] },
      { ref: 'platform:nodejs', dependsOn: [] },
    ],
  });
});

test('every dependsOn names a bom-ref of the document, and every component has a dependencies entry', () => {
  const doc = sbomDocument(input) as { metadata: { component: { 'bom-ref': string } }; components: Array<{ 'bom-ref': string }>; dependencies: Array<{ ref: string; dependsOn: string[] }> };
  const refs = [doc.metadata.component['bom-ref'], ...doc.components.map((c) => c['bom-ref'])];
  assert.deepEqual(doc.dependencies.map((d) => d.ref), refs);
  for (const d of doc.dependencies) for (const on of d.dependsOn) assert.ok(refs.includes(on), on);
});

test('the file is two-space JSON with a final newline, the same bytes for the same input', () => {
  const text = sbomText(input);
  assert.equal(text, `${JSON.stringify(sbomDocument(input), null, 2)}\n`);
  assert.equal(sbomText({ ...input }), text);
  assert.notEqual(sbomText({ ...input, tarballSha256: 'f'.repeat(64) }), text);
  assert.equal(sbomFileName('portcullis', '0.1.0'), 'portcullis-0.1.0.cdx.json');
});

test('the serial number is an RFC 4122 URN (version 8, variant 10) from the first 16 bytes of the hash', () => {
  assert.equal(serialNumberOf('0'.repeat(64)), 'urn:uuid:00000000-0000-8000-8000-000000000000');
  assert.equal(serialNumberOf('f'.repeat(64)), 'urn:uuid:ffffffff-ffff-8fff-bfff-ffffffffffff');
  assert.throws(() => serialNumberOf('XYZ'), { message: 'not a lowercase hex SHA-256: "XYZ"' });
});

test('with package.json repository, the component names it as its vcs reference with the commit', () => {
  const doc = sbomDocument({ ...input, repositoryUrl: 'https://git.example/portcullis.git' }) as { metadata: { component: { externalReferences?: unknown }; properties: unknown } };
  assert.deepEqual(doc.metadata.component.externalReferences, [{ type: 'vcs', url: 'https://git.example/portcullis.git', comment: 'commit 0123456789abcdef0123456789abcdef01234567' }]);
  assert.deepEqual(doc.metadata.properties, [
    { name: SOURCE_DATE_PROPERTY, value: '1767225600' },
    { name: COMMIT_PROPERTY, value: input.commit },
  ]);
  assert.equal((sbomDocument(input) as { metadata: { component: Record<string, unknown> } }).metadata.component['externalReferences'], undefined);
});

test('engines comparators become vers ranges of full versions, partial versions expanded as node-semver does, sorted by version', () => {
  assert.equal(versFromEngines('>=20.11'), 'vers:npm/>=20.11.0');
  assert.equal(versFromEngines('<27 >=20.11.0'), 'vers:npm/>=20.11.0|<27.0.0');
  assert.equal(versFromEngines(' 22.1.0 '), 'vers:npm/22.1.0');
  assert.equal(versFromEngines('=v22.1.0'), 'vers:npm/22.1.0');
  assert.equal(versFromEngines('20'), 'vers:npm/>=20.0.0|<21.0.0');
  assert.equal(versFromEngines('=20.11'), 'vers:npm/>=20.11.0|<20.12.0');
  assert.equal(versFromEngines('>20'), 'vers:npm/>=21.0.0');
  assert.equal(versFromEngines('>20.11'), 'vers:npm/>=20.12.0');
  assert.equal(versFromEngines('>20.11.1'), 'vers:npm/>20.11.1');
  assert.equal(versFromEngines('<=22'), 'vers:npm/<23.0.0');
  assert.equal(versFromEngines('<=22.4'), 'vers:npm/<22.5.0');
  assert.equal(versFromEngines('<=22.4.1'), 'vers:npm/<=22.4.1');
  assert.equal(versFromEngines('<22'), 'vers:npm/<22.0.0');
});

test('engines forms vers cannot state exactly are refused naming engines.node', () => {
  for (const [range, comparator] of [
    ['^20 || >=22', '^20'],
    ['>=20 || >=22', '||'],
    ['~20.11', '~20.11'],
    ['20.x', '20.x'],
    ['>=20.*', '>=20.*'],
    ['20 - 22', '-'],
    ['>=20.11.0-rc.1', '>=20.11.0-rc.1'],
    ['>=020', '>=020'],
    ['*', '*'],
  ] as const) {
    assert.throws(() => versFromEngines(range), {
      message: `package.json engines.node ${JSON.stringify(range)}: the SBOM states only comparators >=, >, <, <=, = of versions (like ">=20.11" or ">=20.11 <27"); ${JSON.stringify(comparator)} is not one: write engines.node that way`,
    });
  }
});

test('npm package URLs encode the scope', () => {
  assert.equal(npmPurl('portcullis', '1.0.0-rc.1'), 'pkg:npm/portcullis@1.0.0-rc.1');
  assert.equal(npmPurl('@acme/gate', '2.0.0'), 'pkg:npm/%40acme/gate@2.0.0');
});

test('engines comparators are ANDed as node-semver does: the tightest bound of each side is kept', () => {
  assert.equal(versFromEngines('>=20.11 >=22'), 'vers:npm/>=22.0.0');
  assert.equal(versFromEngines('>=22 >22.0.0'), 'vers:npm/>22.0.0');
  assert.equal(versFromEngines('<27 <=26.1.0 >=20.11'), 'vers:npm/>=20.11.0|<=26.1.0');
  assert.equal(versFromEngines('<=24.0.0 <24.0.0 >20.0.0'), 'vers:npm/>20.0.0|<24.0.0');
  assert.equal(versFromEngines('>=22.1.0 <=22.1.0'), 'vers:npm/22.1.0');
  assert.equal(versFromEngines('20 >=20.5'), 'vers:npm/>=20.5.0|<21.0.0');
});

test('an empty intersection, or an exact version beside a bound, is refused naming engines.node', () => {
  const hint = 'write engines.node as one lower bound and at most one upper bound (like ">=20.11" or ">=20.11 <27")';
  for (const [range, why] of [
    ['>=24 <22', 'no version satisfies every comparator'],
    ['>22.1.0 <=22.1.0', 'no version satisfies every comparator'],
    ['>=22.1.0 <22.1.0', 'no version satisfies every comparator'],
    ['22.1.0 >=20', 'an exact version beside other comparators'],
    ['22.1.0 22.1.0', 'an exact version beside other comparators'],
  ] as const) {
    assert.throws(() => versFromEngines(range), { message: `package.json engines.node ${JSON.stringify(range)}: ${why}; ${hint}` });
  }
});
