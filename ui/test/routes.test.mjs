import { test } from 'node:test';
import assert from 'node:assert/strict';
import { changesOf, closeBy, parseRoute, pathOf, withChanges } from '../.test-build/routes.js';

const at = (pathname, search = '') => parseRoute({ pathname, search });

test('each screen has its path, and the path opens that screen', () => {
  for (const r of [{ name: 'home' }, { name: 'deck' }, { name: 'needs' }, { name: 'planner' }, { name: 'watchers' }, { name: 'lessons' }, { name: 'vault' }, { name: 'files' }, { name: 'settings' }, { name: 'thread', thread: 't-1' }, { name: 'project', project: 'news' }]) {
    assert.deepEqual(at(pathOf(r)), r, pathOf(r));
  }
  assert.equal(pathOf({ name: 'home' }), '/app/');
  assert.equal(pathOf({ name: 'lessons' }), '/app/lessons');
  assert.equal(pathOf({ name: 'vault' }), '/app/vault');
  assert.deepEqual(at('/app/deck/'), { name: 'deck' }, 'a trailing slash is the same screen');
  assert.deepEqual(at('/app/nowhere'), { name: 'home' });
  assert.deepEqual(at('/onboard', '?t=abc'), { name: 'onboard', token: 'abc' });
  assert.deepEqual(at('/login'), { name: 'login', token: null });
});

test('a thread on a paired box has its own path, under the box\'s pairing', () => {
  const r = { name: 'thread', thread: '0b7e4c1e-0000-4000-8000-00000000a001', box: 'p1' };
  assert.equal(pathOf(r), '/app/b/p1/t/0b7e4c1e-0000-4000-8000-00000000a001');
  assert.deepEqual(at(pathOf(r)), r);
  assert.equal(pathOf({ name: 'thread', thread: 't-1', box: null }), '/app/t/t-1', 'no box: this machine\'s');
  assert.equal(at('/app/t/t-1').box, undefined);
  // Odd characters stay whole both ways.
  const odd = { name: 'thread', thread: 'a b/c', box: 'x/y' };
  assert.equal(pathOf(odd), '/app/b/x%2Fy/t/a%20b%2Fc');
  assert.deepEqual(at(pathOf(odd)), odd);
  assert.deepEqual(at('/app/b/p1'), { name: 'home' }, 'a box with no thread is no screen');
});

test('a project has its page, its name whole whatever its characters', () => {
  assert.equal(pathOf({ name: 'project', project: 'news' }), '/app/p/news');
  const odd = { name: 'project', project: 'Client work / 2026 é?#' };
  assert.equal(pathOf(odd), '/app/p/Client%20work%20%2F%202026%20%C3%A9%3F%23');
  assert.deepEqual(at(pathOf(odd)), odd);
  assert.deepEqual(at('/app/p/news/'), { name: 'project', project: 'news' }, 'a trailing slash is the same page');
  assert.deepEqual(at('/app/p'), { name: 'home' }, 'no name: no project page');
  assert.deepEqual(at('/app/p/a/b'), { name: 'home' });
  // Typed by hand, not valid percent-encoding: the name as it stands, not an error.
  assert.deepEqual(at('/app/p/100%'), { name: 'project', project: '100%' });
});

test('a chat\'s Changes view has its address: the chat\'s, with ?changes=', () => {
  const chat = { name: 'thread', thread: 't-1' };
  const open = withChanges(chat, '2');
  assert.deepEqual(open, { name: 'thread', thread: 't-1', changes: '2' });
  assert.equal(pathOf(open), '/app/t/t-1?changes=2');
  assert.deepEqual(at('/app/t/t-1', '?changes=2'), open, 'a reload opens it again');
  assert.deepEqual(at('/app/t/t-1', '?changes=all'), withChanges(chat, 'all'));
  assert.deepEqual(withChanges(open, null), chat, 'closed: the chat\'s own address, no empty key');
  assert.equal(pathOf(withChanges(open, null)), '/app/t/t-1');
  assert.deepEqual(at('/app/t/t-1', '?changes='), chat, 'an empty value is no view');
  assert.equal(changesOf(open), '2');
  assert.equal(changesOf(chat), null);
  // A box's thread, and the assistant's chat at home.
  const boxed = withChanges({ name: 'thread', thread: 't 2', box: 'p1' }, 'all');
  assert.equal(pathOf(boxed), '/app/b/p1/t/t%202?changes=all');
  assert.deepEqual(at('/app/b/p1/t/t%202', '?changes=all'), boxed);
  assert.equal(pathOf(withChanges({ name: 'home' }, '3')), '/app/?changes=3');
  assert.deepEqual(at('/app/', '?changes=3'), { name: 'home', changes: '3' });
  assert.deepEqual(at('/app', '?changes=3'), { name: 'home', changes: '3' });
  // Odd characters (a turn named without a number) stay whole.
  const odd = withChanges(chat, 'x:y&z');
  assert.equal(pathOf(odd), '/app/t/t-1?changes=x%3Ay%26z');
  assert.deepEqual(at('/app/t/t-1', '?changes=x%3Ay%26z'), odd);
  // Screens with no chat have no Changes view.
  assert.deepEqual(withChanges({ name: 'deck' }, 'all'), { name: 'deck' });
  assert.deepEqual(at('/app/deck', '?changes=all'), { name: 'deck' });
  assert.deepEqual(at('/app/nowhere', '?changes=all'), { name: 'home' }, 'an unknown path is home, not its view');
  assert.equal(changesOf({ name: 'deck' }), null);
});

test('closing a view over a screen goes back to the entry under it, or takes its place', () => {
  // Opened from the chat: its entry says the chat's address is under it.
  assert.equal(closeBy({ under: '/app/t/t-1' }, '/app/t/t-1'), 'back');
  // Opened from a link or a bookmark (nothing under it that the app put there).
  assert.equal(closeBy(null, '/app/t/t-1'), 'replace');
  assert.equal(closeBy(undefined, '/app/t/t-1'), 'replace');
  assert.equal(closeBy('x', '/app/t/t-1'), 'replace');
  assert.equal(closeBy({}, '/app/t/t-1'), 'replace');
  // Under it is another screen: going back would not be the chat.
  assert.equal(closeBy({ under: '/app/deck' }, '/app/t/t-1'), 'replace');
});
