// The detached signature of SHA256SUMS: `ssh-keygen -Y sign` (OpenSSH 8.1+),
// offline, with a key the releaser supplies. The key is checked before any
// build so a missing or locked key fails fast; nothing here prints key
// material, and ssh-keygen's own messages about a key never hold it.
import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ReleaseError } from './release-error.ts';

const run = promisify(execFile);
const STEP_MS = 60_000;

/** What the signature is for: `ssh-keygen -Y verify -n` must name the same. */
export const SIGNATURE_NAMESPACE = 'portcullis-release';
/** The signer's identity in the allowed_signers line the releaser publishes (`-I` of verify). */
export const SIGNER_IDENTITY = 'release@portcullis';
/** The environment variable naming the key when --key is not given. */
export const KEY_ENV = 'PORTCULLIS_RELEASE_KEY';

export interface SigningKey {
  /** The private key file ssh-keygen signs with (or the public key of a key held by ssh-agent). */
  readonly path: string;
  /** The public key: "<type> <base64>", no comment. */
  readonly publicKey: string;
}

/** The allowed_signers line of a public key, limited to the release namespace. */
export function allowedSignersLine(publicKey: string): string {
  return `${SIGNER_IDENTITY} namespaces="${SIGNATURE_NAMESPACE}" ${publicKey}`;
}

/** "<type> <base64>" of an OpenSSH public key line, the comment left out (it may name a person or machine). */
function publicKeyOf(line: string, keyPath: string): string {
  const [type, base64] = line.trim().split(/\s+/);
  if (type === undefined || base64 === undefined) throw new ReleaseError(`${keyPath}: ssh-keygen printed no public key for it`);
  return `${type} ${base64}`;
}

/** The variables of `env` that are set: the environment ssh-keygen and ssh-add run in. */
function definedEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) out[name] = value;
  return out;
}

/**
 * The releaser's key: --key, else $PORTCULLIS_RELEASE_KEY; refused when
 * neither names one, when the file is missing or unreadable, or when it is
 * encrypted and ssh-agent cannot sign with it.
 */
export async function signingKey(keyOption: string | undefined, env: Readonly<Record<string, string | undefined>>): Promise<SigningKey> {
  const given = keyOption ?? (env[KEY_ENV] === '' ? undefined : env[KEY_ENV]);
  if (given === undefined) {
    throw new ReleaseError(`no signing key: give an OpenSSH private key with --key PATH or ${KEY_ENV}=PATH (make one with: ssh-keygen -t ed25519 -f release-key)`);
  }
  const keyPath = path.resolve(env['INIT_CWD'] ?? process.cwd(), given);
  if (!existsSync(keyPath)) throw new ReleaseError(`the signing key ${keyPath} does not exist: fix --key or ${KEY_ENV}`);
  if (!statSync(keyPath).isFile()) throw new ReleaseError(`the signing key ${keyPath} is not a file: give the private key file`);
  try {
    accessSync(keyPath, constants.R_OK);
  } catch {
    throw new ReleaseError(`the signing key ${keyPath} is not readable by this user: fix its permissions or run as its owner`);
  }
  try {
    // -P '' reads the key without a passphrase: it works for an unencrypted key only.
    const { stdout } = await run('ssh-keygen', ['-y', '-P', '', '-f', keyPath], { env: { ...definedEnv(env), SSH_ASKPASS_REQUIRE: 'never' }, timeout: STEP_MS });
    return { path: keyPath, publicKey: publicKeyOf(stdout, keyPath) };
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    if (/UNPROTECTED PRIVATE KEY FILE|bad permissions/i.test(stderr)) {
      throw new ReleaseError(`the signing key ${keyPath} is readable by other users and ssh-keygen refuses it: chmod 600 ${keyPath}`);
    }
    if (!/passphrase/i.test(stderr)) {
      const last = stderr.split('\n').map((line) => line.trim()).filter((line) => line !== '').at(-1) ?? 'no message';
      throw new ReleaseError(`the signing key ${keyPath} is not an OpenSSH private key ssh-keygen can read (${last}): give the private key file`);
    }
  }
  // Encrypted: ssh-keygen -Y sign can use ssh-agent when the agent holds the key and its .pub sits beside it.
  const publicPath = `${keyPath}.pub`;
  if (env['SSH_AUTH_SOCK'] === undefined || env['SSH_AUTH_SOCK'] === '' || !existsSync(publicPath)) {
    throw new ReleaseError(`the signing key ${keyPath} is encrypted and no ssh-agent can sign with it: run ssh-agent, ssh-add ${keyPath}, and keep ${path.basename(publicPath)} beside it (or use an unencrypted key on an offline machine)`);
  }
  const publicKey = publicKeyOf(readFileSync(publicPath, 'utf8'), publicPath);
  const listed = await run('ssh-add', ['-L'], { env: definedEnv(env), timeout: STEP_MS }).then(
    (r) => r.stdout,
    () => '',
  );
  if (!listed.split('\n').some((line) => line.startsWith(`${publicKey} `) || line === publicKey)) {
    throw new ReleaseError(`the signing key ${keyPath} is encrypted and the ssh-agent at SSH_AUTH_SOCK does not hold it: ssh-add ${keyPath} first`);
  }
  return { path: publicPath, publicKey };
}

/** Signs `file` into `file`.sig (replacing an older one) with the release namespace. */
export async function signFile(file: string, key: SigningKey, env: Readonly<Record<string, string | undefined>>): Promise<string> {
  const signature = `${file}.sig`;
  rmSync(signature, { force: true });
  try {
    await run('ssh-keygen', ['-q', '-Y', 'sign', '-n', SIGNATURE_NAMESPACE, '-f', key.path, file], {
      env: { ...definedEnv(env), SSH_ASKPASS_REQUIRE: 'never' },
      timeout: STEP_MS,
    });
  } catch (error) {
    throw new ReleaseError(`ssh-keygen -Y sign failed with ${key.path}: ${((error as { stderr?: string }).stderr ?? '').trim() || (error as Error).message}`);
  }
  if (!existsSync(signature)) throw new ReleaseError(`ssh-keygen -Y sign wrote no ${path.basename(signature)}`);
  return signature;
}
