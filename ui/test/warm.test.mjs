import { test } from 'node:test';
import assert from 'node:assert/strict';
import { warmOnWrite } from '../.test-build/warm.js';

test('writing warms a closed thread once at a time, an open one never, and a failure is quiet', async () => {
  const write = warmOnWrite();
  let calls = 0;
  let release;
  const warm = () => {
    calls += 1;
    return new Promise((ok, fail) => (release = { ok, fail }));
  };
  write(false, warm);
  assert.equal(calls, 0, 'a running thread is not warmed');
  write(true, warm);
  write(true, warm);
  write(true, warm);
  assert.equal(calls, 1, 'keystrokes while it warms ask nothing more');
  release.fail(new Error('no_history'));
  await new Promise((r) => setTimeout(r, 0));
  write(true, warm);
  assert.equal(calls, 2, 'after a failure the next keystroke may ask again');
});
