// Valid planted values for the guard's tests, one or more per detector, built
// here from their published shapes (checksums computed with node:zlib, not the
// guard's own code), and a seeded generator.
import { crc32 } from 'node:zlib';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A seeded generator (mulberry32), so a failure is found again. */
export function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randomString(random: () => number, alphabet: string, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[Math.floor(random() * alphabet.length)];
  return out;
}

function toBase62(value: number, width: number): string {
  let out = '';
  for (let rest = value; rest > 0; rest = Math.floor(rest / 62)) out = BASE62[rest % 62] + out;
  return out.padStart(width, '0');
}

export function githubTokenFor(prefix: string, body: string): string {
  return `${prefix}${body}${toBase62(crc32(body), 6)}`;
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

export function jwtFor(header: unknown, payload: unknown): string {
  return `${base64url(header)}.${base64url(payload)}.${'SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c'}`;
}

/** Values each detector finds whole, made from `random` so every run of the property test plants different ones. */
export function plantable(random: () => number): Array<{ detector: string; value: string }> {
  const alnum = BASE62;
  const b64 = `${BASE62}+/`;
  const b64url = `${BASE62}-_`;
  const pem = [0, 1, 2].map(() => randomString(random, b64, 64)).join('\n');
  return [
    { detector: 'private_key', value: `-----BEGIN RSA PRIVATE KEY-----\n${pem}\n-----END RSA PRIVATE KEY-----` },
    { detector: 'aws_access_key', value: `AKIA${randomString(random, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16)}` },
    { detector: 'github_token', value: githubTokenFor('ghp_', randomString(random, alnum, 30)) },
    { detector: 'github_token', value: `github_pat_${randomString(random, `${alnum}_`, 82)}` },
    { detector: 'slack_token', value: `hooks.slack.com/services/T${randomString(random, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', 10)}/B${randomString(random, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', 10)}/${randomString(random, alnum, 24)}` },
    { detector: 'slack_token', value: `xoxb-${randomString(random, '0123456789', 12)}-${randomString(random, '0123456789', 13)}-${randomString(random, alnum, 24)}` },
    { detector: 'stripe_key', value: `sk_live_${randomString(random, alnum, 24)}` },
    { detector: 'google_api_key', value: `AIza${randomString(random, b64url, 35).replace(/[-_]$/, 'x')}` },
    { detector: 'openai_key', value: `sk-proj-${randomString(random, alnum, 48)}` },
    { detector: 'anthropic_key', value: `sk-ant-api03-${randomString(random, alnum, 93)}AA` },
    { detector: 'jwt', value: jwtFor({ alg: 'HS256', typ: 'JWT' }, { sub: randomString(random, alnum, 8) }) },
    { detector: 'portcullis_key', value: `pcl_${randomString(random, alnum, 49)}` },
    { detector: 'card_number', value: ['4111 1111 1111 1111', '5555555555554444', '3782-822463-10005', '6011111111111117'][Math.floor(random() * 4)] as string },
    { detector: 'card_number', value: ['4111\u00a01111\u00a01111\u00a01111', '5555\u202f5555\u202f5555\u202f4444', '4111.1111.1111.1111', '４１１１ １１１１ １１１１ １１１１'][Math.floor(random() * 4)] as string },
    { detector: 'iban', value: ['GB82 WEST 1234 5698 7654 32', 'DE89370400440532013000', 'FR1420041010050500013M02606', 'de89 3704 0044 0532 0130 00'][Math.floor(random() * 4)] as string },
    { detector: 'email', value: `${randomString(random, 'abcdefghij', 6)}.${randomString(random, 'klmnop', 4)}@example.org` },
    { detector: 'phone', value: ['+44 20 7946 0958', '+14155552671', '+49-30-1234567', '＋４４ ２０ ７９４６ ０９５８'][Math.floor(random() * 4)] as string },
    { detector: 'us_ssn', value: `${100 + Math.floor(random() * 500)}-${10 + Math.floor(random() * 89)}-${1000 + Math.floor(random() * 8999)}` },
  ];
}
