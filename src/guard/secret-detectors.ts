// Detectors of credentials, each a function from a word start (or, for
// private keys and assignments, a trigger character) to the end of what it
// found, or -1. Each reads a bounded number of characters past `at`, so the
// scanner stays linear. Shapes are exact and, where a checksum exists, checked.
import { ADMIN_TOKEN_KIND, API_KEY_KIND, REDACTION_MIN_CHARS } from '../log/secret-kinds.ts';
import {
  base62, crc32, entropyBits, reads, isAlnum, isBase64, isBase64Url, isDigit, isLower, isUpper, isWord, runEnd, startsAt,
} from './text-checks.ts';

/** Past a token, a character that would make it part of a longer string. */
function continuesToken(text: string, at: number): boolean {
  return at < text.length && isBase64Url(text.charCodeAt(at));
}

function isAlnumOrDash(code: number): boolean {
  return isAlnum(code) || code === 0x2d;
}

function isBase32Upper(code: number): boolean {
  return isUpper(code) || (code >= 0x32 && code <= 0x37);
}

/**
 * AWS access key id: AKIA (long-term) or ASIA (temporary) and 16 characters of
 * [A-Z2-7], bounded. The id alone is a finding: the marker, the upper-case
 * base32 alphabet and the exact length do not occur by chance in code, hashes
 * or prose (a git SHA is lower-case hex).
 */
export function awsAccessKeyId(text: string, at: number): number {
  if (!startsAt(text, at, 'AKIA') && !startsAt(text, at, 'ASIA')) return -1;
  const end = runEnd(text, at + 4, 17, isBase32Upper);
  return end - at === 20 && !continuesToken(text, end) ? end : -1;
}

/** The window after an AWS key id where its secret access key is looked for. */
export const AWS_SECRET_WINDOW = 200;

/**
 * An AWS secret access key near its id: 40 characters of [A-Za-z0-9+/] with
 * upper case, lower case and a digit, bounded by other characters. Bare, the
 * shape is too common (base64 of 30 bytes) to report; next to an id it is the pair.
 */
export function awsSecretNear(text: string, from: number): { start: number; end: number } | null {
  const limit = Math.min(text.length, from + AWS_SECRET_WINDOW);
  let i = from;
  while (i < limit) {
    if (!isBase64(text.charCodeAt(i))) {
      i++;
      continue;
    }
    const start = i;
    const end = runEnd(text, i, 41, isBase64);
    if (end - start === 40 && (start === 0 || !isBase64(text.charCodeAt(start - 1))) && !(end < text.length && isBase64(text.charCodeAt(end)))) {
      let upper = false;
      let lower = false;
      let digit = false;
      for (let k = start; k < end; k++) {
        const code = text.charCodeAt(k);
        upper ||= isUpper(code);
        lower ||= isLower(code);
        digit ||= isDigit(code);
      }
      if (upper && lower && digit) return { start, end };
    }
    i = runEnd(text, end, limit - end, isBase64);
  }
  reads.count += i - from;
  return null;
}

const GITHUB_PREFIXES = ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'];

/**
 * GitHub tokens: ghp_/gho_/ghu_/ghs_/ghr_ and 36 base62 characters whose last
 * 6 are the CRC-32 of the first 30 in base62; fine-grained github_pat_ and 82
 * characters of [A-Za-z0-9_] (no published checksum: the marker and length).
 */
export function githubToken(text: string, at: number): number {
  if (startsAt(text, at, 'github_pat_')) {
    const end = runEnd(text, at + 11, 83, isWord);
    return end - at - 11 === 82 && !continuesToken(text, end) ? end : -1;
  }
  if (!GITHUB_PREFIXES.some((prefix) => startsAt(text, at, prefix))) return -1;
  const end = runEnd(text, at + 4, 37, isAlnum);
  if (end - at - 4 !== 36 || continuesToken(text, end)) return -1;
  const body = text.slice(at + 4, at + 34);
  return base62(crc32(body), 6) === text.slice(at + 34, end) ? end : -1;
}

