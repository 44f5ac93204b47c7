// A question asked in the page, not with the browser's confirm() (which blocks the page, looks
// foreign on every platform, and which some embedders never show): `await confirmAction(...)`
// shows ConfirmDialog and resolves to the choice. One at a time; a second replaces the first,
// which is then declined.

import type { Component } from 'svelte';

export interface Confirm {
  title: string;
  /** Said first, under the title, as a warning: why it is asked again (a watcher rewritten while
   * the person read it). */
  warning?: string;
  body?: string;
  /** Things the person should see before they answer (what a watcher will be given), one a line,
   * under the body: plain text. */
  list?: string[];
  /** Said under the list. */
  after?: string;
  /** More to read before answering, under `after` (what a watcher will run): a component and its
   * props (`part(C, props)`). The question then opens at its top, the button not focused, so
   * the person reads down to it. */
  extra?: Part;
  /** The button that goes ahead. */
  ok: string;
  /** While this says false, the button that goes ahead cannot be pressed (what `extra` shows is
   * still loading: nothing to answer yet). Read in the dialog's template, so it may read state. */
  ready?: () => boolean;
  /** It destroys something: the button says so in red. */
  danger?: boolean;
  /** A choice to tick, unticked at first, under the rest (a rewind's "Also put back the
   * files"): its words. `confirmChecked` says whether it was ticked. */
  check?: string;
  /** Said under the choice while it is ticked. */
  checkNote?: string;
}

/** A component with its props, checked against each other by `part`. */
export interface Part {
  component: Component<any>;
  props: Record<string, unknown>;
}

export function part<P extends Record<string, any>>(component: Component<P>, props: P): Part {
  return { component, props };
}

export const confirming = $state({ open: null as (Confirm & { checked: boolean; answer: (yes: boolean) => void }) | null });

export async function confirmAction(c: Confirm): Promise<boolean> {
  return (await confirmChecked(c)).yes;
}

/** The question, and whether its `check` was ticked when the person went ahead. */
export function confirmChecked(c: Confirm): Promise<{ yes: boolean; checked: boolean }> {
  confirming.open?.answer(false);
  return new Promise((resolve) => {
    confirming.open = {
      ...c,
      checked: false,
      answer: (yes) => {
        const checked = yes && !!confirming.open?.checked;
        confirming.open = null;
        resolve({ yes, checked });
      },
    };
  });
}
