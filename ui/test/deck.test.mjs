import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applySessionEvent, badgeOf, ago, sessionTitle } from '../.test-build/deck.js';

test('a session has one state badge: never live and idle side by side', () => {
  const vyre = (state, live) => badgeOf({ source: 'vyre', state, live });
  assert.deepEqual(vyre('idle', true), { label: 'open', tone: 'live' });
  assert.equal(vyre('idle', false), null);
  assert.equal(vyre('stopped', false), null);
  assert.deepEqual(vyre('running', true), { label: 'working', tone: 'working' });
  assert.deepEqual(vyre('waiting', true), { label: 'needs you', tone: 'warn' });
  assert.deepEqual(vyre('failed', false), { label: 'failed', tone: 'err' });
  assert.deepEqual(badgeOf({ source: 'terminal', state: null, live: true }), { label: 'in a terminal', tone: 'live' });
  assert.equal(badgeOf({ source: 'terminal', state: null, live: false }), null);
});

test('last activity in words', () => {
  const now = 1_800_000_000_000;
  assert.equal(ago(now - 10_000, now), 'just now');
  assert.equal(ago(now - 5 * 60_000, now), '5 min ago');
  assert.equal(ago(now - 3 * 3600_000, now), '3 h ago');
  assert.equal(ago(now - 2 * 86400_000, now), '2 d ago');
  assert.equal(ago(null, now), '');
});

test('a session is called by its title, else its first words, else what the app learnt', () => {
  const e = (title, first_message) => ({ thread: 't1', title, first_message });
  assert.equal(sessionTitle(e('Tilde 1.0', 'hello'), {}), 'Tilde 1.0');
  assert.equal(sessionTitle(e(null, 'hello'), { t1: 'learnt' }), 'hello');
  assert.equal(sessionTitle(e(null, null), { t1: 'learnt' }), 'learnt');
  assert.equal(sessionTitle(e(null, ''), {}), 'Untitled session');
});

test('a session\'s events change its row in place; one not listed, or a project made, asks for a reload', () => {
  const row = () => ({ thread: 't1', title: null, forked_from: null, live: false, state: 'stopped', last_activity: 1 });
  const ev = (type, payload = {}, thread = 't1') => ({ type, at: 50, thread, payload });
  const titles = {};
  const list = [row()];
  assert.equal(applySessionEvent(list, ev('thread.started'), titles), true);
  assert.equal(list[0].live, true);
  assert.equal(list[0].last_activity, 50);
  assert.equal(applySessionEvent(list, ev('thread.state', { state: 'running' }), titles), true);
  assert.equal(list[0].state, 'running');
  assert.equal(applySessionEvent(list, ev('thread.titled', { title: 'Walrus', forked_from: 't0' }), titles), true);
  assert.equal(list[0].title, 'Walrus');
  assert.equal(list[0].forked_from, 't0');
  assert.deepEqual(titles, { t1: 'Walrus' }, 'the app learns the title');
  assert.equal(applySessionEvent(list, ev('thread.stopped'), titles), true);
  assert.deepEqual([list[0].live, list[0].state], [false, 'stopped']);
  assert.equal(applySessionEvent(list, ev('thread.started', {}, 't2'), titles), false, 'a session not listed: reload');
  assert.equal(applySessionEvent(list, ev('project.created', { project: 'p' }, null), titles), false, 'a project made: reload');
  assert.equal(list.length, 1);
});
