import { test } from 'node:test';
import assert from 'node:assert/strict';
import { coalesced } from '../.test-build/coalesce.js';

test('a burst of asks makes one load, and one more after it, never one per ask', async () => {
  let runs = 0;
  let release;
  const load = coalesced(async () => {
    runs++;
    if (runs === 1) await new Promise((r) => (release = r));
  }, assert.fail);
  const first = load();
  // A burst while the first load is under way: one more run after it, not three.
  await Promise.all([load(), load(), load()]);
  release();
  await first;
  assert.equal(runs, 2);
  await load();
  assert.equal(runs, 3, 'a later ask runs again');
});

test('a failure goes to the handler, and the next ask runs again', async () => {
  const seen = [];
  let fail = true;
  let runs = 0;
  const load = coalesced(
    async () => {
      runs++;
      if (fail) throw new Error('no');
    },
    (e) => seen.push(e.message),
  );
  await load();
  fail = false;
  await load();
  assert.deepEqual(seen, ['no']);
  assert.equal(runs, 2);
});
