// The release's CycloneDX 1.6 SBOM (https://cyclonedx.org/docs/1.6/json/), as
// data: the package itself (metadata.component, with the tarball's SHA-256),
// its runtime dependencies (none), and the Node.js it runs on as a platform
// component. Deterministic: the serial number comes from the tarball's hash
// and the timestamp from the release time, so a rebuild gives the same bytes.
//
// CycloneDX 1.6 has no field for a version range (component.versionRange
// arrives in 1.7), so the Node.js range from package.json `engines` is a
// property of the platform component, written in vers syntax
// (https://github.com/package-url/vers-spec) as 1.7's field would hold it.

export const SPEC_VERSION = '1.6';
/** Name of the property holding the Node.js range; the prefix is this project's namespace. */
export const NODE_RANGE_PROPERTY = 'portcullis:node:versionRange';
export const NODE_REF = 'platform:nodejs';

export interface SbomInput {
  readonly name: string;
  readonly version: string;
  readonly description: string;
  /** SPDX licence id from package.json. */
  readonly license: string;
  /** package.json `engines.node`. */
  readonly nodeRange: string;
  /** Lowercase hex SHA-256 of the tarball. */
  readonly tarballSha256: string;
  /** Release time, seconds since the epoch. */
  readonly seconds: number;
}

/** The npm package URL of name@version (https://github.com/package-url/purl-spec, npm type). */
export function npmPurl(name: string, version: string): string {
  const encoded = name.startsWith('@') ? `%40${name.slice(1)}` : name;
  return `pkg:npm/${encoded}@${encodeURIComponent(version)}`;
}

/**
 * A node-semver range of space-separated comparators (`>=20.11`,
 * `>=20.11 <27`) as a vers range; alternatives (`||`), hyphen, caret and
 * tilde ranges are refused, naming the engines field to simplify.
 */
export function versFromEngines(range: string): string {
  const comparators = range.trim().split(/\s+/);
  const constraints: Array<{ op: string; version: string }> = [];
  for (const comparator of comparators) {
    const match = /^(>=|<=|>|<|=)?v?(\d+(?:\.\d+){0,2})$/.exec(comparator);
    if (match === null) {
      throw new Error(`package.json engines.node ${JSON.stringify(range)}: the SBOM states comparators like ">=20.11" or ">=20.11 <27"; ${JSON.stringify(comparator)} is not one: write engines.node that way`);
    }
    const op = match[1] ?? '=';
    constraints.push({ op: op === '=' ? '' : op, version: match[2] as string });
  }
  const key = (v: string): number[] => v.split('.').map(Number);
  constraints.sort((a, b) => {
    const [x, y] = [key(a.version), key(b.version)];
    for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
    return 0;
  });
  return `vers:npm/${constraints.map((c) => `${c.op}${c.version}`).join('|')}`;
}

/** An RFC 4122 URN from the tarball's hash: its first 16 bytes with the version (8, custom) and variant bits set. */
export function serialNumberOf(sha256Hex: string): string {
  if (!/^[0-9a-f]{64}$/.test(sha256Hex)) throw new Error(`not a lowercase hex SHA-256: ${JSON.stringify(sha256Hex)}`);
  const bytes = Buffer.from(sha256Hex.slice(0, 32), 'hex');
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x80;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `urn:uuid:${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The SBOM document. */
export function sbomDocument(input: SbomInput): Record<string, unknown> {
  const purl = npmPurl(input.name, input.version);
  return {
    bomFormat: 'CycloneDX',
    specVersion: SPEC_VERSION,
    serialNumber: serialNumberOf(input.tarballSha256),
    version: 1,
    metadata: {
      timestamp: new Date(input.seconds * 1000).toISOString().replace('.000Z', 'Z'),
      component: {
        type: 'application',
        'bom-ref': purl,
        name: input.name,
        version: input.version,
        description: input.description,
        licenses: [{ license: { id: input.license } }],
        purl,
        hashes: [{ alg: 'SHA-256', content: input.tarballSha256 }],
      },
    },
    components: [
      {
        type: 'platform',
        'bom-ref': NODE_REF,
        name: 'Node.js',
        description: `The runtime the package needs: Node.js ${input.nodeRange} (package.json engines.node)`,
        scope: 'required',
        externalReferences: [{ type: 'website', url: 'https://nodejs.org/' }],
        properties: [{ name: NODE_RANGE_PROPERTY, value: versFromEngines(input.nodeRange) }],
      },
    ],
    dependencies: [
      { ref: purl, dependsOn: [NODE_REF] },
      { ref: NODE_REF, dependsOn: [] },
    ],
  };
}

/** The SBOM file's bytes: two-space JSON with a final newline. */
export function sbomText(input: SbomInput): string {
  return `${JSON.stringify(sbomDocument(input), null, 2)}\n`;
}

/** The SBOM's file name beside the tarball. */
export function sbomFileName(name: string, version: string): string {
  return `${name.replace(/^@/, '').replace('/', '-')}-${version}.cdx.json`;
}
