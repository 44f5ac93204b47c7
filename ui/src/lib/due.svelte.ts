// Planner items that fell due and wait for the person (open reminders, alarms and timers): Needs
// shows them above the asks, and the nav counts them with the asks. Loaded with planner.list,
// then kept from the stream: `planner.due` adds one (an alarm beeps when the page is on screen),
// `planner.done` and `planner.changed` (done, snoozed, removed) take it away.

import { call } from './api';
import { beep, primeSound } from './beep';
import { readClock } from './clock.svelte';
import { isDue, lateness, type PlanKind } from './planner';
import { listOpen } from './plannercalls';
import { hub } from './stream';
import type { VyreEvent } from './types';

export interface DueItem {
  id: number;
  kind: PlanKind;
  text: string;
  project: string | null;
  /** When it fell due (ms since the epoch). */
  due_at: number;
  /** How late it was told: more than 0 when it fell due while vyred was down. */
  late_ms: number;
}

export const due = $state({ items: {} as Record<string, DueItem> });

/** The items that fell due, the earliest first. */
export function openDue(): DueItem[] {
  return Object.values(due.items).sort((a, b) => a.due_at - b.due_at || a.id - b.id);
}

/** Take an item out of Needs at once (done or snoozed here; the event follows). */
export function dropDue(id: number): void {
  delete due.items[String(id)];
}

/** An alarm told long ago, replayed after the stream reconnects, does not beep again. */
const FRESH_MS = 60_000;

let wired = false;
let loading: Promise<void> | null = null;
/** Something changed while a load was under way: load once more after it. */
let again = false;

function wire(): void {
  if (wired) return;
  wired = true;
  primeSound();
  hub.subscribe({ types: ['planner.due', 'planner.done', 'planner.changed'] }, (e: VyreEvent) => {
    const p = e.payload as { item: number; kind: PlanKind; text: string; project: string | null; due_at?: number; late_ms?: number; change?: string };
    if (e.type === 'planner.due') {
      if (typeof p.due_at !== 'number' || !isDue({ kind: p.kind, fell_due_at: p.due_at, done_at: null })) return;
      readClock();
      due.items[String(p.item)] = { id: p.item, kind: p.kind, text: p.text, project: p.project ?? null, due_at: p.due_at, late_ms: p.late_ms ?? 0 };
      if (p.kind === 'alarm' && Date.now() - e.at < FRESH_MS) void beep();
    } else if (e.type === 'planner.done' || p.change === 'done' || p.change === 'snoozed' || p.change === 'removed') {
      dropDue(p.item);
    } else if (p.change === 'reopened') {
      // Reopened: due again if it had fallen due before; the list says.
      void loadDue().catch(() => {});
    }
    if (loading) again = true;
  });
}

/** Load the items that fell due once, then keep them from the stream. */
export function loadDue(): Promise<void> {
  wire();
  if (loading) {
    again = true;
    return loading;
  }
  loading = (async () => {
    do {
      again = false;
      await fill();
    } while (again);
  })().finally(() => (loading = null));
  return loading;
}

async function fill(): Promise<void> {
  const open = (await listOpen()).filter(isDue);
  // Whether each fell due while vyred was down is in its `planner.due` event, not the list.
  const late = open.length
    ? await call('system.events', { types: ['planner.due'], limit: 200 })
        .then(lateness)
        .catch(() => new Map<string, number>())
    : new Map<string, number>();
  const next: Record<string, DueItem> = {};
  for (const i of open) {
    const at = i.fell_due_at as number;
    const known = due.items[String(i.id)];
    next[String(i.id)] = {
      id: i.id,
      kind: i.kind,
      text: i.text,
      project: i.project,
      due_at: at,
      late_ms: late.get(`${i.id}:${at}`) ?? (known?.due_at === at ? known.late_ms : 0),
    };
  }
  readClock();
  due.items = next;
}
