// The secrets of one login: state (RFC 6749 section 10.12), nonce (OIDC Core
// section 3.1.2.1) and the PKCE code verifier with its S256 challenge
// (RFC 7636 section 4.1 and 4.2). Each is 32 random bytes in base64url
// (43 characters, inside RFC 7636's 43 to 128 unreserved characters).
import { createHash, randomBytes } from 'node:crypto';
import { BROWSER_SECRET_BYTES } from '../log/secret-kinds.ts';

/** Each is BROWSER_SECRET_KIND (src/log/secret-kinds.ts). */
const SECRET_BYTES = BROWSER_SECRET_BYTES;

export interface LoginSecrets {
  state: string;
  nonce: string;
  codeVerifier: string;
  /** BASE64URL(SHA256(ASCII(code_verifier))). */
  codeChallenge: string;
  /** The value of the cookie that binds the login to the browser that started it. */
  binding: string;
}

export function codeChallengeS256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

export function newLoginSecrets(random: (size: number) => Buffer = randomBytes): LoginSecrets {
  const secret = (): string => {
    const bytes = random(SECRET_BYTES);
    if (bytes.length !== SECRET_BYTES) throw new RangeError(`random source returned ${bytes.length} bytes, expected ${SECRET_BYTES}`);
    return bytes.toString('base64url');
  };
  const codeVerifier = secret();
  return { state: secret(), nonce: secret(), codeVerifier, codeChallenge: codeChallengeS256(codeVerifier), binding: secret() };
}
