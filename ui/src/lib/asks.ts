// The ask card's keys and what it shows of an edit. Keys: y allows, n denies, r denies with a
// reason, a answers "Always in project"; a question's options are 1-9 and y (or Enter) sends.
// Only one card takes keys at a time (the oldest open one on the page), and never while the
// person types in a field. The pure parts are tested by node --test (ui/test/asks.test.mjs).

export type KeyAction =
  | { action: 'allow' | 'deny' | 'always' | 'reason' | 'answer' }
  | { action: 'pick'; option: number };

/** What a card can do now, as far as its keys care. */
export interface KeyCard {
  /** AskUserQuestion's card: options and an Answer button. */
  asking: boolean;
  /** "Always in project" is offered (it would write something). */
  always: boolean;
  /** How many options the current question has. */
  options: number;
  /** Every question has an answer. */
  ready: boolean;
}

/** The action a key press means for a card, if any. */
export function keyAction(key: string, c: KeyCard): KeyAction | null {
  const k = key.length === 1 ? key.toLowerCase() : key;
  if (c.asking) {
    if (/^[1-9]$/.test(k) && Number(k) <= c.options) return { action: 'pick', option: Number(k) - 1 };
    if ((k === 'y' || k === 'Enter') && c.ready) return { action: 'answer' };
    if (k === 'n') return { action: 'deny' };
    return null;
  }
  if (k === 'y') return { action: 'allow' };
  if (k === 'n') return { action: 'deny' };
  if (k === 'r') return { action: 'reason' };
  if (k === 'a' && c.always) return { action: 'always' };
  return null;
}

/** Whether a key press goes to a text field (or a control that takes keys), not to a card. */
export function typing(el: { tagName?: string; isContentEditable?: boolean } | null | undefined): boolean {
  if (!el) return false;
  const tag = (el.tagName ?? '').toUpperCase();
  return el.isContentEditable === true || tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT';
}

/** The file change an ask would make, as `<Diff>` takes it: an Edit's old and new text, a
 *  MultiEdit's edits in order, or a Write's content as all new. */
export interface Change {
  path: string;
  old: string;
  new: string;
  /** A MultiEdit's edits (then old and new are empty). */
  edits: { old_string: string; new_string: string }[] | null;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The change of an Edit, MultiEdit, Write or NotebookEdit call; null for other tools. */
export function changeOf(tool: string, input: Record<string, any> | null): Change | null {
  if (!input) return null;
  const path = str(input.file_path) || str(input.notebook_path);
  switch (tool) {
    case 'Edit':
      return { path, old: str(input.old_string), new: str(input.new_string), edits: null };
    case 'MultiEdit': {
      const edits = (Array.isArray(input.edits) ? input.edits : []).map((e: any) => ({ old_string: str(e?.old_string), new_string: str(e?.new_string) }));
      return edits.length ? { path, old: '', new: '', edits } : null;
    }
    case 'Write':
      return { path, old: '', new: str(input.content), edits: null };
    case 'NotebookEdit':
      return { path, old: '', new: str(input.new_source), edits: null };
    default:
      return null;
  }
}

/** The words of an answered card's one line. */
export function outcomeLabel(outcome: string, asking: boolean): string {
  if (asking) return outcome === 'allow' ? 'Answered' : outcome === 'cancelled' ? 'Withdrawn' : 'Dismissed';
  switch (outcome) {
    case 'allow':
      return 'Allowed';
    case 'always':
      return 'Always allowed in this project';
    case 'deny':
      return 'Denied';
    case 'cancelled':
      return 'Withdrawn';
    default:
      return outcome;
  }
}

// ---- which card has the keys ----

type Handler = (e: KeyboardEvent) => boolean;
const cards: { id: symbol; handle: Handler }[] = [];
const listeners = new Set<() => void>();
let wired = false;

function onkey(e: KeyboardEvent): void {
  if (e.defaultPrevented || e.isComposing || e.ctrlKey || e.metaKey || e.altKey) return;
  if (typing(e.target as HTMLElement | null)) return;
  const first = cards[0];
  if (first && first.handle(e)) e.preventDefault();
}

/** Give a card the keys when it is the oldest open one; returns its release. */
export function takeKeys(handle: Handler): { id: symbol; release: () => void } {
  const id = Symbol('ask');
  cards.push({ id, handle });
  if (!wired && typeof window !== 'undefined') {
    wired = true;
    window.addEventListener('keydown', onkey);
  }
  for (const f of listeners) f();
  return {
    id,
    release: () => {
      const i = cards.findIndex((c) => c.id === id);
      if (i >= 0) cards.splice(i, 1);
      for (const f of listeners) f();
    },
  };
}

/** Whether the card `id` has the keys now. */
export function hasKeys(id: symbol | null): boolean {
  return !!id && cards[0]?.id === id;
}

/** Call `f` whenever the card with the keys may have changed. */
export function onKeysMoved(f: () => void): () => void {
  listeners.add(f);
  return () => listeners.delete(f);
}
