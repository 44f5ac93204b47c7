// The planner (issue 23): reminders, alarms, timers, todos and notes. Which items go in which
// list, and the words for when: "today 15:20", "in 5 min", "due 2 min ago", "was due at 14:20
// while Vyre was off". Pure, for node --test (ui/test/planner.test.mjs); the words take the time
// zone so a test can pin it. The calls to vyred are lib/plannercalls.ts.

import type { components } from './openapi/generated';

/** An item as `planner.list` (and every planner tool) answers it. */
export type PlanItem = components['schemas']['planner.list.Item'];
export type PlanKind = PlanItem['kind'];

/** The kinds, in the order the picker offers them. */
export const KINDS: { kind: PlanKind; label: string }[] = [
  { kind: 'reminder', label: 'Reminder' },
  { kind: 'todo', label: 'Todo' },
  { kind: 'note', label: 'Note' },
  { kind: 'alarm', label: 'Alarm' },
  { kind: 'timer', label: 'Timer' },
];

export function kindLabel(kind: string): string {
  return KINDS.find((k) => k.kind === kind)?.label ?? kind;
}

/** The kinds that tell the person when they fall due (Needs shows them). */
const TELLS = new Set<string>(['reminder', 'alarm', 'timer']);

/** How long "Snooze" puts an item off, in vyred's words, and how the app says it ("tomorrow"
 * alone is 09:00 to vyred). */
export const SNOOZES: { for: string; label: string }[] = [
  { for: '10m', label: 'in 10 min' },
  { for: '1h', label: 'in 1 hour' },
  { for: 'tomorrow', label: 'tomorrow 09:00' },
];

// ---- Lists ----

/** An item that fell due and waits for the person: an open reminder, alarm or timer told. */
export function isDue(i: Pick<PlanItem, 'kind' | 'fell_due_at' | 'done_at'>): boolean {
  return TELLS.has(i.kind) && i.fell_due_at !== null && i.done_at === null;
}

export interface PlanLists {
  /** Open items with a time, soonest first, then those for the next opening of Vyre. */
  coming: PlanItem[];
  /** Todos without a time, in the order they were added. */
  todo: PlanItem[];
  notes: PlanItem[];
  /** The last done first. */
  done: PlanItem[];
}

/** The Planner's lists from `planner.list`'s items. */
export function plan(items: PlanItem[]): PlanLists {
  const open = items.filter((i) => i.done_at === null);
  return {
    // A reminder for "when I next open Vyre" has no time: it comes after those that do.
    coming: open
      .filter((i) => i.due_at !== null || i.on_open)
      .sort((a, b) => (a.due_at ?? Infinity) - (b.due_at ?? Infinity) || a.id - b.id),
    todo: open.filter((i) => i.due_at === null && !i.on_open && i.kind !== 'note').sort((a, b) => a.id - b.id),
    notes: open.filter((i) => i.due_at === null && i.kind === 'note').sort((a, b) => a.id - b.id),
    done: items.filter((i) => i.done_at !== null).sort((a, b) => (b.done_at ?? 0) - (a.done_at ?? 0)),
  };
}

/** How late each item fell due, when vyred was down then (`planner.due`'s `late_ms`), from the
 * events `system.events` answers: by `item:due_at`, only the late ones. A list says when an item
 * fell due but not whether vyred was down then; the event says it. */
export function lateness(events: { type: string; payload: unknown }[]): Map<string, number> {
  const late = new Map<string, number>();
  for (const e of events) {
    const p = e.payload as { item?: unknown; due_at?: unknown; late_ms?: unknown } | null;
    if (e.type !== 'planner.due' || !p || typeof p.item !== 'number' || typeof p.due_at !== 'number') continue;
    if (typeof p.late_ms === 'number' && p.late_ms > 0) late.set(`${p.item}:${p.due_at}`, p.late_ms);
  }
  return late;
}

// ---- Words for when ----

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const formats = new Map<string, Intl.DateTimeFormat>();
/** The day, weekday, month and clock of `ms` in `zone` (the browser's when none). */
function local(ms: number, zone?: string): { day: number; year: number; weekday: string; date: number; month: string; time: string } {
  const key = zone ?? '';
  let f = formats.get(key);
  if (!f) {
    // Numbers, a short weekday ("Thu") and a 24-hour clock; the month's name is the app's own
    // (ICU's English names vary: "Sep", "Sept"). The app's words are English.
    f = new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    formats.set(key, f);
  }
  const p: Record<string, string> = {};
  for (const part of f.formatToParts(ms)) p[part.type] = part.value;
  const year = Number(p.year);
  const month = Number(p.month) - 1;
  const date = Number(p.day);
  return {
    // Days counted on the calendar, so "tomorrow" is the next date, whatever the hour.
    day: Math.round(Date.UTC(year, month, date) / DAY),
    year,
    weekday: p.weekday,
    date,
    month: MONTHS[month],
    time: `${p.hour}:${p.minute}`,
  };
}

/** When, as a person says it: "today 15:20", "tomorrow 09:00", "yesterday 18:00", else
 * "Thu 24 Dec 18:00" (with the year when it is most of a year away). */
export function whenWords(ms: number, now = Date.now(), zone?: string): string {
  const at = local(ms, zone);
  const today = local(now, zone);
  const days = at.day - today.day;
  if (days === 0) return `today ${at.time}`;
  if (days === 1) return `tomorrow ${at.time}`;
  if (days === -1) return `yesterday ${at.time}`;
  const year = Math.abs(days) > 300 ? ` ${at.year}` : '';
  return `${at.weekday} ${at.date} ${at.month}${year} ${at.time}`;
}

/** How long until `ms`: "in 5 min", "in 2 h", "in 1 h 20 min", "in 3 days"; "now" once it is. */
export function untilWords(ms: number, now = Date.now()): string {
  const left = ms - now;
  if (left <= 0) return 'now';
  const mins = Math.ceil(left / MIN);
  if (mins < 60) return `in ${mins} min`;
  if (left < DAY) {
    const h = Math.floor(left / HOUR);
    const m = Math.round((left - h * HOUR) / MIN);
    if (m === 60) return `in ${h + 1} h`;
    return m && h < 3 ? `in ${h} h ${m} min` : `in ${h} h`;
  }
  const d = Math.round(left / DAY);
  return d === 1 ? 'in 1 day' : `in ${d} days`;
}

/** What Needs says of an item that fell due at `dueAt`: "due just now", "due 2 min ago", "due
 * 3 h ago", "due yesterday 09:00"; or, when it fell due while vyred was down (`lateMs` > 0),
 * "was due at 14:20 while Vyre was off". */
export function dueWords(dueAt: number, now = Date.now(), lateMs = 0, zone?: string): string {
  if (lateMs > 0) {
    const when = whenWords(dueAt, now, zone);
    return when.startsWith('today ') ? `was due at ${when.slice(6)} while Vyre was off` : `was due ${when} while Vyre was off`;
  }
  const ago = now - dueAt;
  if (ago < MIN) return 'due just now';
  if (ago < HOUR) return `due ${Math.floor(ago / MIN)} min ago`;
  if (ago < 12 * HOUR) return `due ${Math.floor(ago / HOUR)} h ago`;
  return `due ${whenWords(dueAt, now, zone)}`;
}
