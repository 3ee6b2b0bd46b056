// What went wrong on the wire when an upstream attempt failed, for operators:
// the log's "upstream failed" line and /readyz. Clients never see it; they get
// the ApiError the exchange chose (./upstream-errors.ts), which says only
// "unreachable" or "timed out". Pure functions over data, plus one WeakMap that
// carries the cause beside the client's error from the exchange, which knows
// it, to the dispatcher, which reports it, without a field on the error classes
// that render client answers.
//
// Node's fetch rejects with TypeError("fetch failed") and puts the socket's,
// the resolver's or TLS's own error in `cause` (its `code` is what tells them
// apart); undici's SocketError ("other side closed") is one more level down
// in some versions, so the whole chain is searched, a few levels deep.

/** The classes of failure an operator acts on differently. */
export const FailureKind = {
  /** Nothing listens at the address (ECONNREFUSED): the upstream is down or the port is wrong. */
  Refused: 'refused',
  /** The connection was cut (ECONNRESET, undici's UND_ERR_SOCKET "other side closed", EPIPE). */
  Reset: 'reset',
  /** The TLS handshake failed; `detail` is the TLS or OpenSSL code (e.g. DEPTH_ZERO_SELF_SIGNED_CERT). */
  Tls: 'tls',
  /** The egress proxy did not connect: `detail` is its ERR_PROXY_ code, or
   * `status_<n>` when it refused the CONNECT with HTTP status n. */
  Proxy: 'proxy',
  /** The host name does not resolve (ENOTFOUND) or the resolver failed (EAI_AGAIN). */
  Dns: 'dns',
  /** A clock ran out; `detail` says which: connect, first_byte, idle or total. */
  Timeout: 'timeout',
  /** The upstream answered with a non-2xx status; `detail` is the status, e.g. "503". */
  Http: 'http',
  /** The upstream answered in a form the gateway cannot use (not JSON, an oversized event). */
  BadResponse: 'bad_response',
  /** The upstream sent an error event inside a stream. */
  ErrorEvent: 'error_event',
  /** Another network error with a code (EHOSTUNREACH, ENETUNREACH, ...): `detail` is the code. */
  Network: 'network',
  /** Nothing more is known; `detail` is the client-facing error code. */
  Other: 'other',
} as const;
export type FailureKind = (typeof FailureKind)[keyof typeof FailureKind];

/** Which clock ran out, for FailureKind.Timeout. */
export const TimeoutPhase = {
  Connect: 'connect',
  FirstByte: 'first_byte',
  Idle: 'idle',
  Total: 'total',
} as const;
export type TimeoutPhase = (typeof TimeoutPhase)[keyof typeof TimeoutPhase];

export interface FailureCause {
  kind: FailureKind;
  /** The code, status or timer behind `kind`; never a message (those can carry URLs). */
  detail: string;
  /** `host:port` of the upstream, never its path, query or credentials; null when unknown. */
  address: string | null;
}

const REFUSED_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED']);
const RESET_CODES: ReadonlySet<string> = new Set(['ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_CLOSED']);
const DNS_CODES: ReadonlySet<string> = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME']);
/** undici's own clocks and the kernel's connect timeout, by the phase they bound. */
const TIMEOUT_CODES: ReadonlyMap<string, TimeoutPhase> = new Map([
  ['UND_ERR_CONNECT_TIMEOUT', TimeoutPhase.Connect],
  ['ETIMEDOUT', TimeoutPhase.Connect],
  ['UND_ERR_HEADERS_TIMEOUT', TimeoutPhase.FirstByte],
  ['UND_ERR_BODY_TIMEOUT', TimeoutPhase.Idle],
]);
/** OpenSSL's certificate verification codes that carry none of the markers below. */
const TLS_CODES: ReadonlySet<string> = new Set(['EPROTO', 'HOSTNAME_MISMATCH', 'INVALID_PURPOSE', 'CERT_UNTRUSTED', 'CERT_REJECTED']);
/** The codes of the proxy tunnel's errors (ERR_PROXY_REFUSED, ERR_PROXY_UNREACHABLE, ...). */
const PROXY_CODE_PREFIX = 'ERR_PROXY_';
/** Longest code kept; a longer one is not a code. */
const MAX_CODE_LENGTH = 64;
/** Causes followed; fetch nests two or three. */
const MAX_DEPTH = 5;

