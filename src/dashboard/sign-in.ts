// The login screen's words for a refused single sign-on (the callback sends
// the browser to /?sso_error=<code>) and the header's words for who is signed
// in. Pure (no DOM), tested on its own.
import type { Session } from './admin-model.ts';
import { actorKindLabel, actorName } from './audit-labels.ts';

export const SSO_ERROR_MESSAGES: Record<string, string> = {
  sso_state_invalid: 'Single sign-on did not finish: the sign-in took too long or was started in another tab. Try again.',
  sso_id_token_invalid: 'Single sign-on failed: the identity provider’s answer could not be verified. Try again; if it keeps failing, ask the gateway’s operator to check its OpenID settings.',
  sso_user_not_allowed: 'Your account signed in at the identity provider but is not allowed to use this dashboard. Ask the gateway’s operator to allow it.',
  sso_provider_error: 'The identity provider refused or could not complete the sign-in. Try again later.',
};

const UNKNOWN_SSO_ERROR = 'Single sign-on failed. Try again.';

/** The message for ?sso_error=… in a page's query, or null when there is none. */
export function ssoErrorMessage(search: string): string | null {
  const code = new URLSearchParams(search).get('sso_error');
  if (code === null) return null;
  return Object.hasOwn(SSO_ERROR_MESSAGES, code) ? (SSO_ERROR_MESSAGES[code] as string) : UNKNOWN_SSO_ERROR;
}

/** The query without sso_error (what the address bar keeps once the message is shown): "" or "?…". */
export function searchWithoutSsoError(search: string): string {
  const params = new URLSearchParams(search);
  params.delete('sso_error');
  const rest = params.toString();
  return rest === '' ? '' : `?${rest}`;
}

/** The header's "who": name or id, and how they signed in; null when the server does not say. */
export function signedInAs(session: Session): { name: string; kind: string } | null {
  if (session.actor === undefined) return null;
  return { name: actorName(session.actor), kind: actorKindLabel(session.actor.kind) };
}
