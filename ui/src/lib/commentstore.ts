// Where the comments a person wrote on a thread's changes wait until they are sent: this origin's
// storage, one item per thread, so a reload (or the phone putting the tab away) loses none. Sent
// or thrown away, the item goes. Pure but for the storage it is given, for node --test
// (ui/test/changes.test.mjs).

import type { LineComment } from './changes';

type Store = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

/** The item of a thread's unsent comments. */
export function commentsItem(thread: string): string {
  return `vyre_comments:${thread}`;
}

export function origin(): Store | null {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null; // storage disabled: the comments last as long as the page
  }
}

/** One comment as it was kept, when it still is one (an item written by hand, or by an older
 * app, gives what it can). */
function asComment(x: unknown): LineComment | null {
  if (!x || typeof x !== 'object') return null;
  const c = x as Record<string, unknown>;
  if (typeof c.key !== 'string' || typeof c.turn !== 'string' || typeof c.path !== 'string' || typeof c.text !== 'string') return null;
  if ((c.side !== 'new' && c.side !== 'old') || typeof c.line !== 'number' || !Number.isInteger(c.line) || c.line < 1) return null;
  return { key: c.key, turn: c.turn, path: c.path, side: c.side, line: c.line, text: c.text };
}

/** A thread's unsent comments, in the order they were written; none when nothing is kept. */
export function readComments(thread: string, store: Store | null = origin()): LineComment[] {
  let raw: string | null = null;
  try {
    raw = store?.getItem(commentsItem(thread)) ?? null;
  } catch {
    return [];
  }
  if (!raw) return [];
  try {
    const list = JSON.parse(raw);
    return Array.isArray(list) ? list.map(asComment).filter((c): c is LineComment => c !== null) : [];
  } catch {
    return [];
  }
}

/** Keep a thread's unsent comments; none left (sent, or thrown away): the item goes. */
export function keepComments(thread: string, list: LineComment[], store: Store | null = origin()): void {
  if (!store) return;
  try {
    if (list.length) store.setItem(commentsItem(thread), JSON.stringify(list));
    else store.removeItem(commentsItem(thread));
  } catch {
    // Storage full or refused: they still last as long as the page.
  }
}
