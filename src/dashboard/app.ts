// Dashboard entry point: session state, login (password, single sign-on) and
// first password, the sections (keys, aliases, tokens, audit) behind #keys,
// #aliases, #tokens and #audit, who is signed in, logout.
import { adminApi, setCsrfToken, whenSessionLost } from './api.ts';
import type { ApiFailure, Session, SignInOptions } from './admin-model.ts';
import { createAliasesView } from './aliases-view.ts';
import { createAuditView } from './audit-view.ts';
import { byId } from './dom.ts';
import { createKeysView } from './keys-view.ts';
import { searchWithoutSsoError, signedInAs, ssoErrorMessage } from './sign-in.ts';
import { createTokensView } from './tokens-view.ts';

const View = {
  loading: 'view-loading',
  login: 'view-login',
  setPassword: 'view-set-password',
  keys: 'view-keys',
  aliases: 'view-aliases',
  tokens: 'view-tokens',
  audit: 'view-audit',
} as const;
type View = (typeof View)[keyof typeof View];

const SECTION_BY_HASH: Record<string, View> = { '#keys': View.keys, '#aliases': View.aliases, '#tokens': View.tokens, '#audit': View.audit };
const SECTIONS: ReadonlySet<View> = new Set(Object.values(SECTION_BY_HASH));

const LOGIN_MESSAGES: Record<string, string> = {
  invalid_password: 'That password or token is not right.',
};

const flash = byId('flash', HTMLElement);
const nav = byId('nav', HTMLElement);
const logoutButton = byId('logout', HTMLButtonElement);
const loginForm = byId('login-form', HTMLFormElement);
const loginPassword = byId('login-password', HTMLInputElement);
const loginSubmit = byId('login-submit', HTMLButtonElement);
const loginError = byId('login-error', HTMLElement);
const passwordForm = byId('password-form', HTMLFormElement);
const newPassword = byId('new-password', HTMLInputElement);
const confirmPassword = byId('confirm-password', HTMLInputElement);
const passwordError = byId('password-error', HTMLElement);
const passwordSubmit = byId('password-submit', HTMLButtonElement);
const ssoError = byId('sso-error', HTMLElement);
const ssoBlock = byId('sso-block', HTMLElement);
const ssoStart = byId('sso-start', HTMLAnchorElement);
const ssoOr = byId('sso-or', HTMLElement);
const passwordBlock = byId('password-block', HTMLElement);
const loginNone = byId('login-none', HTMLElement);
const whoami = byId('whoami', HTMLElement);
const whoamiName = byId('whoami-name', HTMLElement);
const whoamiKind = byId('whoami-kind', HTMLElement);

let signedIn = false;
let loginUnlockTimer: ReturnType<typeof setTimeout> | null = null;

function notify(text: string, tone: 'info' | 'error' = 'info'): void {
  flash.textContent = text;
  flash.classList.toggle('flash-error', tone === 'error');
}

function failed(failure: ApiFailure): void {
  // A 401 already sent the page back to the login form (whenSessionLost).
  if (failure.status === 401) return;
  notify(failure.message, 'error');
}

const aliasesView = createAliasesView(failed);
const keysView = createKeysView({ notify, failed, catalogue: () => aliasesView.catalogue() });
const tokensView = createTokensView({ notify, failed });
const auditView = createAuditView({ failed });