/**
 * The network-level class of `error`: the first `code` in its cause chain that
 * names a proxy, refused, reset, TLS, DNS or timeout failure, else the deepest
 * upper-case code (Network): a wrapper's code says less than the socket's.
 * Undefined when the chain has no such code.
 */
export function classifyNetworkError(error: unknown): Pick<FailureCause, 'kind' | 'detail'> | undefined {
  let deepest: string | undefined;
  let current: unknown = error;
  for (let depth = 0; depth < MAX_DEPTH && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code.length > 0 && code.length <= MAX_CODE_LENGTH) {
      if (code.startsWith(PROXY_CODE_PREFIX)) return proxyCause(code, (current as { proxyStatus?: unknown }).proxyStatus);
      const known = classifyCode(code);
      if (known !== undefined) return known;
      // Lower case: our own catalogue codes (upstream_unreachable), not the wire's.
      if (code.toUpperCase() === code) deepest = code;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return deepest === undefined ? undefined : { kind: FailureKind.Network, detail: deepest };
}

/** The proxy's own refusal status says most (407: credentials, 403: its ACL). */
function proxyCause(code: string, status: unknown): Pick<FailureCause, 'kind' | 'detail'> {
  if (typeof status === 'number' && Number.isInteger(status) && status >= 100 && status <= 999) {
    return { kind: FailureKind.Proxy, detail: `status_${status}` };
  }
  return { kind: FailureKind.Proxy, detail: code };
}

function classifyCode(code: string): Pick<FailureCause, 'kind' | 'detail'> | undefined {
  if (REFUSED_CODES.has(code)) return { kind: FailureKind.Refused, detail: code };
  if (RESET_CODES.has(code)) return { kind: FailureKind.Reset, detail: code };
  if (DNS_CODES.has(code)) return { kind: FailureKind.Dns, detail: code };
  const phase = TIMEOUT_CODES.get(code);
  if (phase !== undefined) return { kind: FailureKind.Timeout, detail: phase };
  if (isTlsCode(code)) return { kind: FailureKind.Tls, detail: code };
  return undefined;
}

/** Node's TLS errors (ERR_TLS_*, ERR_SSL_*) and OpenSSL's verify codes
 * (DEPTH_ZERO_SELF_SIGNED_CERT, CERT_HAS_EXPIRED, UNABLE_TO_GET_ISSUER_CERT_LOCALLY, ...). */
function isTlsCode(code: string): boolean {
  return (
    code.startsWith('ERR_TLS_') ||
    code.startsWith('ERR_SSL_') ||
    code.startsWith('UNABLE_TO_') ||
    code.includes('CERT') ||
    TLS_CODES.has(code)
  );
}

/** `host:port` of an upstream URL, the default port written out; null for a
 * string that is not a URL. The path, query and any credentials are dropped:
 * a query may hold an api-version or a key, a path a deployment name. */
export function upstreamAddress(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  const port = parsed.port !== '' ? parsed.port : parsed.protocol === 'https:' ? '443' : '80';
  return `${parsed.hostname}:${port}`;
}

const causes = new WeakMap<object, FailureCause>();

/** Records what went wrong on the wire beside the error the client will get. */
export function noteFailureCause(error: unknown, cause: FailureCause): void {
  if (typeof error === 'object' && error !== null) causes.set(error, cause);
}

/**
 * The cause the exchange recorded for `error`; for an error that did not come
 * through an exchange (a test's, a provider's own), what its cause chain says,
 * else Other with the error's code.
 */
export function failureCauseOf(error: unknown): FailureCause {
  if (typeof error === 'object' && error !== null) {
    const noted = causes.get(error);
    if (noted !== undefined) return noted;
  }
  const network = classifyNetworkError((error as { cause?: unknown } | null)?.cause);
  if (network !== undefined) return { ...network, address: null };
  const code = (error as { code?: unknown } | null)?.code;
  return { kind: FailureKind.Other, detail: typeof code === 'string' ? code : 'unknown', address: null };
}
