import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dueWords, isDue, kindLabel, lateness, plan, untilWords, whenWords } from '../.test-build/planner.js';
import {
  addDays,
  addMonths,
  addMonthsTo,
  clockOf,
  dayOf,
  fullDate,
  itemsByDay,
  keyOf,
  monthGrid,
  monthOf,
  monthTitle,
  remember,
  remembered,
  stepDay,
  weekday,
} from '../.test-build/plancalendar.js';

const at = (iso) => Date.parse(iso);
const MIN = 60_000;
const HOUR = 60 * MIN;
/** Thursday 24 December 2026, 10:00 in London (UTC in winter). */
const NOW = at('2026-12-24T10:00:00Z');
const LONDON = 'Europe/London';

test('when, as a person says it: today, tomorrow, yesterday, else the day and date', () => {
  assert.equal(whenWords(at('2026-12-24T15:20:00Z'), NOW, LONDON), 'today 15:20');
  assert.equal(whenWords(at('2026-12-25T09:00:00Z'), NOW, LONDON), 'tomorrow 09:00');
  assert.equal(whenWords(at('2026-12-23T18:05:00Z'), NOW, LONDON), 'yesterday 18:05');
  assert.equal(whenWords(at('2026-12-24T18:00:00Z'), at('2026-12-20T08:00:00Z'), LONDON), 'Thu 24 Dec 18:00');
  assert.equal(whenWords(at('2027-01-02T07:30:00Z'), NOW, LONDON), 'Sat 2 Jan 07:30', 'next week: no year, it is near');
  assert.equal(whenWords(at('2027-12-24T18:00:00Z'), NOW, LONDON), 'Fri 24 Dec 2027 18:00', 'most of a year away: with the year');
  // Midnight is 00:00, never 24:00; just before it is still today.
  assert.equal(whenWords(at('2026-12-24T23:59:00Z'), NOW, LONDON), 'today 23:59');
  assert.equal(whenWords(at('2026-12-25T00:00:00Z'), NOW, LONDON), 'tomorrow 00:00');
});

test('when is the person\'s own day and clock: the zone decides what is today', () => {
  const late = at('2026-12-24T16:00:00Z');
  assert.equal(whenWords(late, NOW, 'UTC'), 'today 16:00');
  // 01:00 on the 25th in Tokyo, where it is already the evening of the 24th.
  assert.equal(whenWords(late, NOW, 'Asia/Tokyo'), 'tomorrow 01:00');
  // Across a change of the clocks (London, 29 March 2026): a calendar day, not 24 hours.
  assert.equal(whenWords(at('2026-03-29T08:00:00Z'), at('2026-03-28T23:30:00Z'), LONDON), 'tomorrow 09:00');
});

test('how long until: minutes, then hours, then days', () => {
  assert.equal(untilWords(NOW + 5 * MIN, NOW), 'in 5 min');
  assert.equal(untilWords(NOW + 30_000, NOW), 'in 1 min', 'under a minute is still to come');
  assert.equal(untilWords(NOW + 4 * MIN + 10_000, NOW), 'in 5 min', 'rounded up: never "in 4 min" for 4 min 10 s');
  assert.equal(untilWords(NOW + 59 * MIN + 30_000, NOW), 'in 1 h');
  assert.equal(untilWords(NOW + 80 * MIN, NOW), 'in 1 h 20 min');
  assert.equal(untilWords(NOW + 5 * HOUR + 10 * MIN, NOW), 'in 5 h');
  assert.equal(untilWords(NOW + 30 * HOUR, NOW), 'in 1 day');
  assert.equal(untilWords(NOW + 3 * 24 * HOUR, NOW), 'in 3 days');
  assert.equal(untilWords(NOW - MIN, NOW), 'now');
});

test('how long ago it fell due, or that it was due while Vyre was off', () => {
  assert.equal(dueWords(NOW - 10_000, NOW, 0, LONDON), 'due just now');
  assert.equal(dueWords(NOW - 2 * MIN, NOW, 0, LONDON), 'due 2 min ago');
  assert.equal(dueWords(NOW - 3 * HOUR - 5 * MIN, NOW, 0, LONDON), 'due 3 h ago');
  assert.equal(dueWords(at('2026-12-23T09:00:00Z'), NOW, 0, LONDON), 'due yesterday 09:00');
  // Late: told when vyred started again, with the time it was due.
  const twenty = at('2026-12-24T08:20:00Z');
  assert.equal(dueWords(twenty, NOW, NOW - twenty, LONDON), 'was due at 08:20 while Vyre was off');
  assert.equal(dueWords(at('2026-12-23T23:50:00Z'), NOW, 10 * HOUR, LONDON), 'was due yesterday 23:50 while Vyre was off');
  assert.equal(dueWords(at('2026-12-20T14:20:00Z'), NOW, 4 * 24 * HOUR, LONDON), 'was due Sun 20 Dec 14:20 while Vyre was off');
});

