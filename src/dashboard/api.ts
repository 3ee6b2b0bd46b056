// Admin JSON API client for the dashboard. Same origin only; the session
// cookie is HttpOnly, so the page never sees it and only carries the CSRF
// token it was given at login (or by GET /api/session). Every outcome is data:
// callers switch on `ok` and on the server's stable error `code`.

import type { AliasCatalogue, ApiFailure, ApiOutcome, AuditPage, Granularity, IssuedKey, IssuedToken, KeyChanges, KeyRecord, KeyUsage, Session, SignInOptions, TokenRequest, TokenView, UsageByKey } from './admin-model.ts';

/** Longest Retry-After the page honours; anything larger is a server bug, not a wait. */
const MAX_RETRY_AFTER_SECONDS = 3600;

let csrfToken: string | null = null;
let onSessionLost: () => void = () => {};

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called once per 401 on an authenticated call, so the page can fall back to the login form. */
export function whenSessionLost(callback: () => void): void {
  onSessionLost = callback;
}

function parseRetryAfter(header: string | null): number | null {
  if (header === null || !/^\d{1,10}$/.test(header)) return null;
  return Math.min(Number(header), MAX_RETRY_AFTER_SECONDS);
}

function failureFrom(status: number, body: unknown, retryAfterSeconds: number | null): ApiFailure {
  const error = typeof body === 'object' && body !== null ? (body as { error?: unknown }).error : undefined;
  if (typeof error === 'object' && error !== null) {
    const e = error as Record<string, unknown>;
    return {
      status,
      message: typeof e['message'] === 'string' ? e['message'] : `Request failed with status ${status}.`,
      type: typeof e['type'] === 'string' ? e['type'] : 'api_error',
      param: typeof e['param'] === 'string' ? e['param'] : null,
      code: typeof e['code'] === 'string' ? e['code'] : `http_${status}`,
      retryAfterSeconds,
    };
  }
  return { status, message: `Request failed with status ${status}.`, type: 'api_error', param: null, code: `http_${status}`, retryAfterSeconds };
}

async function call<T>(method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown, options: { authenticated?: boolean } = {}): Promise<ApiOutcome<T>> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken !== null) headers['x-csrf-token'] = csrfToken;
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? null : JSON.stringify(body),
      credentials: 'same-origin',
      cache: 'no-store',
      redirect: 'error',
    });
  } catch {
    return { ok: false, failure: { status: 0, message: 'The gateway did not answer. Check that it is running.', type: 'network_error', param: null, code: 'network_error', retryAfterSeconds: null } };
  }
  const text = await response.text().catch(() => '');
  let parsed: unknown = undefined;
  if (text !== '') {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
  }
  if (response.ok) return { ok: true, status: response.status, value: parsed as T };
  if (response.status === 401 && options.authenticated !== false) onSessionLost();
  return { ok: false, failure: failureFrom(response.status, parsed, parseRetryAfter(response.headers.get('retry-after'))) };
}

const keyPath = (id: string): string => `/api/keys/${encodeURIComponent(id)}`;

export const adminApi = {
  session: () => call<Session>('GET', '/api/session', undefined, { authenticated: false }),
  login: (password: string) => call<Session>('POST', '/api/login', { password }, { authenticated: false }),
  logout: () => call<void>('POST', '/api/logout', undefined, { authenticated: false }),
  /** 200 with a fresh session (the old one ends with the password change); older servers answered 204. */
  setPassword: (password: string) => call<Session | undefined>('POST', '/api/password', { password }),
  listKeys: () => call<{ data: KeyRecord[] }>('GET', '/api/keys'),
  createKey: (changes: KeyChanges & { name: string }) => call<IssuedKey>('POST', '/api/keys', changes),
  updateKey: (id: string, changes: KeyChanges) => call<KeyRecord>('PATCH', keyPath(id), changes),
  revokeKey: (id: string) => call<KeyRecord>('POST', `${keyPath(id)}/revoke`),
  rotateKey: (id: string) => call<IssuedKey>('POST', `${keyPath(id)}/rotate`),
  keyUsage: (id: string, granularity: Granularity) => call<KeyUsage>('GET', `${keyPath(id)}/usage?granularity=${granularity}`),
  usageByKey: (granularity: Granularity) => call<UsageByKey>('GET', `/api/usage?granularity=${granularity}`),
  aliases: () => call<AliasCatalogue>('GET', '/api/aliases'),
  /** No session needed: the login screen asks before anyone signs in. */
  signInOptions: () => call<SignInOptions>('GET', '/api/sso', undefined, { authenticated: false }),
  /** `query` from auditQuery() (audit-query.ts): empty or starting with "?". */
  audit: (query: string) => call<AuditPage>('GET', `/api/audit${query}`),
  listTokens: () => call<{ data: TokenView[] }>('GET', '/api/tokens'),
  createToken: (request: TokenRequest) => call<IssuedToken>('POST', '/api/tokens', request),
  revokeToken: (id: string) => call<TokenView>('POST', `/api/tokens/${encodeURIComponent(id)}/revoke`),
};
