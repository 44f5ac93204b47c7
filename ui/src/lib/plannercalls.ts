// The planner's calls to vyred (docs/api.md, `planner.*`), each time in words sent with this
// browser's time zone, so "9am" is the person's 9am wherever vyred runs. The words and lists are
// lib/planner.ts.

import { call, type ToolOutput } from './api';
import type { PlanItem, PlanKind } from './planner';

/** This browser's time zone (an IANA name), sent with every time in words. */
export function zone(): string | undefined {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || undefined;
  } catch {
    return undefined;
  }
}

/** Every item, open ones first (by when they fall due), then the done ones, the last done first. */
export function listItems(): Promise<PlanItem[]> {
  return call('planner.list', { done: true, limit: 500 });
}

/** The open items only (Needs looks among them for the ones that fell due), or one project's. */
export function listOpen(project?: string): Promise<PlanItem[]> {
  return call('planner.list', project ? { limit: 500, project } : { limit: 500 });
}

/** Add an item; `at` in words, left out when empty (a todo or a note needs none). */
export function addItem(text: string, kind: PlanKind, at: string): Promise<PlanItem> {
  return call('planner.add', { text, kind, at: at.trim() || undefined, zone: zone() });
}

export function markDone(item: number, on = true): Promise<PlanItem> {
  return call('planner.done', { item, on });
}

export function snoozeItem(item: number, by = '10m'): Promise<PlanItem> {
  return call('planner.snooze', { item, for: by, zone: zone() });
}

export function removeItem(item: number): Promise<PlanItem> {
  return call('planner.remove', { item });
}

/** Tell vyred the person opened Vyre: reminders set for "when I next open Vyre" fall due. A
 * failure (an older vyred, a refused call) changes nothing on the screen. */
export function openedVyre(): Promise<void> {
  return call('planner.opened', {}).then(
    () => undefined,
    () => undefined,
  );
}

/** The largest calendar file vyred reads (`planner.import`'s `ics`: 2 MiB). */
export const IMPORT_MAX_BYTES = 2 * 1024 * 1024;

export type Imported = ToolOutput<'planner.import'>;

/** Every item, done ones too, as an iCalendar file's text (`ics`). */
export async function exportCalendar(): Promise<string> {
  return (await call('planner.export', { done: true })).ics;
}

/** Add the items of a calendar file; its times without a zone are this browser's. */
export function importCalendar(ics: string): Promise<Imported> {
  return call('planner.import', { ics, zone: zone() });
}