const item = (id, kind, fields = {}) => ({
  id,
  kind,
  text: `item ${id}`,
  project: null,
  due_at: null,
  done_at: null,
  fell_due_at: null,
  created_at: NOW - id,
  created_by: 'person',
  on_open: false,
  ...fields,
});

test('the lists: coming up by time, todos and notes as added, done the last first', () => {
  const items = [
    item(1, 'reminder', { due_at: NOW + 2 * HOUR }),
    item(2, 'todo'),
    item(3, 'note'),
    item(4, 'alarm', { due_at: NOW + HOUR }),
    item(5, 'todo', { due_at: NOW + 3 * HOUR }),
    item(6, 'reminder', { due_at: NOW - HOUR, fell_due_at: NOW - HOUR }),
    item(7, 'todo', { done_at: NOW - 2 * MIN }),
    item(8, 'reminder', { due_at: NOW - HOUR, done_at: NOW - MIN }),
    item(9, 'todo'),
    item(10, 'reminder', { on_open: true }),
  ];
  const l = plan(items);
  assert.deepEqual(l.coming.map((i) => i.id), [6, 4, 1, 5, 10], 'a todo with a time is coming up too; the next opening last');
  assert.deepEqual(l.todo.map((i) => i.id), [2, 9]);
  assert.deepEqual(l.notes.map((i) => i.id), [3]);
  assert.deepEqual(l.done.map((i) => i.id), [8, 7]);
});

test('what waits in Needs: an open reminder, alarm or timer that fell due', () => {
  assert.equal(isDue(item(1, 'reminder', { due_at: NOW, fell_due_at: NOW })), true);
  assert.equal(isDue(item(1, 'alarm', { due_at: NOW, fell_due_at: NOW })), true);
  assert.equal(isDue(item(1, 'timer', { due_at: NOW, fell_due_at: NOW })), true);
  assert.equal(isDue(item(1, 'reminder', { due_at: NOW + MIN })), false, 'not yet');
  assert.equal(isDue(item(1, 'reminder', { due_at: NOW, fell_due_at: NOW, done_at: NOW })), false, 'done');
  assert.equal(isDue(item(1, 'todo', { due_at: NOW, fell_due_at: NOW })), false, 'a todo waits in its list');
  assert.equal(kindLabel('timer'), 'Timer');
});

test('lateness comes from the planner.due events, by item and time, late ones only', () => {
  const late = lateness([
    { type: 'planner.due', payload: { item: 4, due_at: NOW - HOUR, late_ms: HOUR } },
    { type: 'planner.due', payload: { item: 5, due_at: NOW, late_ms: 0 } },
    { type: 'planner.due', payload: null },
    { type: 'planner.done', payload: { item: 6, due_at: NOW, late_ms: 5 } },
    { type: 'planner.due', payload: { item: '7', due_at: NOW, late_ms: 5 } },
  ]);
  assert.deepEqual([...late], [[`4:${NOW - HOUR}`, HOUR]]);
});

// ---- The calendar (lib/plancalendar.ts) ----

const keys = (weeks) => weeks.map((w) => w.map((d) => d.key));
const inMonth = (weeks) => weeks.flat().filter((d) => d.inMonth).map((d) => d.date);

test('a month as weeks from Monday, the days either side filling the first and last weeks', () => {
  // December 2026: Tuesday the 1st to Thursday the 31st, into January 2027.
  const dec = monthGrid({ year: 2026, month: 11 });
  assert.equal(dec.length, 5);
  assert.ok(dec.every((w) => w.length === 7));
  assert.deepEqual(keys(dec)[0], ['2026-11-30', '2026-12-01', '2026-12-02', '2026-12-03', '2026-12-04', '2026-12-05', '2026-12-06']);
  assert.deepEqual(keys(dec)[4], ['2026-12-28', '2026-12-29', '2026-12-30', '2026-12-31', '2027-01-01', '2027-01-02', '2027-01-03'], 'across the year\'s end');
  assert.deepEqual(inMonth(dec), Array.from({ length: 31 }, (_, i) => i + 1));
  assert.equal(dec[0][0].inMonth, false);
  assert.deepEqual(dec[4][4], { key: '2027-01-01', year: 2027, month: 0, date: 1, inMonth: false });
  // February 2027 starts on a Monday and has four weeks exactly; August 2027 needs six.
  assert.deepEqual(keys(monthGrid({ year: 2027, month: 1 })).map((w) => w[0]), ['2027-02-01', '2027-02-08', '2027-02-15', '2027-02-22']);
  assert.equal(monthGrid({ year: 2027, month: 7 }).length, 6);
  assert.equal(inMonth(monthGrid({ year: 2028, month: 1 })).length, 29, 'a leap year\'s February');
  // January 2027's first week is December 2026's last.
  assert.deepEqual(keys(monthGrid({ year: 2027, month: 0 }))[0], keys(dec)[4]);
});

