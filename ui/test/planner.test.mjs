import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dueWords, isDue, kindLabel, lateness, plan, untilWords, whenWords } from '../.test-build/planner.js';

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
