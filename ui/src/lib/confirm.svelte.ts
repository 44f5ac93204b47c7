// A question asked in the page, not with the browser's confirm() (which blocks the page, looks
// foreign on every platform, and which some embedders never show): `await confirmAction(...)`
// shows ConfirmDialog and resolves to the choice. One at a time; a second replaces the first,
// which is then declined.

export interface Confirm {
  title: string;
  body?: string;
  /** Things the person should see before they answer (what a watcher will be given), one a line,
   * under the body: plain text. */
  list?: string[];
  /** Said under the list. */
  after?: string;
  /** The button that goes ahead. */
  ok: string;
  /** It destroys something: the button says so in red. */
  danger?: boolean;
}

export const confirming = $state({ open: null as (Confirm & { answer: (yes: boolean) => void }) | null });

export function confirmAction(c: Confirm): Promise<boolean> {
  confirming.open?.answer(false);
  return new Promise((resolve) => {
    confirming.open = {
      ...c,
      answer: (yes) => {
        confirming.open = null;
        resolve(yes);
      },
    };
  });
}