test('a month with a change of the clocks has each day once, in order', () => {
  // London: clocks forward on Sunday 29 March 2026, back on Sunday 25 October 2026.
  for (const month of [2, 9]) {
    const days = monthGrid({ year: 2026, month }).flat();
    for (let i = 1; i < days.length; i++) assert.equal(days[i].key, addDays(days[i - 1].key, 1), `${days[i - 1].key} then the next`);
    assert.equal(inMonth(monthGrid({ year: 2026, month })).length, 31);
  }
  assert.equal(addDays('2026-03-28', 2), '2026-03-30');
  assert.equal(weekday('2026-03-29'), 6, 'a Sunday');
});

test('the day and clock of an instant are the person\'s, across midnight and a change of the clocks', () => {
  assert.equal(dayOf(at('2026-12-24T23:30:00Z'), LONDON), '2026-12-24');
  assert.equal(dayOf(at('2026-12-24T23:30:00Z'), 'Asia/Tokyo'), '2026-12-25');
  assert.equal(dayOf(at('2026-12-25T04:00:00Z'), 'America/New_York'), '2026-12-24');
  // 00:30 on the 29th of March in London is still winter time (00:30 UTC); 00:30 on the 30th is
  // summer time (23:30 UTC on the 29th).
  assert.equal(dayOf(at('2026-03-29T00:30:00Z'), LONDON), '2026-03-29');
  assert.equal(clockOf(at('2026-03-29T00:30:00Z'), LONDON), '00:30');
  assert.equal(dayOf(at('2026-03-29T23:30:00Z'), LONDON), '2026-03-30');
  assert.equal(clockOf(at('2026-03-29T23:30:00Z'), LONDON), '00:30');
  assert.equal(clockOf(at('2026-03-29T01:30:00Z'), LONDON), '02:30', 'the hour that never was is skipped');
});

test('items by their day: open ones by time, done ones only when asked, none without a time', () => {
  const items = [
    item(1, 'reminder', { due_at: at('2026-12-24T15:00:00Z') }),
    item(2, 'alarm', { due_at: at('2026-12-24T08:00:00Z') }),
    item(3, 'todo'),
    item(4, 'note'),
    item(5, 'reminder', { due_at: at('2026-12-24T09:00:00Z'), done_at: NOW }),
    item(6, 'timer', { due_at: at('2026-12-24T23:30:00Z') }),
    item(7, 'todo', { due_at: at('2027-01-01T09:00:00Z') }),
    item(8, 'reminder', { on_open: true }),
  ];
  const ids = (m) => Object.fromEntries([...m].map(([k, v]) => [k, v.map((i) => i.id)]));
  assert.deepEqual(ids(itemsByDay(items, { zone: LONDON })), { '2026-12-24': [2, 1, 6], '2027-01-01': [7] });
  assert.deepEqual(ids(itemsByDay(items, { zone: LONDON, done: true })), { '2026-12-24': [2, 5, 1, 6], '2027-01-01': [7] });
  // In Tokyo (nine hours on) 15:00 in London is midnight, the next day's first minute, and the
  // timer at 23:30 is the next morning.
  assert.deepEqual(ids(itemsByDay(items, { zone: 'Asia/Tokyo' })), { '2026-12-24': [2], '2026-12-25': [1, 6], '2027-01-01': [7] });
});

test('the keys move the picked day: a day, a week, the week\'s ends, a month', () => {
  assert.equal(stepDay('2026-12-31', 'ArrowRight'), '2027-01-01');
  assert.equal(stepDay('2027-01-01', 'ArrowLeft'), '2026-12-31');
  assert.equal(stepDay('2026-12-29', 'ArrowDown'), '2027-01-05');
  assert.equal(stepDay('2026-03-02', 'ArrowUp'), '2026-02-23');
  assert.equal(stepDay('2026-12-24', 'Home'), '2026-12-21', 'Monday');
  assert.equal(stepDay('2026-12-24', 'End'), '2026-12-27', 'Sunday');
  assert.equal(stepDay('2026-12-27', 'End'), '2026-12-27');
  assert.equal(stepDay('2027-01-31', 'PageDown'), '2027-02-28', 'no 31st of February: its last day');
  assert.equal(stepDay('2026-01-15', 'PageUp'), '2025-12-15');
  assert.equal(stepDay('2026-12-24', 'Enter'), null);
  assert.deepEqual(addMonths({ year: 2026, month: 11 }, 1), { year: 2027, month: 0 });
  assert.deepEqual(addMonths({ year: 2026, month: 0 }, -1), { year: 2025, month: 11 });
  assert.equal(addMonthsTo('2024-02-29', 12), '2025-02-28');
});

test('days and months in words', () => {
  assert.equal(fullDate('2026-12-24'), 'Thursday 24 December 2026');
  assert.equal(fullDate('2027-01-04'), 'Monday 4 January 2027');
  assert.equal(monthTitle({ year: 2026, month: 8 }), 'September 2026');
  assert.equal(keyOf(2026, 12, 1), '2027-01-01', 'a month past December rolls over');
  assert.deepEqual(monthOf('2026-12-24'), { year: 2026, month: 11 });
  assert.equal(remembered('vyre_planner_view'), null, 'no storage here: nothing remembered, no error');
  remember('vyre_planner_view', 'calendar');
});
