// npm run release: the tarball and SBOM of HEAD's commit (package.ts, built in
// a pristine clone), SHA256SUMS over both, and SHA256SUMS.sig, signed with
// the releaser's key (sign.ts). Offline: git, npm, ssh-keygen. Refuses a
// work tree with changes (the releaser must see what is released). Prints
// the allowed_signers line of the key for the releaser to publish through a
// channel users already trust (never beside the tarball, where whoever swaps
// the tarball could swap the key too).
//
//   npm run release -- --key PATH [--out DIR]
//   PORTCULLIS_RELEASE_KEY=PATH npm run release
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { SUMS_FILE, sha256Sums } from './checksums.ts';
import {
  outDir,
  packageRelease,
  parseReleaseArgs,
  ReleaseError,
  releaseTimeNote,
  repositoryRootOfScript,
  shown,
  workTreeChanges,
  type PackageOptions,
  type PackageResult,
} from './package.ts';
import { allowedSignersLine, SIGNATURE_NAMESPACE, signFile, signingKey, type SigningKey } from './sign.ts';

export interface ReleaseResult {
  readonly packed: PackageResult;
  readonly sums: string;
  readonly signature: string;
  /** The allowed_signers line of the signing key. */
  readonly allowedSigners: string;
  /** Files in the out directory that SHA256SUMS does not list (left from an earlier run). */
  readonly strays: readonly string[];
}

/** SHA256SUMS over a packed tarball and its SBOM, and its signature, beside them. */
export async function signRelease(packed: PackageResult, key: SigningKey, env: Readonly<Record<string, string | undefined>>): Promise<ReleaseResult> {
  const out = path.dirname(packed.tarball);
  const listed = [packed.fileName, path.basename(packed.sbom)];
  const sums = sha256Sums(new Map<string, Uint8Array>([[listed[0] as string, packed.bytes], [listed[1] as string, packed.sbomBytes]]));
  const sumsPath = path.join(out, SUMS_FILE);
  writeFileSync(sumsPath, sums);
  const signature = await signFile(sumsPath, key, env);
  const known = new Set([...listed, SUMS_FILE, path.basename(signature)]);
  const strays = readdirSync(out).filter((name) => !known.has(name)).sort();
  return { packed, sums: sumsPath, signature, allowedSigners: allowedSignersLine(key.publicKey), strays };
}

/** The whole release into options.out: the key and a clean work tree are checked before anything is cloned or built. */
export async function release(options: PackageOptions & { readonly key: string | undefined }): Promise<ReleaseResult> {
  const env = options.env ?? process.env;
  const key = await signingKey(options.key, env);
  const changes = await workTreeChanges(options.root, env);
  if (changes.length > 0) {
    throw new ReleaseError(
      `the work tree has changes or untracked files (${changes.slice(0, 10).join(', ')}${changes.length > 10 ? ', ...' : ''}): a release packs HEAD's commit, and the releaser must see what is released; commit, discard or ignore them`,
    );
  }
  return signRelease(await packageRelease(options), key, env);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  try {
    const args = parseReleaseArgs(process.argv.slice(2), true);
    const root = repositoryRootOfScript();
    const result = await release({ root, out: outDir(root, args.out), key: args.key });
    console.error(`release: ${releaseTimeNote(result.packed.seconds, result.packed.origin)}`);
    if (result.strays.length > 0) {
      console.error(`release: ${shown(path.dirname(result.sums))} also holds ${result.strays.join(', ')}, which SHA256SUMS does not list: publish only the four release files`);
    }
    console.log(`${result.packed.sha256}  ${shown(result.packed.tarball)}`);
    console.log(`wrote ${shown(result.packed.sbom)}, ${shown(result.sums)}, ${shown(result.signature)} (namespace ${SIGNATURE_NAMESPACE})`);
    console.log('the allowed_signers line to publish where users already trust you (not beside the tarball):');
    console.log(result.allowedSigners);
  } catch (error) {
    if (!(error instanceof ReleaseError)) throw error;
    console.error(`release: ${error.message}`);
    process.exitCode = 1;
  }
}