function showView(view: View): void {
  for (const id of Object.values(View)) byId(id, HTMLElement).hidden = id !== view;
  const inApp = SECTIONS.has(view);
  nav.hidden = !inApp;
  logoutButton.hidden = !(inApp || view === View.setPassword);
  whoami.hidden = logoutButton.hidden || whoamiName.textContent === '';
  for (const link of nav.querySelectorAll('a')) {
    if (SECTION_BY_HASH[link.hash] === view) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

async function showSection(): Promise<void> {
  const view = SECTION_BY_HASH[location.hash] ?? View.keys;
  showView(view);
  if (view === View.keys) await keysView.load();
  else if (view === View.tokens) await tokensView.load();
  else if (view === View.audit) await auditView.load();
  else await aliasesView.load();
}

function showWho(session: Session | null): void {
  const who = session === null ? null : signedInAs(session);
  whoamiName.textContent = who?.name ?? '';
  whoamiKind.textContent = who === null ? '' : `(${who.kind})`;
  whoami.hidden = logoutButton.hidden || who === null;
}

/** The login and password answers do not say who; GET /api/session does. */
async function askWho(): Promise<void> {
  const outcome = await adminApi.session();
  if (outcome.ok && signedIn) showWho(outcome.value);
}

async function enter(session: Session): Promise<void> {
  setCsrfToken(session.csrfToken);
  signedIn = true;
  showWho(session);
  if (session.actor === undefined) void askWho();
  // A single sign-on session has no password to set; the prompt is for the bootstrap token's.
  if (session.mustSetPassword && session.actor?.kind !== 'sso') {
    showView(View.setPassword);
    newPassword.focus();
    return;
  }
  await showSection();
}

function showLogin(message: string): void {
  signedIn = false;
  setCsrfToken(null);
  keysView.reset();
  aliasesView.reset();
  tokensView.reset();
  auditView.reset();
  showWho(null);
  for (const dialog of document.querySelectorAll('dialog')) if (dialog.open) dialog.close();
  loginError.textContent = '';
  notify(message);
  showView(View.login);
  loginPassword.focus();
  void offerSignIn();
}

/** Older servers have no /api/sso: the password alone, as before. */
const PASSWORD_ONLY: SignInOptions = { password: true, sso: null };

/** The single sign-on button when the gateway has a provider; the password form unless the config turns it off. */
async function offerSignIn(): Promise<void> {
  const outcome = await adminApi.signInOptions();
  const options = outcome.ok && typeof outcome.value === 'object' && outcome.value !== null ? outcome.value : PASSWORD_ONLY;
  const sso = options.sso;
  ssoBlock.hidden = sso === null;
  if (sso !== null) ssoStart.textContent = sso.label;
  passwordBlock.hidden = !options.password;
  ssoOr.hidden = !options.password;
  loginNone.hidden = options.password || sso !== null;
  if (!options.password && sso !== null && !byId(View.login, HTMLElement).hidden) ssoStart.focus();
}

whenSessionLost(() => {
  if (signedIn) showLogin('Your session ended. Sign in again.');
});

loginForm.addEventListener('submit', (event) => {
  event.preventDefault();
  void login();
});

async function login(): Promise<void> {
  const password = loginPassword.value;
  if (password === '') {
    loginError.textContent = 'Enter the admin password or the bootstrap token.';
    loginPassword.focus();
    return;
  }
  loginSubmit.disabled = true;
  const outcome = await adminApi.login(password);
  if (outcome.ok) {
    loginSubmit.disabled = false;
    loginPassword.value = '';
    loginError.textContent = '';
    notify('');
    await enter(outcome.value);
    return;
  }
  const f = outcome.failure;
  if (f.code === 'login_rate_limited' || f.status === 429) {
    const wait = f.retryAfterSeconds ?? 60;
    loginError.textContent = `Too many attempts. Try again in ${wait} seconds.`;
    if (loginUnlockTimer !== null) clearTimeout(loginUnlockTimer);
    loginUnlockTimer = setTimeout(() => {
      loginUnlockTimer = null;
      loginSubmit.disabled = false;
      loginError.textContent = '';
    }, wait * 1000);
    return;
  }
  loginSubmit.disabled = false;
  loginError.textContent = LOGIN_MESSAGES[f.code] ?? f.message;
  loginPassword.select();
}

passwordForm.addEventListener('submit', (event) => {
  event.preventDefault();
  void setPassword();
});

async function setPassword(): Promise<void> {
  if (newPassword.value === '') {
    passwordError.textContent = 'Choose a password.';
    newPassword.focus();
    return;
  }
  if (newPassword.value !== confirmPassword.value) {
    passwordError.textContent = 'The two passwords differ.';
    confirmPassword.focus();
    return;
  }
  passwordSubmit.disabled = true;
  const outcome = await adminApi.setPassword(newPassword.value);
  passwordSubmit.disabled = false;
  if (!outcome.ok) {
    if (outcome.failure.status !== 401) {
      passwordError.textContent = outcome.failure.message;
      newPassword.focus();
    }
    return;
  }
  passwordForm.reset();
  passwordError.textContent = '';
  // The password change ends the bootstrap session and answers with a new one.
  let session: Session | null = outcome.value?.csrfToken === undefined ? null : outcome.value;
  if (session === null) {
    const asked = await adminApi.session();
    session = asked.ok ? asked.value : null;
  }
  if (session === null) {
    showLogin('Password saved. Sign in with your new password.');
    return;
  }
  notify('Password saved. Use it to sign in from now on.');
  await enter(session);
}

logoutButton.addEventListener('click', () => {
  void (async () => {
    await adminApi.logout();
    showLogin('You are signed out.');
  })();
});

window.addEventListener('hashchange', () => {
  if (signedIn && byId(View.setPassword, HTMLElement).hidden) void showSection();
});

/** A refused single sign-on comes back as /?sso_error=<code>: said in words once, then dropped from the address. */
function takeSsoError(): string | null {
  const message = ssoErrorMessage(location.search);
  if (message === null) return null;
  history.replaceState(history.state, '', `${location.pathname}${searchWithoutSsoError(location.search)}${location.hash}`);
  ssoError.textContent = message;
  ssoError.hidden = false;
  return message;
}

loginForm.addEventListener('submit', () => {
  ssoError.hidden = true;
});

async function boot(): Promise<void> {
  const refused = takeSsoError();
  const outcome = await adminApi.session();
  if (outcome.ok) {
    await enter(outcome.value);
    // Still signed in from before: the refusal is news, but not on a login form.
    if (refused !== null) notify(refused, 'error');
    return;
  }
  if (outcome.failure.status === 401) showLogin('');
  else showLogin(outcome.failure.message);
}

void boot();
