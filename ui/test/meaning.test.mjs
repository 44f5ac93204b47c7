import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fetchFailedText, fetchPercent, foundTag, hitTitle, meaningView, megabytes, progressOf, uniqueHits } from '../.test-build/meaning.js';

test('how a hit was found, as a small tag', () => {
  assert.equal(foundTag(['words']).label, 'words');
  assert.equal(foundTag(['meaning']).label, 'meaning');
  assert.equal(foundTag(['words', 'meaning']).label, 'words + meaning');
  assert.equal(foundTag(['meaning', 'words']).label, 'words + meaning', 'in one order whatever vyred sends');
  assert.equal(foundTag([]), null);
  assert.equal(foundTag(undefined), null);
  assert.equal(foundTag(['something-new']), null);
});

test('a hit is called by its session title, else the one the app knows, else "an earlier session"', () => {
  assert.equal(hitTitle({ title: 'Backups' }), 'Backups');
  assert.equal(hitTitle({ title: null }, 'Known'), 'Known');
  assert.equal(hitTitle({ title: '  ' }, null), 'an earlier session');
  assert.equal(hitTitle({ title: null }), 'an earlier session');
});

test('hits are kept once per turn', () => {
  const h = (thread, turn) => ({ thread, turn });
  assert.deepEqual(uniqueHits([h('a', '1'), h('a', '2'), h('a', '1'), h('b', '1')]), [h('a', '1'), h('a', '2'), h('b', '1')]);
});

test('the download in percent: whole, bounded, none without a size', () => {
  assert.equal(fetchPercent(0, 83_000_000), 0);
  assert.equal(fetchPercent(41_500_000, 83_000_000), 50);
  assert.equal(fetchPercent(82_999_999, 83_000_000), 99, 'not 100 until it all came');
  assert.equal(fetchPercent(83_000_000, 83_000_000), 100);
  assert.equal(fetchPercent(90, 80), 100);
  assert.equal(fetchPercent(10, null), null);
  assert.equal(fetchPercent(10, 0), null);
  assert.equal(fetchPercent(undefined, 10), null);
  assert.equal(megabytes(41_600_000), '42 MB');
});

test('a recall.model_progress payload is read field by field', () => {
  assert.deepEqual(progressOf({ state: 'fetching', done: 5, total: 10 }), { state: 'fetching', done: 5, total: 10, error: null });
  assert.deepEqual(progressOf({ state: 'fetching', done: 5 }), { state: 'fetching', done: 5, total: null, error: null });
  assert.deepEqual(progressOf({ state: 'failed', error: 'no network' }), { state: 'failed', done: null, total: null, error: 'no network' });
  assert.equal(progressOf({ state: 'exploded' }), null);
  assert.equal(progressOf(null), null);
  assert.equal(progressOf('fetching'), null);
  assert.deepEqual(progressOf({ state: 'fetching', done: '5', total: Infinity }), { state: 'fetching', done: null, total: null, error: null });
  assert.equal(fetchFailedText('no network'), 'The model could not be fetched: no network');
  assert.equal(fetchFailedText(null), 'The model could not be fetched.');
});

test('what Settings says of the model, in each state', () => {
  const ready = meaningView({ state: 'ready', embedded: 12, loaded: false }, 40);
  assert.equal(ready.status, 'ready');
  assert.equal(ready.canFetch, false);
  assert.match(ready.text, /^Ready: 12 of 40 turns understood\./);
  assert.equal(meaningView({ state: 'ready', embedded: 40 }, 40).text, 'Ready: all 40 turns understood.');
  assert.equal(meaningView({ state: 'ready', embedded: 1 }, 1).text, 'Ready: all 1 turn understood.');
  assert.match(meaningView({ state: 'ready', embedded: 0 }, 0).text, /No sessions/);
  // More embedded than read (a turn read since the count): never "41 of 40".
  assert.equal(meaningView({ state: 'ready', embedded: 41 }, 40).text, 'Ready: all 40 turns understood.');

  const missing = meaningView({ state: 'missing', embedded: 0 }, 40);
  assert.equal(missing.status, 'missing');
  assert.equal(missing.canFetch, true);
  assert.equal(missing.percent, null);

  const broken = meaningView({ state: 'broken', error: 'model.safetensors is cut short', embedded: 0 }, 40);
  assert.equal(broken.canFetch, true);
  assert.match(broken.text, /cannot be used: model\.safetensors is cut short\./);

  const off = meaningView({ state: 'off', embedded: 0 }, 40);
  assert.equal(off.canFetch, false);
  assert.match(off.text, /Turned off/);

  // vyred says fetching; the events say how far, and win over a status read before them.
  assert.equal(meaningView({ state: 'fetching', embedded: 0 }, 40).percent, 0);
  const going = meaningView({ state: 'missing', embedded: 0 }, 40, { state: 'fetching', done: 41_500_000, total: 83_000_000, error: null });
  assert.equal(going.status, 'fetching');
  assert.equal(going.percent, 50);
  assert.equal(going.canFetch, false);
  assert.match(going.text, /42 MB of 83 MB/);
  // A state vyred may add later reads as missing (the button still works).
  assert.equal(meaningView({ state: 'thinking', embedded: 0 }, 1).status, 'missing');
});
