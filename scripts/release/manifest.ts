// The package.json fields a release states (the tarball's name, the SBOM's
// component), checked before anything is built or written so a bad field is
// a refusal naming it, never a half-written release.
import { ReleaseError } from './release-error.ts';
import { versFromEngines } from './sbom.ts';

export interface ReleaseManifest {
  readonly name: string;
  readonly version: string;
  readonly description: string;
  readonly license: string;
  /** engines.node as written. */
  readonly nodeRange: string;
  /** package.json `repository` (a string or { url }), when there is one. */
  readonly repositoryUrl: string | undefined;
}

function field(manifest: Readonly<Record<string, unknown>>, name: string): string {
  const value = manifest[name];
  if (typeof value !== 'string' || value === '') throw new ReleaseError(`package.json has no ${name} (a non-empty string): the SBOM states it; set it and commit`);
  return value;
}

/** The release's fields of `manifest`, or a ReleaseError naming the field to fix. */
export function releaseManifest(manifest: Readonly<Record<string, unknown>>): ReleaseManifest {
  const name = field(manifest, 'name');
  const version = field(manifest, 'version');
  const description = field(manifest, 'description');
  const license = field(manifest, 'license');
  const engines = manifest['engines'] as { node?: unknown } | undefined;
  if (typeof engines?.node !== 'string' || engines.node.trim() === '') {
    throw new ReleaseError('package.json has no engines.node: the SBOM states the Node.js range from it; set it (like ">=20.11") and commit');
  }
  try {
    versFromEngines(engines.node);
  } catch (error) {
    throw new ReleaseError((error as Error).message);
  }
  const repository = manifest['repository'];
  const url = typeof repository === 'string' ? repository : typeof repository === 'object' && repository !== null ? (repository as { url?: unknown }).url : undefined;
  if (url !== undefined && (typeof url !== 'string' || url === '')) throw new ReleaseError('package.json repository.url is not a non-empty string: fix or remove it');
  return { name, version, description, license, nodeRange: engines.node, repositoryUrl: url };
}
