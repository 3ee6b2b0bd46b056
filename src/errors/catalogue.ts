// Every error code a client can see, with what it means on the wire and for a
// retry. One entry per code; an ApiError takes its status and OpenAI `type`
// from here, so a code cannot answer with two statuses. README.md and
// docs/admin-api.md carry this table for readers; test/errors/catalogue.test.ts
// holds them equal.

/** OpenAI's `error.type` values the gateway uses. */
export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'insufficient_quota'
  | 'server_error'
  | 'upstream_error';

/**
 * What a failed upstream attempt with this code means for the dispatcher
 * (src/upstream/retry-policy.ts turns it into retry, fallback or fatal).
 */
export const Failure = {
  /** Passing trouble (a blip, "later"): the same target may answer on a retry. */
  Transient: 'transient',
  /** This target cannot serve the request (timeouts, credentials, mapping, protocol): another may. */
  Target: 'target',
  /** Server-side trouble that is not an upstream's answer: do not hammer, try elsewhere. */
  Gateway: 'gateway',
  /** About the client's request: every target would answer the same. */
  Request: 'request',
} as const;
export type Failure = (typeof Failure)[keyof typeof Failure];

export interface CatalogueEntry {
  readonly status: number;
  readonly type: ErrorType;
  /** Another `type` one answer uses for historical reasons (kept byte for byte). */
  readonly alsoType?: ErrorType;
  readonly failure: Failure;
  /** Whether the same request, sent again later, may succeed (OpenAI's SDKs
   * retry 408, 409, 429 and 5xx on their own regardless). */
  readonly clientMayRetry: boolean;
  /** The message when the code always says the same; null when it is built per case. */
  readonly message: string | null;
  /** The envelope's `code` is null (node's own HTTP parser failures, as OpenAI
   * answers them); the catalogue name is for logs only. */
  readonly envelopeNull?: true;
}

const invalid = { status: 400, type: 'invalid_request_error', failure: Failure.Request, clientMayRetry: false, message: null } as const;

