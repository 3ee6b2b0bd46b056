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
/** The release time (SOURCE_DATE_EPOCH of a rebuild) and the commit packed, as metadata properties. */
export const SOURCE_DATE_PROPERTY = 'portcullis:build:sourceDateEpoch';
export const COMMIT_PROPERTY = 'portcullis:build:commit';

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
  /** The commit id the tarball was built from. */
  readonly commit: string;
  /** package.json `repository` URL, when it names one: the vcs reference the commit belongs to. */
  readonly repositoryUrl?: string | undefined;
}

/** The npm package URL of name@version (https://github.com/package-url/purl-spec, npm type). */
export function npmPurl(name: string, version: string): string {
  const encoded = name.startsWith('@') ? `%40${name.slice(1)}` : name;
  return `pkg:npm/${encoded}@${encodeURIComponent(version)}`;
}

/** A version as node-semver reads a comparator's: 1 to 3 numeric parts, the missing ones wildcards. */
type Partial = [number, ...number[]];

function full(parts: readonly number[]): string {
  return [0, 1, 2].map((i) => parts[i] ?? 0).join('.');
}

/** The next version past every version the partial one covers: 20 -> 21.0.0, 20.11 -> 20.12.0. */
function bumped(parts: Partial): string {
  const next = [...parts];
  next[next.length - 1] = (next[next.length - 1] as number) + 1;
  return full(next);
}

/**
 * A node-semver range of space-separated comparators (`>=20.11`,
 * `>=20.11 <27`, `20`) as a vers range of full versions, partial versions
 * expanded the node-semver way (`20` is >=20.0.0 <21.0.0, `>20` is >=21.0.0,
 * `<=22` is <23.0.0). Anything vers cannot state exactly here (`||`, `^`,
 * `~`, x ranges, hyphen ranges, prereleases) is refused, naming engines.node.
 */
export function versFromEngines(range: string): string {
  const comparators = range.trim().split(/\s+/);
  const constraints: Array<{ op: string; version: string }> = [];
  for (const comparator of comparators) {
    const match = /^(>=|<=|>|<|=)?v?(0|[1-9]\d*)(?:\.(0|[1-9]\d*))?(?:\.(0|[1-9]\d*))?$/.exec(comparator);
    if (match === null) {
      throw new Error(
        `package.json engines.node ${JSON.stringify(range)}: the SBOM states only comparators >=, >, <, <=, = of versions (like ">=20.11" or ">=20.11 <27"); ${JSON.stringify(comparator)} is not one: write engines.node that way`,
      );
    }
    const parts = match.slice(2).filter((p) => p !== undefined).map(Number) as Partial;
    const exact = parts.length === 3;
    const op = match[1] ?? '=';
    if (exact) constraints.push({ op: op === '=' ? '' : op, version: full(parts) });
    else if (op === '>=') constraints.push({ op: '>=', version: full(parts) });
    else if (op === '>') constraints.push({ op: '>=', version: bumped(parts) });
    else if (op === '<') constraints.push({ op: '<', version: full(parts) });
    else if (op === '<=') constraints.push({ op: '<', version: bumped(parts) });
    else constraints.push({ op: '>=', version: full(parts) }, { op: '<', version: bumped(parts) });
  }
  return `vers:npm/${intersection(range, constraints).map((c) => `${c.op}${c.version}`).join('|')}`;
}

function compareVersions(a: string, b: string): number {
  const [x, y] = [a.split('.').map(Number), b.split('.').map(Number)];
  for (let i = 0; i < 3; i++) if ((x[i] as number) !== (y[i] as number)) return (x[i] as number) - (y[i] as number);
  return 0;
}

/**
 * node-semver ANDs a range's comparators; a vers range is at most one lower
 * and one upper bound here, or one exact version. The tightest bound of each
 * side is kept; an empty intersection, or an exact version beside a bound, is
 * refused rather than written as something else.
 */
function intersection(range: string, constraints: ReadonlyArray<{ op: string; version: string }>): Array<{ op: string; version: string }> {
  const refuse = (why: string): never => {
    throw new Error(`package.json engines.node ${JSON.stringify(range)}: ${why}; write engines.node as one lower bound and at most one upper bound (like ">=20.11" or ">=20.11 <27")`);
  };
  const exact = constraints.filter((c) => c.op === '');
  if (exact.length > 0 && constraints.length > 1) refuse('an exact version beside other comparators');
  if (exact.length === 1) return [...exact];
  let lower: { op: string; version: string } | undefined;
  let upper: { op: string; version: string } | undefined;
  for (const c of constraints) {
    if (c.op === '>=' || c.op === '>') {
      const order = lower === undefined ? 1 : compareVersions(c.version, lower.version);
      if (order > 0 || (order === 0 && c.op === '>')) lower = c;
    } else {
      const order = upper === undefined ? -1 : compareVersions(c.version, upper.version);
      if (order < 0 || (order === 0 && c.op === '<')) upper = c;
    }
  }
  if (lower !== undefined && upper !== undefined) {
    const order = compareVersions(lower.version, upper.version);
    if (order > 0 || (order === 0 && (lower.op === '>' || upper.op === '<'))) refuse('no version satisfies every comparator');
    if (order === 0) return [{ op: '', version: lower.version }];
  }
  return [lower, upper].filter((c): c is { op: string; version: string } => c !== undefined);
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
        // From package.json, never the releaser's remote: a rebuild from another clone must give the same SBOM.
        ...(input.repositoryUrl === undefined ? {} : { externalReferences: [{ type: 'vcs', url: input.repositoryUrl, comment: `commit ${input.commit}` }] }),
      },
      properties: [
        { name: SOURCE_DATE_PROPERTY, value: String(input.seconds) },
        { name: COMMIT_PROPERTY, value: input.commit },
      ],
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
