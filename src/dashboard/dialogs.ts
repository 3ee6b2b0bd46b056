// The two modal dialogs: the shown-once raw key, and the confirmation before
// a destructive action. Both are <dialog> elements from index.html.
import { byId } from './dom.ts';
import type { FirstRequest } from './first-request.ts';

const COPY_FEEDBACK = {
  copied: 'Copied to the clipboard.',
  selected: 'It is selected: press Ctrl+C (or ⌘C) to copy it.',
} as const;

/** What the shown-once dialog calls its secret: an API key, or an admin API token. */
export interface SecretWording {
  title: string;
  label: string;
  forName(name: string): string;
  warning: string;
  hint: string;
}

export const KEY_WORDING: SecretWording = {
  title: 'Copy your new key now',
  label: 'API key',
  forName: (name) => `For the key named “${name}”.`,
  warning: 'You will not see this key again.',
  hint: 'Keep it in a secrets manager or an environment variable; never in code or in a browser app.',
};

export const TOKEN_WORDING: SecretWording = {
  title: 'Copy your new admin API token now',
  label: 'Admin API token',
  forName: (name) => `For the token named “${name}”.`,
  warning: 'You will not see this token again.',
  hint: 'Send it as Authorization: Bearer … to the admin API. Keep it in your CI’s secret store; never in code.',
};

/**
 * Shows a raw key (or admin API token) once, with the API base URL and a first request that
 * carries it. The key lives only in the read-only fields while the dialog is
 * open; closing it (Done, Escape) empties them, so neither the DOM nor this
 * module keeps it afterwards.
 */
interface SecretDialog {
  show(key: string, keyName: string, first: FirstRequest | null, wording?: SecretWording): Promise<void>;
}

// One per page, as the <dialog> elements are: the keys and the tokens views
// share them, and a second set of listeners would copy twice.
let secretDialog: SecretDialog | null = null;
let confirmDialog: ConfirmDialog | null = null;

export function createSecretDialog(): SecretDialog {
  secretDialog ??= buildSecretDialog();
  return secretDialog;
}

function buildSecretDialog(): SecretDialog {
  const dialog = byId('secret-dialog', HTMLDialogElement);
  const field = byId('secret-value', HTMLTextAreaElement);
  const forName = byId('secret-for', HTMLElement);
  const title = byId('secret-title', HTMLElement);
  const label = byId('secret-label', HTMLLabelElement);
  const warning = byId('secret-warning', HTMLElement);
  const hint = byId('secret-hint', HTMLElement);
  const feedback = byId('secret-copy-status', HTMLElement);
  const done = byId('secret-done', HTMLButtonElement);
  const firstBlock = byId('secret-first', HTMLElement);
  const baseUrl = byId('secret-base-url', HTMLInputElement);
  const curl = byId('secret-curl', HTMLTextAreaElement);
  const curlBlock = byId('secret-curl-block', HTMLElement);
  const curlNote = byId('secret-curl-note', HTMLElement);
  let closed: (() => void) | null = null;

  for (const [input, button] of [
    [field, 'secret-copy'],
    [baseUrl, 'secret-base-url-copy'],
    [curl, 'secret-curl-copy'],
  ] as const) {
    input.addEventListener('focus', () => input.select());
    byId(button, HTMLButtonElement).addEventListener('click', () => {
      void copyFrom(input);
    });
  }
  // The key leaves the page the moment the dialog is dismissed. The close event
  // comes a task later (the dialog is already hidden by then), so Done clears
  // first; the close handler covers Escape.
  const forget = (): void => {
    field.value = '';
    baseUrl.value = '';
    curl.value = '';
    curlNote.textContent = '';
    firstBlock.hidden = true;
    forName.textContent = '';
    feedback.textContent = '';
  };
  done.addEventListener('click', () => {
    forget();
    dialog.close();
  });
  dialog.addEventListener('cancel', forget);
  dialog.addEventListener('close', () => {
    forget();
    const resolve = closed;
    closed = null;
    resolve?.();
  });

  async function copyFrom(input: HTMLInputElement | HTMLTextAreaElement): Promise<void> {
    const value = input.value;
    if (value === '') return;
    try {
      await navigator.clipboard.writeText(value);
      feedback.textContent = COPY_FEEDBACK.copied;
    } catch {
      // No clipboard permission (or not a secure context): leave the text
      // selected so the operator's own copy shortcut works.
      input.focus();
      input.select();
      feedback.textContent = COPY_FEEDBACK.selected;
    }
  }

  return {
    show(key, keyName, first, wording = KEY_WORDING) {
      field.value = key;
      title.textContent = wording.title;
      label.textContent = wording.label;
      warning.textContent = wording.warning;
      hint.textContent = wording.hint;
      forName.textContent = wording.forName(keyName);
      feedback.textContent = '';
      firstBlock.hidden = first === null;
      baseUrl.value = first?.baseUrl ?? '';
      curl.value = first?.curl ?? '';
      curlBlock.hidden = first?.curl == null;
      curlNote.textContent =
        first === null ? '' : first.alias === null ? 'This key may use none of the configured aliases, so there is no request to try yet.' : `It asks the alias “${first.alias}”; the answer counts towards this key’s usage.`;
      dialog.showModal();
      field.focus();
      field.select();
      return new Promise<void>((resolve) => {
        closed = resolve;
      });
    },
  };
}

interface ConfirmRequest {
  title: string;
  body: string;
  confirmLabel: string;
}

interface ConfirmDialog {
  ask(request: ConfirmRequest): Promise<boolean>;
}

/** A styled confirmation; resolves true only on the confirm button. */
export function createConfirmDialog(): ConfirmDialog {
  confirmDialog ??= buildConfirmDialog();
  return confirmDialog;
}

function buildConfirmDialog(): ConfirmDialog {
  const dialog = byId('confirm-dialog', HTMLDialogElement);
  const title = byId('confirm-title', HTMLElement);
  const body = byId('confirm-body', HTMLElement);
  const ok = byId('confirm-ok', HTMLButtonElement);
  const cancel = byId('confirm-cancel', HTMLButtonElement);
  let answer: ((confirmed: boolean) => void) | null = null;

  ok.addEventListener('click', () => dialog.close('confirm'));
  cancel.addEventListener('click', () => dialog.close('cancel'));
  dialog.addEventListener('close', () => {
    const resolve = answer;
    answer = null;
    resolve?.(dialog.returnValue === 'confirm');
  });

  return {
    ask(request) {
      title.textContent = request.title;
      body.textContent = request.body;
      ok.textContent = request.confirmLabel;
      dialog.returnValue = '';
      dialog.showModal();
      // The safe choice has the focus, so Enter does not destroy anything.
      cancel.focus();
      return new Promise<boolean>((resolve) => {
        answer = resolve;
      });
    },
  };
}
