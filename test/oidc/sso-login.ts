// A single sign-on at the admin listener driven over plain HTTP, as a browser
// would: /sso/start, the provider's development login form (oidc-provider's
// devInteractions: any login name), its consent form when it shows one, and
// the redirect back to /sso/callback. A cookie jar per origin; every answer
// that is neither a redirect nor one of those forms fails, naming it.
// The gateway fetches the provider's discovery document at /sso/start, and
// redeems the code and reads its key set at /sso/callback.

export interface SsoLoginResult {
  /** Where the callback sent the browser ("/" on success, "/?sso_error=..." otherwise). */
  landedAt: string;
  /** The admin session cookie the callback set, or null. */
  sessionCookie: string | null;
}

const MAX_STEPS = 12;
/** Each step's bound. */
const STEP_MS = 15_000;

type Jar = Map<string, string>;

function keep(jar: Jar, response: Response): void {
  for (const cookie of response.headers.getSetCookie()) {
    const pair = cookie.split(';')[0] as string;
    const at = pair.indexOf('=');
    if (at > 0) jar.set(pair.slice(0, at), pair.slice(at + 1));
  }
}

function cookieHeader(jar: Jar): Record<string, string> {
  return jar.size === 0 ? {} : { cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; ') };
}

/** The form on a page and its fields: the hidden ones, and the login fields when it asks for a login. */
function formOf(html: string, login: string): { action: string; fields: Record<string, string> } | null {
  const action = /<form[^>]* action="([^"]+)"/.exec(html);
  if (action === null) return null;
  const fields: Record<string, string> = {};
  for (const hidden of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/?>/g)) fields[hidden[1] as string] = hidden[2] as string;
  if (/name="login"/.test(html)) Object.assign(fields, { login, password: 'any password' });
  return { action: (action[1] as string).replace(/&amp;/g, '&'), fields };
}

export async function ssoLogin(adminUrl: string, login: string): Promise<SsoLoginResult> {
  const adminOrigin = new URL(adminUrl).origin;
  const jars = new Map<string, Jar>();
  const jarOf = (url: URL): Jar => {
    let jar = jars.get(url.origin);
    if (jar === undefined) {
      jar = new Map();
      jars.set(url.origin, jar);
    }
    return jar;
  };
  let url = new URL('/sso/start', adminUrl);
  let init: RequestInit = { method: 'GET' };
  const seen: string[] = [];
  for (let step = 0; step < MAX_STEPS; step += 1) {
    const jar = jarOf(url);
    const response = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(STEP_MS), headers: { ...cookieHeader(jar), ...(init.headers as Record<string, string> | undefined) } });
    keep(jar, response);
    const body = await response.text();
    seen.push(`${init.method ?? 'GET'} ${url.origin}${url.pathname} -> ${response.status}`);
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location !== null) {
      const next = new URL(location, url);
      if (url.origin === adminOrigin && url.pathname === '/sso/callback') {
        return { landedAt: `${next.pathname}${next.search}`, sessionCookie: jar.get('portcullis_session') ?? null };
      }
      url = next;
      init = { method: 'GET' };
      continue;
    }
    const form = response.status === 200 ? formOf(body, login) : null;
    if (form === null) throw new Error(`single sign-on: unexpected answer ${response.status} at ${url.href}; steps: ${seen.join(', ')}`);
    url = new URL(form.action, url);
    init = { method: 'POST', body: new URLSearchParams(form.fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } };
  }
  throw new Error(`single sign-on: no callback within ${MAX_STEPS} steps: ${seen.join(', ')}`);
}
