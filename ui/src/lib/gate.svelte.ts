// The Gate's items this page knows, for every surface at once (Needs, the nav's count, a chat,
// Lumen): the held ones loaded with `gate.held`, a thread's decided ones too when its chat opens,
// then kept from the stream (`gate.*`, lib/gate.ts folds them). A new item's event carries no
// content: its thread's held items are listed again. Only this machine's: a paired box's Gate is
// the box's.

import { call } from './api';
import { loadTitles } from './app.svelte';
import { decide, foldGate, isOpen, mergeItem, ofThread, openHeld, type GateItem } from './gate';
import { hub } from './stream';
import type { VyreEvent } from './types';

export const gate = $state({ items: {} as Record<string, GateItem> });

/** The items still held, oldest first. */
export function heldItems(): GateItem[] {
  return openHeld(gate.items);
}

/** One thread's items, decided ones too, oldest first. */
export function threadGate(thread: string): GateItem[] {
  return ofThread(gate.items, thread);
}

/** A decision made here, shown at once. */
export function settle(item: string, state: 'approved' | 'rejected' | 'withdrawn', how: { edited?: string | null; why?: string | null } = {}): void {
  decide(gate.items, item, state, how);
}

let wired = false;

function wire(): void {
  if (wired) return;
  wired = true;
  hub.subscribe({ types: ['gate.*'] }, (e: VyreEvent) => {
    const { load } = foldGate(gate.items, e);
    if (load) void list({ thread: load }).catch(() => {});
  });
}

async function list(input: { thread?: string; all?: boolean }): Promise<void> {
  const items = await call('gate.held', { ...input, limit: 500 });
  for (const i of items) mergeItem(gate.items, i);
  // Needs and Lumen name each item's session.
  if (items.some((i) => isOpen(i))) void loadTitles(items.map((i) => i.thread)).catch(() => {});
}

/** Every held item (Needs, Lumen, the nav's count), then kept from the stream. */
export async function loadGate(): Promise<void> {
  wire();
  await list({});
}

/** A thread's items, decided ones too (its chat), then kept from the stream. */
export async function loadThreadGate(thread: string): Promise<void> {
  wire();
  await list({ thread, all: true });
}
