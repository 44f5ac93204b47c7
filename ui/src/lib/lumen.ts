// Lumen, the Mac app's capsule (420 by 640, on a shortcut), has a view of its own at /app/lumen:
// one line to the assistant, the last exchange of its Lumen conversation, and what needs you.
// Pure: no DOM, no fetch, so node --test covers it (ui/test/lumen.test.mjs).

// Types only: main.ts imports this file, and the chat's code stays out of the first chunk.
import type { ChatState, Item, NoticeItem, TextItem, TimelinePage, ToolItem } from './chat';
import type { ThreadInfo } from './types';

/** Where the Mac app loads Lumen: vyred serves index.html for any path under /app/. */
export const LUMEN_PATH = '/app/lumen';

/** The purpose Lumen's thread is started with (its model is the `capsule` purpose's). */
export const LUMEN_PURPOSE = 'capsule';

export function isLumen(pathname: string): boolean {
  return pathname.replace(/\/+$/, '') === LUMEN_PATH;
}

/** The Lumen conversation: the assistant's newest thread started for Lumen, if any. */
export function lumenThread(threads: Pick<ThreadInfo, 'thread' | 'purpose' | 'created_at'>[]): string | null {
  let best: Pick<ThreadInfo, 'thread' | 'purpose' | 'created_at'> | null = null;
  for (const t of threads) if (t.purpose === LUMEN_PURPOSE && (!best || t.created_at > best.created_at)) best = t;
  return best?.thread ?? null;
}

/** What Lumen shows of its conversation: the last message sent and what came back since. */
export interface Exchange {
  asked: string | null;
  /** A message just sent that no event has confirmed yet. */
  sending: boolean;
  failed: boolean;
  texts: TextItem[];
  /** The turn's latest tool call: what it is doing now, or did last. */
  tool: ToolItem | null;
  notices: NoticeItem[];
  /** What to show, in order: the texts and notices, and the latest tool call where it came. */
  rows: (TextItem | ToolItem | NoticeItem)[];
}

export function exchange(items: Item[]): Exchange {
  let start = -1;
  for (let i = items.length - 1; i >= 0; i--) {
    if (items[i].kind === 'user') {
      start = i;
      break;
    }
  }
  const out: Exchange = { asked: null, sending: false, failed: false, texts: [], tool: null, notices: [], rows: [] };
  const user = start >= 0 ? items[start] : null;
  if (user?.kind === 'user') {
    out.asked = user.text;
    out.sending = user.status === 'sending';
    out.failed = user.status === 'failed';
  }
  for (const it of items.slice(start + 1)) {
    if (it.kind === 'assistant') out.texts.push(it);
    else if (it.kind === 'tool') out.tool = it;
    else if (it.kind === 'notice') out.notices.push(it);
    else continue;
    out.rows.push(it);
  }
  if (out.tool) out.rows = out.rows.filter((r) => r.kind !== 'tool' || r === out.tool);
  return out;
}

/** Lumen stays open for days: keep the last exchange only (the last message, its replies, its
 * newest tool rows), so its memory does not grow with the conversation. */
export function prune(s: Pick<ChatState, 'items'>, keep = 40): void {
  if (s.items.length <= keep) return;
  let start = -1;
  for (let i = s.items.length - 1; i >= 0; i--) {
    if (s.items[i].kind === 'user') {
      start = i;
      break;
    }
  }
  let rest = s.items.slice(start + 1);
  // A long turn: its texts stay, the older of its other rows go.
  let extra = rest.length + (start >= 0 ? 1 : 0) - keep;
  if (extra > 0) rest = rest.filter((it) => it.kind === 'assistant' || extra-- <= 0);
  s.items = start >= 0 ? [s.items[start], ...rest] : rest;
}

// ---- Where the assistant is: this Mac, or a paired box ----

/** Where Lumen's assistant is: this machine (null) or a paired box, by its pairing id. A box's
 * events, link and reach are lib/boxes.ts's. */
export type Place = string | null;

/** Where this origin remembers the choice across Lumen's openings. */
export const PLACE_ITEM = 'vyre_lumen_place';

type Store = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

function storage(): Store | null {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null; // storage disabled: the choice lasts for this page
  }
}

export function rememberedPlace(store: Store | null = storage()): Place {
  return store?.getItem(PLACE_ITEM) || null;
}

export function rememberPlace(place: Place, store: Store | null = storage()): void {
  if (!store) return;
  if (place) store.setItem(PLACE_ITEM, place);
  else store.removeItem(PLACE_ITEM);
}

// ---- Which provider a new conversation runs on ----

/** Where this origin remembers the provider a new Lumen conversation runs on ('' or none: the
 * one Settings give Lumen's purpose, `capsule`). */
export const PROVIDER_ITEM = 'vyre_lumen_provider';

export function rememberedProvider(store: Store | null = storage()): string {
  return store?.getItem(PROVIDER_ITEM) || '';
}

export function rememberProvider(provider: string, store: Store | null = storage()): void {
  if (!store) return;
  if (provider) store.setItem(PROVIDER_ITEM, provider);
  else store.removeItem(PROVIDER_ITEM);
}

/** `threads.start`'s `provider` for a new conversation: the one chosen, when the assistant's
 * Vyre runs it; else none, so Settings' choice for Lumen holds. */
export function startProvider(chosen: string, offered: readonly { name: string }[]): string | undefined {
  return chosen && offered.some((p) => p.name === chosen) ? chosen : undefined;
}

/** The choice Lumen offers: here first, then each paired box as "On <its name>". */
export function placeChoices(boxes: Record<string, { name: string }>): { place: Place; label: string }[] {
  return [{ place: null, label: 'Here' }, ...Object.entries(boxes).map(([id, b]) => ({ place: id, label: `On ${b.name}` }))];
}

/** The key of the message a conversation starts with, until the thread has it (threads.start
 * takes no uuid, so its item in the timeline has another key). */
export const START_KEY = 'start:';

/** Before a page of the timeline asked again is loaded: the starting message gives way once the
 * page holds a message of the person's (else loadPage would keep it, unconfirmed, last). */
export function settleStart(s: Pick<ChatState, 'items'>, page: Pick<TimelinePage, 'items'>): void {
  if (!page.items.some((i) => i.kind === 'user' && i.via !== 'internal')) return;
  s.items = s.items.filter((i) => !(i.kind === 'user' && i.status === 'sending' && i.key.startsWith(START_KEY)));
}
