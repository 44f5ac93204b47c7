import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KEY_HEADER, browserKey, keepKey, keyHeaders, takeKeyFromAddress } from '../.test-build/key.js';

function memory() {
  const m = new Map();
  return { getItem: (k) => m.get(k) ?? null, setItem: (k, v) => m.set(k, String(v)), removeItem: (k) => m.delete(k), m };
}

function address(hash) {
  const calls = [];
  return {
    loc: { hash, pathname: '/app/lumen', search: '' },
    hist: { state: null, replaceState: (_s, _t, url) => calls.push(url) },
    calls,
  };
}

test('the key goes with every call once kept, and signing out forgets it', () => {
  const store = memory();
  assert.deepEqual(keyHeaders(store), {});
  keepKey('k-123', store);
  assert.equal(browserKey(store), 'k-123');
  assert.deepEqual(keyHeaders(store), { [KEY_HEADER]: 'k-123' });
  assert.equal(KEY_HEADER, 'X-Vyre-Key');
  keepKey(null, store);
  assert.equal(browserKey(store), null);
  assert.deepEqual(keyHeaders(null), {}, 'no storage: no key, no throw');
});

test('inside the Mac app, a key in the address is kept and leaves the address', () => {
  const store = memory();
  const a = address('#vyre-key=AbCdEfGhIjKlMnOpQrStUv_-0123456789abcdefgh');
  assert.equal(takeKeyFromAddress(a.loc, a.hist, store, true), true);
  assert.equal(browserKey(store), 'AbCdEfGhIjKlMnOpQrStUv_-0123456789abcdefgh');
  assert.deepEqual(a.calls, ['/app/lumen']);
});

test('in a browser, a key in the address is dropped, never kept', () => {
  const store = memory();
  keepKey('mine', store);
  const a = address('#vyre-key=AbCdEfGhIjKlMnOpQrStUv_-0123456789abcdefgh');
  assert.equal(takeKeyFromAddress(a.loc, a.hist, store, false), false);
  assert.equal(browserKey(store), 'mine', 'a link from elsewhere cannot replace the key');
  assert.deepEqual(a.calls, ['/app/lumen'], 'but it leaves the address');
});

test('anything else in the address is left alone', () => {
  const store = memory();
  for (const hash of ['', '#settings', '#vyre-key=', '#vyre-key=short', '#vyre-key=bad chars here!!!!!!']) {
    const a = address(hash);
    assert.equal(takeKeyFromAddress(a.loc, a.hist, store, true), false, hash);
    assert.deepEqual(a.calls, [], hash);
  }
  assert.equal(browserKey(store), null);
});
