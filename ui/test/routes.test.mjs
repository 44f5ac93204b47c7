import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRoute, pathOf } from '../.test-build/routes.js';

const at = (pathname, search = '') => parseRoute({ pathname, search });

test('each screen has its path, and the path opens that screen', () => {
  for (const r of [{ name: 'home' }, { name: 'deck' }, { name: 'needs' }, { name: 'planner' }, { name: 'watchers' }, { name: 'lessons' }, { name: 'files' }, { name: 'settings' }, { name: 'thread', thread: 't-1' }, { name: 'project', project: 'news' }]) {
    assert.deepEqual(at(pathOf(r)), r, pathOf(r));
  }
  assert.equal(pathOf({ name: 'home' }), '/app/');
  assert.equal(pathOf({ name: 'lessons' }), '/app/lessons');
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
