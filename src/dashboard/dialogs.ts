// The two modal dialogs: the shown-once raw key, and the confirmation before
// a destructive action. Both are <dialog> elements from index.html.
import { byId } from './dom.ts';

const COPY_FEEDBACK = {
  copied: 'Copied to the clipboard.',
  selected: 'The key is selected: press Ctrl+C (or ⌘C) to copy it.',
} as const;

/**
 * Shows a raw key once. The string lives only in the read-only field while the
 * dialog is open; closing it (Done, Escape) empties the field, so neither the
 * DOM nor this module keeps it afterwards.
 */
export function createSecretDialog(): { show(key: string, keyName: string): Promise<void> } {
  const dialog = byId('secret-dialog', HTMLDialogElement);
  const field = byId('secret-value', HTMLTextAreaElement);
  const forName = byId('secret-for', HTMLElement);
  const copy = byId('secret-copy', HTMLButtonElement);
  const feedback = byId('secret-copy-status', HTMLElement);
  const done = byId('secret-done', HTMLButtonElement);
  let closed: (() => void) | null = null;

  const selectKey = (): void => {
    field.focus();
    field.select();
  };
  field.addEventListener('focus', () => field.select());
  copy.addEventListener('click', () => {
    void copyKey();
  });
  // The key leaves the page the moment the dialog is dismissed. The close event
  // comes a task later (the dialog is already hidden by then), so Done clears
  // first; the close handler covers Escape.
  const forget = (): void => {
    field.value = '';
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

  async function copyKey(): Promise<void> {
    const value = field.value;
    if (value === '') return;
    try {
      await navigator.clipboard.writeText(value);
      feedback.textContent = COPY_FEEDBACK.copied;
    } catch {
      // No clipboard permission (or not a secure context): leave the key
      // selected so the operator's own copy shortcut works.
      selectKey();
      feedback.textContent = COPY_FEEDBACK.selected;
    }
  }

  return {
    show(key, keyName) {
      field.value = key;
      forName.textContent = `For the key named “${keyName}”.`;
      feedback.textContent = '';
      dialog.showModal();
      selectKey();
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

/** A styled confirmation; resolves true only on the confirm button. */
export function createConfirmDialog(): { ask(request: ConfirmRequest): Promise<boolean> } {
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
