// The rules for an upstream's `baseUrl`: an absolute http(s) URL without
// credentials or fragment, whose query (Azure OpenAI's `api-version`, a
// proxy's routing parameter) is kept and sent after the endpoint's path. A
// query is checked parameter by parameter, and one whose name says it holds a
// secret is refused: a URL ends up in proxies' and servers' access logs, the
// key belongs in apiKeyEnv/apiKeyFile and goes in a header.
import type { Checker } from './config-checker.ts';

/** Parameter names (lower case, without '-' and '_') that carry a credential,
 * and the endings that do (`x-api-key`, `session_token`, `client_secret`). */
const SECRET_PARAMETERS = new Set(['key', 'auth', 'authorization', 'sig', 'signature', 'code']);
const SECRET_ENDINGS = ['apikey', 'token', 'secret', 'password', 'subscriptionkey'];

function isSecretName(name: string): boolean {
  const plain = name.toLowerCase().replace(/[-_]/g, '');
  return SECRET_PARAMETERS.has(plain) || SECRET_ENDINGS.some((ending) => plain.endsWith(ending));
}

/** Azure OpenAI's classic endpoint, `/openai/deployments/{deployment}`, needs an api-version. */
const AZURE_DEPLOYMENT_PATH = /\/openai\/deployments\/[^/]+\/?$/i;

export interface BaseUrlRules {
  /** What the adapter appends to the path, e.g. `chat/completions`. */
  resource: string;
  /** Where to put a key found in the query instead, in the words of this type's settings. */
  keyAdvice: string;
}

/**
 * Checks `value` as a baseUrl; returns it with trailing slashes of its path
 * removed and its query as written, '' when it is not a string.
 */
export function parseBaseUrl(c: Checker, value: unknown, at: string, rules: BaseUrlRules): string {
  const baseUrl = c.string(value, at);
  if (baseUrl === undefined) return '';
  const invalid = (message: string): string => c.report(at, { code: 'invalid_value', message }) ?? baseUrl;
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return invalid('must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return invalid('must be an absolute http:// or https:// URL');
  if (url.username !== '' || url.password !== '') return invalid('must not contain credentials; use apiKeyEnv or apiKeyFile');
  // '#' with nothing after it leaves url.hash empty; the text says it all.
  if (baseUrl.includes('#')) return invalid("must not contain a fragment ('#...'); it is never sent to the upstream");

  const queryAt = baseUrl.indexOf('?');
  const path = (queryAt === -1 ? baseUrl : baseUrl.slice(0, queryAt)).replace(/\/+$/, '');
  const query = queryAt === -1 ? undefined : baseUrl.slice(queryAt + 1);
  if (path.toLowerCase().endsWith(`/${rules.resource}`)) {
    return invalid(`ends with /${rules.resource}, which the gateway appends itself; end baseUrl before it`);
  }
  const names = query === undefined ? [] : queryNames(query);
  if (typeof names === 'string') return invalid(names);
  const secret = names.find(isSecretName);
  if (secret !== undefined) {
    return invalid(`must not carry a secret: query parameter '${secret}' would put it in the URL, which proxies and servers log; ${rules.keyAdvice}`);
  }
  if (AZURE_DEPLOYMENT_PATH.test(url.pathname) && !names.includes('api-version')) {
    return invalid('is an Azure OpenAI deployment path, which needs an api-version query, e.g. "?api-version=2024-10-21"');
  }
  return query === undefined ? path : `${path}?${query}`;
}

/** The parameter names of a query (the text after '?'), or what is wrong with it. */
function queryNames(query: string): string[] | string {
  if (query === '') return "has an empty query: remove the '?' or add a parameter after it";
  const names: string[] = [];
  for (const part of query.split('&')) {
    if (part === '') return "has an empty query parameter (a doubled, leading or trailing '&')";
    const [entry] = [...new URLSearchParams(part)];
    const [name, value] = entry ?? ['', ''];
    // The value is never quoted: it may be the very secret this check is for.
    if (name === '') return "has a query parameter without a name ('=' first)";
    if (value === '') return `has a query parameter without a value ('${name}'); write ${name}=VALUE`;
    if (names.includes(name)) return `has the query parameter '${name}' twice`;
    names.push(name);
  }
  return names;
}
