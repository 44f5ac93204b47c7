// A secret copied from the vault's generator goes from the clipboard 30 s later, only if it is
// still what the clipboard holds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CLEAR_AFTER_MS, copyForAWhile, shouldClear } from '../.test-build/clipboard.js';

test('the clipboard is emptied only when it still holds what was copied', () => {
  assert.equal(shouldClear('s3cret', 's3cret', 's3cret'), true);
  assert.equal(shouldClear('something else', 's3cret', 's3cret'), false, 'the person copied something since');
  // Unreadable: only when this page copied nothing since.
  assert.equal(shouldClear(null, 's3cret', 's3cret'), true);
  assert.equal(shouldClear(null, 's3cret', 'newer'), false);
  assert.equal(shouldClear(null, 's3cret', null), false);
});

/** A clipboard and a clock of the test's own. */
function fake({ readable = true, copies = true } = {}) {
  const io = {
    held: '',
    cleared: 0,
    timers: [],
    async copy(t) {
      if (copies) io.held = t;
      return copies;
    },
    async read() {
      return readable ? io.held : null;
    },
    async clear() {
      io.held = '';
      io.cleared++;
      return true;
    },
    later(f, ms) {
      const t = { f, ms, live: true };
      io.timers.push(t);
      return () => (t.live = false);
    },
    async fire() {
      for (const t of io.timers.splice(0)) if (t.live) t.f();
      await new Promise((r) => setTimeout(r, 0));
    },
  };
  return io;
}

test('copied, then emptied 30 s later while it still holds the value', async () => {
  const io = fake();
  assert.equal(await copyForAWhile('pw-1', undefined, io), true);
  assert.equal(io.held, 'pw-1');
  assert.equal(io.timers[0].ms, CLEAR_AFTER_MS);
  assert.equal(CLEAR_AFTER_MS, 30_000);
  await io.fire();
  assert.equal(io.held, '');
  assert.equal(io.cleared, 1);
});

test('something else copied meanwhile stays', async () => {
  const io = fake();
  await copyForAWhile('pw-2', 1000, io);
  io.held = 'a link the person copied';
  await io.fire();
  assert.equal(io.held, 'a link the person copied');
  assert.equal(io.cleared, 0);
});

test('a second copy takes the first one\'s place: one clearing, for the newer value', async () => {
  const io = fake({ readable: false });
  await copyForAWhile('pw-3', 1000, io);
  await copyForAWhile('pw-4', 1000, io);
  assert.equal(io.timers.filter((t) => t.live).length, 1);
  await io.fire();
  assert.equal(io.cleared, 1, 'unreadable, but nothing copied here since pw-4');
});

test('a copy that failed schedules nothing', async () => {
  const io = fake({ copies: false });
  assert.equal(await copyForAWhile('pw-5', 1000, io), false);
  assert.equal(io.timers.length, 0);
});
