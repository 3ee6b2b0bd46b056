// Dashboard entry point: session state, login and first password, the two
// sections (keys, aliases) behind #keys and #aliases, logout.
import { adminApi, setCsrfToken, whenSessionLost } from './api.ts';
import type { ApiFailure, Session } from './admin-model.ts';
import { createAliasesView } from './aliases-view.ts';
import { byId } from './dom.ts';
import { createKeysView } from './keys-view.ts';

const View = {
  loading: 'view-loading',
  login: 'view-login',
  setPassword: 'view-set-password',
  keys: 'view-keys',
  aliases: 'view-aliases',
} as const;
type View = (typeof View)[keyof typeof View];

const SECTION_BY_HASH: Record<string, View> = { '#keys': View.keys, '#aliases': View.aliases };

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

function showView(view: View): void {
  for (const id of Object.values(View)) byId(id, HTMLElement).hidden = id !== view;
  const inApp = view === View.keys || view === View.aliases;
  nav.hidden = !inApp;
  logoutButton.hidden = !(inApp || view === View.setPassword);
  for (const link of nav.querySelectorAll('a')) {
    if (SECTION_BY_HASH[link.hash] === view) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

async function showSection(): Promise<void> {
  const view = SECTION_BY_HASH[location.hash] ?? View.keys;
  showView(view);
  if (view === View.keys) await keysView.load();
  else await aliasesView.load();
}

async function enter(session: Session): Promise<void> {
  setCsrfToken(session.csrfToken);
  signedIn = true;
  if (session.mustSetPassword) {
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
  for (const dialog of document.querySelectorAll('dialog')) if (dialog.open) dialog.close();
  loginError.textContent = '';
  notify(message);
  showView(View.login);
  loginPassword.focus();
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

async function boot(): Promise<void> {
  const outcome = await adminApi.session();
  if (outcome.ok) {
    await enter(outcome.value);
    return;
  }
  if (outcome.failure.status === 401) showLogin('');
  else showLogin(outcome.failure.message);
}

void boot();