export const ERROR_CATALOGUE = {
  // 400: the request breaks the contract; `param` is the path where there is one.
  unknown_parameter: invalid,
  /** A field the request may carry (the operator accepts it) that the target's provider has no equivalent of; `param` names it. */
  unsupported_parameter: invalid,
  /** A json_schema with strict true that is outside the strict subset (src/schema/); the message names the keyword and its path. */
  unsupported_schema: invalid,
  invalid_type: invalid,
  invalid_value: invalid,
  missing_required_parameter: invalid,
  array_above_max_length: invalid,
  array_below_min_length: invalid,
  invalid_json: invalid,
  duplicate_key: invalid,
  json_limit_exceeded: invalid,
  invalid_request_id: invalid,
  /** The upstream refused the request (HTTP 400/413/422) without saying why;
   * when it did say, its own message, param and code are relayed instead. */
  upstream_rejected_request: invalid,
  /** A chat-shaped request naming an embeddings alias, or an embeddings request naming a chat alias (service-auto included); `param: model`. */
  model_kind_mismatch: invalid,
  unknown_alias: invalid,
  invalid_key_name: invalid,
  invalid_key_setting: invalid,
  weak_password: invalid,
  http_malformed: { ...invalid, message: 'The request is not valid HTTP.', envelopeNull: true },
  http_request_timeout: { ...invalid, status: 408, clientMayRetry: true, message: 'The request was not received in time.', envelopeNull: true },
  http_headers_too_large: { ...invalid, status: 431, envelopeNull: true },
  /** Plain HTTP sent to a TLS listener (src/http/plain-http-on-tls.ts): answered in plain HTTP, then closed. */
  plain_http_on_tls_port: { ...invalid, message: 'This port speaks TLS: use https:// instead of http://.' },
  /** An `Expect` header other than 100-continue (node would answer a bare 417 before any handler). */
  expectation_failed: { ...invalid, status: 417, message: 'The Expect header is not supported; only "Expect: 100-continue" is.' },
  /** A WebSocket upgrade: the gateway speaks HTTP only. 426 is the answer Codex falls back to HTTP on at once (it retries a 404 or 405 for seconds, and gives up on a 400). */
  upgrade_not_supported: {
    ...invalid,
    status: 426,
    message: 'This gateway does not speak WebSocket: send the same request as a plain HTTP request (POST /v1/responses with "stream": true streams over server-sent events).',
  },
  // 401, 403
  invalid_api_key: { ...invalid, status: 401 },
  session_required: { ...invalid, status: 401, type: 'authentication_error' },
  invalid_password: { ...invalid, status: 401, type: 'authentication_error', message: 'Wrong password.' },
  model_not_allowed: { ...invalid, status: 403, type: 'permission_error' },
  origin_refused: { ...invalid, status: 403, type: 'permission_error', message: 'Cross-origin requests to the admin API are refused.' },
  csrf_token_invalid: { ...invalid, status: 403, type: 'permission_error' },
  host_not_allowed: {
    ...invalid,
    status: 403,
    type: 'permission_error',
    message: 'This admin listener does not answer for that host name; add it to admin.allowedHosts if it is yours.',
  },
  password_required: { ...invalid, status: 403, type: 'permission_error', message: 'Set an admin password first (POST /api/password).' },
  // Single sign-on (docs/sso.md).
  password_login_disabled: {
    ...invalid,
    status: 403,
    type: 'permission_error',
    message: 'Password login is disabled (admin.oidc.passwordLogin is false); sign in with single sign-on.',
  },
  password_set_refused: {
    ...invalid,
    status: 403,
    type: 'permission_error',
    message: 'A single sign-on session does not set the shared admin password; use `portcullis admin set-password` on the server.',
  },
  sso_not_configured: { ...invalid, status: 404, type: 'not_found_error', message: 'Single sign-on is not configured (admin.oidc).' },
  /** clientAuth "optional": the client sent a certificate that does not verify (src/http/client-certificate.ts). */
  client_certificate_refused: { ...invalid, status: 403, type: 'permission_error' },
  // 404 to 415
  model_not_found: { ...invalid, status: 404 },
  unknown_url: { ...invalid, status: 404, alsoType: 'not_found_error' },
  key_not_found: { ...invalid, status: 404, type: 'not_found_error' },
  /** A stored response that does not exist, has expired or belongs to another key: all three are answered alike. */
  response_not_found: { ...invalid, status: 404 },
  method_not_allowed: { ...invalid, status: 405 },
  key_revoked: { ...invalid, status: 409 },
  password_already_set: {
    ...invalid,
    status: 409,
    message: 'An admin password is already set; change it with `portcullis admin set-password` on the server.',
  },
  request_too_large: { ...invalid, status: 413 },
  /** A stored conversation past responses.store.maxChainDepth or maxRecordBytes (src/state/response-store-port.ts). */
  conversation_too_long: invalid,
  /** The egress guard found what the request's policy blocks; `param` is the path, the message names the detector, never the text. */
  guard_blocked: invalid,
  unsupported_media_type: { ...invalid, status: 415 },
  // 429: every 429 carries Retry-After, but a budget refusal of a request no budget window could hold (retrying cannot help).
  // Budget refusals the SDKs' own retries cannot pass add `x-should-retry: false` (src/gateway/key-policy.ts).
  rate_limit_exceeded: { status: 429, type: 'rate_limit_error', failure: Failure.Transient, clientMayRetry: true, message: null },
  insufficient_quota: { status: 429, type: 'insufficient_quota', failure: Failure.Transient, clientMayRetry: false, message: null },
  login_rate_limited: { status: 429, type: 'rate_limit_error', failure: Failure.Transient, clientMayRetry: true, message: null },
  /** Unknown admin API tokens beyond their budget; a valid token is never refused so. */
  admin_token_rate_limited: { status: 429, type: 'rate_limit_error', failure: Failure.Transient, clientMayRetry: true, message: null },
  // 500, 503: the gateway's own trouble.
  internal_error: {
    status: 500,
    type: 'server_error',
    failure: Failure.Gateway,
    clientMayRetry: true,
    message: 'The server had an error while processing your request.',
  },
  /** The egress guard failed while examining a request: it is refused, never sent unexamined (fail closed). */
  guard_failed: { status: 500, type: 'server_error', failure: Failure.Gateway, clientMayRetry: true, message: null },
  state_unavailable: {
    status: 503,
    type: 'server_error',
    failure: Failure.Gateway,
    clientMayRetry: true,
    message: 'The gateway cannot reach its shared state store right now; retry shortly.',
  },
  /** responses.store.maxTotalBytes is taken by live records: a response could not be stored. */
  response_store_full: {
    status: 503,
    type: 'server_error',
    failure: Failure.Gateway,
    clientMayRetry: true,
    message: "The gateway's response store is full; retry later, or send the whole conversation with 'store': false.",
  },
  server_shutting_down: {
    status: 503,
    type: 'server_error',
    failure: Failure.Gateway,
    clientMayRetry: true,
    message: 'The gateway is shutting down; the request was not completed. Retry it.',
  },
  /** The listener has limits.maxConnections open: the connection is answered this and closed (src/http/connection-limit.ts). */
  too_many_connections: {
    status: 503,
    type: 'server_error',
    failure: Failure.Gateway,
    clientMayRetry: true,
    message: 'The gateway has too many open connections; retry shortly.',
  },
  key_store_unavailable: {
    status: 503,
    type: 'server_error',
    failure: Failure.Gateway,
    clientMayRetry: true,
    message: 'The key store is busy or cannot be written; try again.',
  },
  /** A key change whose write-ahead audit record cannot be appended: the change is not made. */
  change_not_recorded: {
    status: 503,
    type: 'server_error',
    failure: Failure.Gateway,
    clientMayRetry: false,
    message: 'The change was not made: its audit record cannot be written. The gateway log says why; run portcullis audit verify on the server.',
  },
  /** security.requireFips and a stored admin password hash it refuses (scrypt, or PBKDF2 with a salt under 16 bytes): no password login until the operator sets it again. */
  admin_password_not_approved: {
    status: 503,
    type: 'server_error',
    failure: Failure.Gateway,
    clientMayRetry: false,
    message: 'The stored admin password uses a hash security.requireFips refuses; set it again with `portcullis admin set-password` on the server. The gateway log names the file.',
  },
  dashboard_not_built: {
    status: 503,
    type: 'server_error',
    failure: Failure.Gateway,
    clientMayRetry: false,
    message: 'The dashboard is not built; run `npm run build`.',
  },
  // The audit chain
  /** GET /api/audit: the audit log cannot be read (I/O, Redis, a record that is not valid); its message says where. */
  audit_log_unavailable: {
    status: 503,
    type: 'server_error',
    failure: Failure.Gateway,
    clientMayRetry: true,
    message: 'The audit log cannot be read right now; `portcullis audit verify` on the server says why.',
  },
  // 502, 503, 504: the upstream failed; never the client's fault.
  upstream_error: { status: 502, type: 'upstream_error', failure: Failure.Transient, clientMayRetry: true, message: null },
  upstream_unreachable: {
    status: 502,
    type: 'upstream_error',
    failure: Failure.Transient,
    clientMayRetry: true,
    message: 'The upstream provider could not be reached.',
  },
  upstream_stream_truncated: {
    status: 502,
    type: 'upstream_error',
    failure: Failure.Transient,
    clientMayRetry: true,
    message: 'The upstream stream ended unexpectedly.',
  },
  upstream_auth_failed: { status: 502, type: 'upstream_error', failure: Failure.Target, clientMayRetry: false, message: null },
  upstream_not_found: {
    status: 502,
    type: 'upstream_error',
    failure: Failure.Target,
    clientMayRetry: false,
    message:
      'The upstream provider does not serve the model or endpoint the gateway is configured to use (HTTP 404). ' +
      'This is a gateway configuration problem.',
  },
  bad_upstream_response: { status: 502, type: 'upstream_error', failure: Failure.Target, clientMayRetry: true, message: null },
  /** The answer to a strict json_schema request is not JSON that matches the schema; the message names the failing JSON path. */
  upstream_schema_mismatch: { status: 502, type: 'upstream_error', failure: Failure.Target, clientMayRetry: true, message: null },
  /** The TLS handshake with the upstream failed (its certificate, the gateway's, the version): fixed only by configuration. */
  upstream_tls_failed: {
    status: 502,
    type: 'upstream_error',
    failure: Failure.Target,
    clientMayRetry: false,
    message: 'The TLS connection to the upstream provider failed. This is a gateway configuration problem.',
  },
  /** The egress proxy refused or could not open the way to the upstream. */
  upstream_proxy_failed: {
    status: 502,
    type: 'upstream_error',
    failure: Failure.Target,
    clientMayRetry: true,
    message: 'The egress proxy did not connect the gateway to the upstream provider.',
  },
  upstream_unavailable: { status: 503, type: 'server_error', failure: Failure.Gateway, clientMayRetry: true, message: null },
  upstream_timeout: { status: 504, type: 'server_error', failure: Failure.Target, clientMayRetry: true, message: null },
  // Admin API tokens (docs/admin-api.md, "Tokens"). The 401s say
  // nothing beyond their code: a guesser learns no more than that the token failed.
  invalid_token_setting: invalid,
  admin_token_invalid: { ...invalid, status: 401, type: 'authentication_error', message: 'The admin API token is not valid: no token of this gateway matches it. Send the whole pca_... token as it was printed when it was created.' },
  admin_token_revoked: { ...invalid, status: 401, type: 'authentication_error', message: 'The admin API token has been revoked; create a new one (portcullis admin tokens create, or Tokens in the dashboard).' },
  admin_token_expired: { ...invalid, status: 401, type: 'authentication_error', message: 'The admin API token has expired; create a new one (portcullis admin tokens create, or Tokens in the dashboard).' },
  token_scope_insufficient: { ...invalid, status: 403, type: 'permission_error' },
  session_required_for_route: {
    ...invalid,
    status: 403,
    type: 'permission_error',
    message: 'This route needs a dashboard session; an admin API token cannot manage tokens.',
  },
  admin_token_not_found: { ...invalid, status: 404, type: 'not_found_error' },
  admin_token_already_revoked: { ...invalid, status: 409 },
  admin_token_limit_reached: { ...invalid, status: 409 },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** The codes whose answer is a 400 `invalid_request_error`. */
export type InvalidRequestCode = {
  [C in ErrorCode]: (typeof ERROR_CATALOGUE)[C]['status'] extends 400 ? C : never;
}[ErrorCode];

/** The codes of an upstream's failure as the gateway reports it (502, 503, 504). */
export type UpstreamErrorCode = Exclude<Extract<ErrorCode, `upstream_${string}` | 'bad_upstream_response'>, 'upstream_rejected_request'>;

export function catalogueEntry(code: ErrorCode): CatalogueEntry {
  return ERROR_CATALOGUE[code];
}

