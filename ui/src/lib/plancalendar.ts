// The Planner's calendar (PlanCalendar, PlanMonth): a month as weeks that start on Monday, the
// items by the day they fall due, and the keys that move the picked day. Days are the person's:
// an item's day is the date of its `due_at` in the browser's time zone (a test passes one). A day
// is named by its date, "2026-12-24", never by an instant, so a change of the clocks (a day of 23
// or 25 hours) cannot shift one. Pure, for node --test (ui/test/planner.test.mjs).

import type { PlanItem } from './planner.js';

/** A month: `month` 0 (January) to 11. */
export interface Month {
  year: number;
  month: number;
}

/** One day of the grid; `inMonth` false for the days of the months before and after that fill
 * its first and last weeks. */
export interface Day {
  key: string;
  year: number;
  month: number;
  date: number;
  inMonth: boolean;
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
/** Monday first: the grid's columns. */
export const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];

const pad = (n: number) => String(n).padStart(2, '0');

/** "2026-12-24" for the 24th of December 2026 (`month` 0 to 11; out of range rolls over). */
export function keyOf(year: number, month: number, date: number): string {
  const d = new Date(Date.UTC(year, month, date));
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

export function parseKey(key: string): { year: number; month: number; date: number } {
  const [y, m, d] = key.split('-').map(Number);
  return { year: y, month: m - 1, date: d };
}

/** The calendar's arithmetic is on dates at UTC midnight, where no clock ever changes. */
function utc(key: string): number {
  const { year, month, date } = parseKey(key);
  return Date.UTC(year, month, date);
}

export function addDays(key: string, n: number): string {
  const { year, month, date } = parseKey(key);
  return keyOf(year, month, date + n);
}

/** 0 for Monday … 6 for Sunday. */
export function weekday(key: string): number {
  return (new Date(utc(key)).getUTCDay() + 6) % 7;
}

export function monthOf(key: string): Month {
  const { year, month } = parseKey(key);
  return { year, month };
}

export function addMonths(m: Month, n: number): Month {
  const d = new Date(Date.UTC(m.year, m.month + n, 1));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() };
}

export function sameMonth(a: Month, b: Month): boolean {
  return a.year === b.year && a.month === b.month;
}

function daysIn(m: Month): number {
  return new Date(Date.UTC(m.year, m.month + 1, 0)).getUTCDate();
}

/** The same date `n` months on, or that month's last when it has no such date (31 Jan → 28 Feb). */
export function addMonthsTo(key: string, n: number): string {
  const m = addMonths(monthOf(key), n);
  return keyOf(m.year, m.month, Math.min(parseKey(key).date, daysIn(m)));
}

/** The weeks that show month `m`: Monday to Sunday, from the week of its 1st to the week of its
 * last day (four to six weeks), the days of the months either side filling them. */
export function monthGrid(m: Month): Day[][] {
  const first = keyOf(m.year, m.month, 1);
  const start = addDays(first, -weekday(first));
  const weeks = Math.ceil((weekday(first) + daysIn(m)) / 7);
  const out: Day[][] = [];
  for (let w = 0; w < weeks; w++) {
    const week: Day[] = [];
    for (let i = 0; i < 7; i++) {
      const key = addDays(start, w * 7 + i);
      const { year, month, date } = parseKey(key);
      week.push({ key, year, month, date, inMonth: year === m.year && month === m.month });
    }
    out.push(week);
  }
  return out;
}

// ---- The person's days and clock ----

const formats = new Map<string, Intl.DateTimeFormat>();
function parts(ms: number, zone?: string): Record<string, string> {
  const k = zone ?? '';
  let f = formats.get(k);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', { timeZone: zone, year: 'numeric', month: 'numeric', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    formats.set(k, f);
  }
  const p: Record<string, string> = {};
  for (const part of f.formatToParts(ms)) p[part.type] = part.value;
  return p;
}

/** The day `ms` falls on in `zone` (the browser's when none). */
export function dayOf(ms: number, zone?: string): string {
  const p = parts(ms, zone);
  return keyOf(Number(p.year), Number(p.month) - 1, Number(p.day));
}

/** The clock at `ms` in `zone`: "09:05". */
export function clockOf(ms: number, zone?: string): string {
  const p = parts(ms, zone);
  return `${p.hour}:${p.minute}`;
}

/** "Thursday 24 December 2026": a day in full, for its label and the agenda's heading. */
export function fullDate(key: string): string {
  const { year, month, date } = parseKey(key);
  return `${WEEKDAYS[weekday(key)]} ${date} ${MONTHS[month]} ${year}`;
}

/** "December 2026". */
export function monthTitle(m: Month): string {
  return `${MONTHS[m.month]} ${m.year}`;
}

/** The items with a time, by the day they fall due in `zone`, each day's by time: the open ones,
 * and the done ones too with `done`. */
export function itemsByDay(items: PlanItem[], { done = false, zone }: { done?: boolean; zone?: string } = {}): Map<string, PlanItem[]> {
  const days = new Map<string, PlanItem[]>();
  const timed = items.filter((i) => i.due_at !== null && (done || i.done_at === null));
  timed.sort((a, b) => (a.due_at ?? 0) - (b.due_at ?? 0) || a.id - b.id);
  for (const i of timed) {
    const key = dayOf(i.due_at as number, zone);
    const list = days.get(key);
    if (list) list.push(i);
    else days.set(key, [i]);
  }
  return days;
}

/** Where a key moves the picked day in the grid (null: not a key the grid takes): a day either
 * way, a week up or down, the week's Monday or Sunday, the same date a month either way. */
export function stepDay(key: string, pressed: string): string | null {
  switch (pressed) {
    case 'ArrowLeft':
      return addDays(key, -1);
    case 'ArrowRight':
      return addDays(key, 1);
    case 'ArrowUp':
      return addDays(key, -7);
    case 'ArrowDown':
      return addDays(key, 7);
    case 'Home':
      return addDays(key, -weekday(key));
    case 'End':
      return addDays(key, 6 - weekday(key));
    case 'PageUp':
      return addMonthsTo(key, -1);
    case 'PageDown':
      return addMonthsTo(key, 1);
    default:
      return null;
  }
}

// ---- What the Planner remembers in this browser (the view, "Show done") ----

function storage(): Storage | null {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null;
  }
}

/** What was kept under `key`, or null (none kept, or no storage: a private window, a test). */
export function remembered(key: string): string | null {
  try {
    return storage()?.getItem(key) ?? null;
  } catch {
    return null;
  }
}

export function remember(key: string, value: string): void {
  try {
    storage()?.setItem(key, value);
  } catch {
    // Storage refused (full, private): the choice lasts for this page.
  }
}
