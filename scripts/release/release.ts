// npm run release: beside the reproducible tarball (package.ts), the CycloneDX
// SBOM, SHA256SUMS over both, and SHA256SUMS.sig, signed with the releaser's
// key (sign.ts). Offline: git, npm's file list, ssh-keygen. Prints the
// allowed_signers line of the key for the releaser to publish through a
// channel users already trust (never beside the tarball, where whoever swaps
// the tarball could swap the key too).
//
//   npm run release -- --key PATH [--out DIR] [--allow-dirty]
//   PORTCULLIS_RELEASE_KEY=PATH npm run release
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { SUMS_FILE, sha256Sums } from './checksums.ts';
import { outDir, packageRelease, parseReleaseArgs, ReleaseError, repositoryRootOfScript, type PackageOptions } from './package.ts';
import { sbomFileName, sbomText } from './sbom.ts';
import { allowedSignersLine, SIGNATURE_NAMESPACE, signFile, signingKey } from './sign.ts';

export interface ReleaseResult {
  readonly tarball: string;
  readonly sha256: string;
  readonly sbom: string;
  readonly sums: string;
  readonly signature: string;
  /** The allowed_signers line of the signing key. */
  readonly allowedSigners: string;
}

function field(manifest: Readonly<Record<string, unknown>>, name: string): string {
  const value = manifest[name];
  if (typeof value !== 'string' || value === '') throw new ReleaseError(`package.json has no ${name}: the SBOM needs it`);
  return value;
}

/** The whole release into options.out; the key is checked before anything is built. */
export async function release(options: PackageOptions & { readonly key: string | undefined }): Promise<ReleaseResult> {
  const env = options.env ?? process.env;
  const key = await signingKey(options.key, env);
  const packed = await packageRelease(options);
  const { manifest } = packed;
  const engines = manifest['engines'] as { node?: unknown } | undefined;
  if (typeof engines?.node !== 'string') throw new ReleaseError('package.json has no engines.node: the SBOM states the Node.js range from it');
  const name = field(manifest, 'name');
  const version = field(manifest, 'version');
  const sbom = sbomText({
    name,
    version,
    description: field(manifest, 'description'),
    license: field(manifest, 'license'),
    nodeRange: engines.node,
    tarballSha256: packed.sha256,
    seconds: packed.seconds,
  });
  const out = path.dirname(packed.tarball);
  const sbomName = sbomFileName(name, version);
  writeFileSync(path.join(out, sbomName), sbom);
  const sums = sha256Sums(new Map<string, Uint8Array>([[packed.fileName, packed.bytes], [sbomName, Buffer.from(sbom)]]));
  const sumsPath = path.join(out, SUMS_FILE);
  writeFileSync(sumsPath, sums);
  const signature = await signFile(sumsPath, key, env);
  return { tarball: packed.tarball, sha256: packed.sha256, sbom: path.join(out, sbomName), sums: sumsPath, signature, allowedSigners: allowedSignersLine(key.publicKey) };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  try {
    const args = parseReleaseArgs(process.argv.slice(2), true);
    const root = repositoryRootOfScript();
    const result = await release({ root, out: outDir(root, args.out), allowDirty: args.allowDirty, key: args.key });
    const shown = (file: string): string => path.relative(process.env['INIT_CWD'] ?? process.cwd(), file) || file;
    console.log(`${result.sha256}  ${shown(result.tarball)}`);
    console.log(`wrote ${shown(result.sbom)}, ${shown(result.sums)}, ${shown(result.signature)} (namespace ${SIGNATURE_NAMESPACE})`);
    console.log('the allowed_signers line to publish where users already trust you (not beside the tarball):');
    console.log(result.allowedSigners);
  } catch (error) {
    if (!(error instanceof ReleaseError)) throw error;
    console.error(`release: ${error.message}`);
    process.exitCode = 1;
  }
}