/** Slack tokens: xoxb-/xoxp-/xoxa-/xoxr-/xoxs-/xoxe- then a workspace number of 8 or more digits, then [A-Za-z0-9-] to 20 or more characters. */
export function slackToken(text: string, at: number): number {
  if (!startsAt(text, at, 'xox') || at + 5 > text.length) return -1;
  if (!'bpaesr'.includes(text[at + 3] as string) || text.charCodeAt(at + 4) !== 0x2d) return -1;
  const digits = runEnd(text, at + 5, 20, isDigit);
  if (digits - at - 5 < 8 || text.charCodeAt(digits) !== 0x2d) return -1;
  const end = runEnd(text, at + 5, 256, isAlnumOrDash);
  return end - at - 5 >= 20 && !continuesToken(text, end) ? end : -1;
}

const SLACK_WEBHOOK = 'hooks.slack.com/services/';

function isUpperAlnum(code: number): boolean {
  return isUpper(code) || isDigit(code);
}

/**
 * A Slack incoming webhook at the word `hooks`: hooks.slack.com/services/ then
 * the workspace (T and 8 to 12 of [A-Z0-9]), the channel hook (B and 8 to 12)
 * and a secret of 24 [A-Za-z0-9]. Whoever holds the URL posts to the channel:
 * it is a Slack credential, reported as slack_token.
 */
export function slackWebhook(text: string, at: number): number {
  if (!startsAt(text, at, SLACK_WEBHOOK)) return -1;
  let i = at + SLACK_WEBHOOK.length;
  for (const marker of [0x54, 0x42]) {
    if (text.charCodeAt(i) !== marker) return -1;
    const end = runEnd(text, i + 1, 13, isUpperAlnum);
    if (end - i - 1 < 8 || end - i - 1 > 12 || text.charCodeAt(end) !== 0x2f) return -1;
    i = end + 1;
  }
  const end = runEnd(text, i, 25, isAlnum);
  return end - i === 24 && !continuesToken(text, end) ? end : -1;
}

const STRIPE_PREFIXES = ['sk_live_', 'rk_live_', 'sk_test_', 'rk_test_'];

/** Stripe secret and restricted keys (live and test; publishable pk_ keys are public): the prefix and 24 to 247 base62 characters. */
export function stripeKey(text: string, at: number): number {
  if (text.charCodeAt(at + 1) !== 0x6b || !STRIPE_PREFIXES.some((prefix) => startsAt(text, at, prefix))) return -1;
  const end = runEnd(text, at + 8, 248, isAlnum);
  const length = end - at - 8;
  return length >= 24 && length <= 247 && !continuesToken(text, end) ? end : -1;
}

/** Google API keys: AIza and 35 characters of [A-Za-z0-9_-]. */
export function googleApiKey(text: string, at: number): number {
  if (!startsAt(text, at, 'AIza')) return -1;
  const end = runEnd(text, at + 4, 36, isBase64Url);
  return end - at - 4 === 35 && !continuesToken(text, end) ? end : -1;
}

const OPENAI_PROJECT_PREFIXES = ['sk-proj-', 'sk-svcacct-', 'sk-admin-', 'sk-None-'];
/** "openai" in base64: every OpenAI secret key since 2023 carries it at the middle. */
const OPENAI_MARK = 'T3BlbkFJ';

/** OpenAI keys: sk-proj-/sk-svcacct-/sk-admin- with 40 or more [A-Za-z0-9_-], or sk- with 20 or more holding T3BlbkFJ. */
export function openaiKey(text: string, at: number): number {
  if (!startsAt(text, at, 'sk-') || startsAt(text, at, 'sk-ant-')) return -1;
  const end = runEnd(text, at + 3, 300, isBase64Url);
  if (continuesToken(text, end)) return -1;
  const prefix = OPENAI_PROJECT_PREFIXES.find((candidate) => startsAt(text, at, candidate));
  if (prefix !== undefined && end - at - prefix.length >= 40) return end;
  return end - at - 3 >= 20 && text.slice(at, end).includes(OPENAI_MARK) ? end : -1;
}

/** Anthropic keys: sk-ant- then a kind and version (api03, admin01, ...), a dash and 80 or more [A-Za-z0-9_-]. */
export function anthropicKey(text: string, at: number): number {
  if (!startsAt(text, at, 'sk-ant-')) return -1;
  const kind = runEnd(text, at + 7, 12, isAlnum);
  if (kind === at + 7 || text.charCodeAt(kind) !== 0x2d) return -1;
  const end = runEnd(text, kind + 1, 300, isBase64Url);
  return end - kind - 1 >= 80 && !continuesToken(text, end) ? end : -1;
}

const PORTCULLIS_KINDS = [API_KEY_KIND, ADMIN_TOKEN_KIND];

