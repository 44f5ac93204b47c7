// The Gate's held items (spec 7.7: nothing goes out as the person until they have seen the final
// words and where they go), as the app shows them: their words, their order, and the one function
// that folds `gate.*` events into what is known. Pure: no DOM, no fetch, so node --test covers it
// (ui/test/gate.test.mjs). lib/gate.svelte.ts keeps the items in a $state and loads them.

import type { VyreEvent } from './types';
import type { components } from './openapi/generated';

/** A held item as `gate.held` lists it (generated from vyred's published schema). */
export type GateItem = components['schemas']['gate.held.Item'];
export type GateKind = GateItem['kind'];

/** What a kind of item does to the person, said on its card. */
export function kindLabel(kind: string): string {
  switch (kind) {
    case 'send':
      return 'Sends as you';
    case 'spend':
      return 'Spends money';
    case 'delete':
      return 'Deletes outside the folder';
    default:
      return 'Held';
  }
}

/** Still waiting on the person: `held`, or being decided at this moment (`deciding`, vyred's own). */
export function isOpen(item: Pick<GateItem, 'state'>): boolean {
  return item.state === 'held' || item.state === 'deciding';
}

/** The one line a decided item folds to; null while it is held. */
export function outcomeLine(item: Pick<GateItem, 'state' | 'edited' | 'why'>): string | null {
  const why = item.why?.trim();
  switch (item.state) {
    case 'approved':
      return item.edited !== null ? 'Approved with your edit' : 'Approved';
    case 'rejected':
      return why ? `Rejected: ${why}` : 'Rejected';
    case 'withdrawn':
      return why ? `Withdrawn: ${why}` : 'Withdrawn';
    default:
      return null;
  }
}

/** Oldest first; ties by id, so the order never flickers. */
function byAge(a: GateItem, b: GateItem): number {
  return a.at - b.at || (a.item < b.item ? -1 : a.item > b.item ? 1 : 0);
}

/** The items still held, oldest first: what Needs and Lumen show above the asks. */
export function openHeld(items: Record<string, GateItem>): GateItem[] {
  return Object.values(items).filter(isOpen).sort(byAge);
}

/** One thread's items, decided ones too, oldest first: what its chat shows. */
export function ofThread(items: Record<string, GateItem>, thread: string): GateItem[] {
  return Object.values(items)
    .filter((i) => i.thread === thread)
    .sort(byAge);
}

/**
 * `next` (a list's answer) in place of what is known of the item: a decision is never undone
 * by a list read before it (the list was asked while it was held, the decision's event came
 * first). What the person edited here is kept when the list has not caught up.
 */
export function mergeItem(items: Record<string, GateItem>, next: GateItem): void {
  const cur = items[next.item];
  if (cur && !isOpen(cur) && isOpen(next)) return;
  items[next.item] = cur && cur.edited !== null && next.edited === null && next.state === 'approved' ? { ...next, edited: cur.edited } : next;
}

/** A decision made on this page, shown at once (its event says the same a moment later). */
export function decide(items: Record<string, GateItem>, id: string, state: 'approved' | 'rejected' | 'withdrawn', how: { edited?: string | null; why?: string | null; at?: number } = {}): void {
  const cur = items[id];
  if (!cur || (!isOpen(cur) && cur.state !== state)) return;
  items[id] = {
    ...cur,
    state,
    edited: how.edited !== undefined ? how.edited : cur.edited,
    why: how.why !== undefined ? how.why : cur.why,
    decided_at: cur.decided_at ?? how.at ?? Date.now(),
  };
}

/**
 * One `gate.*` event folded into `items`. A decision (`gate.approved`, `gate.rejected`,
 * `gate.withdrawn`) changes a known item in place; `gate.held` carries no content (the final
 * words can be long), so the thread to read it from is returned, for the caller to list.
 */
export function foldGate(items: Record<string, GateItem>, e: VyreEvent): { load: string | null } {
  const p = e.payload as { item?: string; edited?: boolean; why?: string | null };
  if (!p?.item) return { load: null };
  switch (e.type) {
    case 'gate.held':
      return { load: items[p.item] ? null : e.thread };
    case 'gate.approved':
      // The words themselves are in the list (`edited`); an edit from elsewhere is said as one.
      decide(items, p.item, 'approved', { edited: p.edited ? (items[p.item]?.edited ?? '') : null, at: e.at });
      break;
    case 'gate.rejected':
      decide(items, p.item, 'rejected', { why: p.why ?? null, at: e.at });
      break;
    case 'gate.withdrawn':
      decide(items, p.item, 'withdrawn', { why: p.why ?? null, at: e.at });
      break;
  }
  return { load: null };
}

/** What an edit starts from: the field's text in the call's input (a string field; anything
 * else as JSON). */
export function editable(item: Pick<GateItem, 'field' | 'input'>): string {
  if (!item.field) return '';
  const v = (item.input as Record<string, unknown> | null)?.[item.field];
  if (typeof v === 'string') return v;
  return v === undefined || v === null ? '' : JSON.stringify(v, null, 2);
}

/** vyred masks what looks like a credential before the app sees it (`…[redacted]`): an edit
 * that still holds the mask would send the mask, not the secret. */
export function holdsMask(text: string): boolean {
  return text.includes('[redacted');
}

/** A tool row in the chat, as `placeHeld` reads it. */
export interface Row {
  key: string;
  kind: string;
  call?: string | null;
}

/**
 * Where each of a thread's items shows in its chat: after the tool row of the call it holds, or
 * at the end when that row is not there. `older`: the timeline has older pages not loaded; a
 * decided item whose row is not loaded belongs up there and is left out (one still held always
 * shows: it waits on the person).
 */
export function placeHeld<T extends Row>(rows: T[], items: GateItem[], older = false): { after: Map<string, GateItem[]>; end: GateItem[] } {
  const byCall = new Map<string, string>();
  for (const r of rows) if (r.kind === 'tool' && r.call) byCall.set(r.call, r.key);
  const after = new Map<string, GateItem[]>();
  const end: GateItem[] = [];
  for (const i of items) {
    const key = byCall.get(i.call);
    if (key !== undefined) after.set(key, [...(after.get(key) ?? []), i]);
    else if (isOpen(i) || !older) end.push(i);
  }
  return { after, end };
}