/** The gateway's own keys and admin tokens: their marker and at least REDACTION_MIN_CHARS of their alphabet (the sinks' redaction rule), up to their length. */
export function portcullisKey(text: string, at: number): number {
  if (text.charCodeAt(at + 1) !== 0x63) return -1;
  for (const kind of PORTCULLIS_KINDS) {
    if (!startsAt(text, at, kind.marker)) continue;
    const from = at + kind.marker.length;
    const limit = Math.min(text.length, from + kind.length);
    let end = from;
    while (end < limit && kind.alphabet.includes(text[end] as string)) end++;
    reads.count += end - from + 1;
    if (end - from >= REDACTION_MIN_CHARS) return end;
  }
  return -1;
}

const JWT_HEADER_MAX = 1024;
const JWT_PAYLOAD_MAX = 16 * 1024;
const JWT_SIGNATURE_MAX = 1024;

/** JWT (JWS compact): three base64url parts; the header decodes to a JSON object with a string `alg`. Each part's length is bounded. */
export function jwt(text: string, at: number): number {
  // Only at the start of a base64url run: each character is then read by at most three attempts (as header, payload, signature).
  if (!startsAt(text, at, 'eyJ') || (at > 0 && isBase64Url(text.charCodeAt(at - 1)))) return -1;
  const headerEnd = runEnd(text, at, JWT_HEADER_MAX + 1, isBase64Url);
  if (headerEnd - at > JWT_HEADER_MAX || text.charCodeAt(headerEnd) !== 0x2e) return -1;
  const payloadEnd = runEnd(text, headerEnd + 1, JWT_PAYLOAD_MAX + 1, isBase64Url);
  if (payloadEnd - headerEnd - 1 < 2 || payloadEnd - headerEnd - 1 > JWT_PAYLOAD_MAX || text.charCodeAt(payloadEnd) !== 0x2e) return -1;
  const end = runEnd(text, payloadEnd + 1, JWT_SIGNATURE_MAX + 1, isBase64Url);
  if (end - payloadEnd - 1 > JWT_SIGNATURE_MAX || (end < text.length && text.charCodeAt(end) === 0x2e)) return -1;
  try {
    const header: unknown = JSON.parse(Buffer.from(text.slice(at, headerEnd), 'base64url').toString('utf8'));
    const isObject = typeof header === 'object' && header !== null && !Array.isArray(header);
    return isObject && typeof (header as { alg?: unknown }).alg === 'string' ? end : -1;
  } catch {
    return -1;
  }
}

const PRIVATE_KEY_BODY_MIN = 64;
const PRIVATE_KEY_MAX = 64 * 1024;

/**
 * PEM and OpenSSH private key blocks: `-----BEGIN [kind ]PRIVATE KEY-----`
 * (or PGP PRIVATE KEY BLOCK), a body of at least 64 base64 characters, to the
 * end of the END line, or to the body's end when the block was cut.
 * A header alone (documentation) is not a finding.
 */
export function privateKey(text: string, at: number): number {
  if (!startsAt(text, at, '-----BEGIN ')) return -1;
  const labelAt = text.slice(at + 11, at + 71).indexOf('-----');
  if (labelAt === -1) return -1;
  const labelEnd = at + 11 + labelAt;
  const label = text.slice(at + 11, labelEnd);
  if (!label.endsWith('PRIVATE KEY') && label !== 'PGP PRIVATE KEY BLOCK') return -1;
  let i = labelEnd + 5;
  let body = 0;
  const limit = Math.min(text.length, at + PRIVATE_KEY_MAX);
  while (i < limit) {
    const code = text.charCodeAt(i);
    if (code === 0x2d && startsAt(text, i, '-----')) break;
    if (isBase64(code)) body++;
    else if (code !== 0x3d && code !== 0x0a && code !== 0x0d && code !== 0x20 && code !== 0x09 && code !== 0x3a && code !== 0x2c && code !== 0x2d && code !== 0x5c) break;
    i++;
  }
  reads.count += i - at;
  if (body < PRIVATE_KEY_BODY_MIN) return -1;
  if (startsAt(text, i, '-----END ')) {
    const close = text.slice(i + 9, i + 69).indexOf('-----');
    if (close !== -1) return i + 9 + close + 5;
  }
  let end = i;
  while (end > labelEnd + 5 && !isBase64(text.charCodeAt(end - 1)) && text.charCodeAt(end - 1) !== 0x3d) end--;
  return end;
}
