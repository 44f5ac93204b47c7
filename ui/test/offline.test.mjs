// The offline worker's decisions (src/lib/offline.ts; the worker is src/sw.ts): what it answers,
// how a page is answered, which caches go, and how the app tries again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { API_PREFIX, SHELL_WAIT_MS, cacheName, handling, networkFirst, oldCaches, retryDelay, shouldRegister } from '../.test-build/offline.js';

const SCOPE = 'https://ada.vyre.run/app/';
const BUILD = new Set(['/app/', '/app/assets/index-C51jTSrq.js', '/app/assets/index-DX0wonIe.css', '/app/favicon.svg', '/app/manifest.webmanifest', '/app/icons/icon-192.png']);
const get = (path, mode = 'cors', method = 'GET') => ({ method, mode, url: new URL(path, SCOPE).href });
const how = (req) => handling(req, SCOPE, BUILD);

test('the API is never the worker\'s: calls, the event stream, downloads, even as a navigation', () => {
  assert.equal(API_PREFIX, '/v1/');
  for (const path of ['/v1/health', '/v1/session', '/v1/events?types=thread.*', '/v1/tools/threads.get', '/v1/files/download?path=a', '/v1', '/v1/']) {
    for (const mode of ['cors', 'same-origin', 'no-cors', 'navigate']) {
      for (const method of ['GET', 'POST', 'HEAD']) assert.equal(how(get(path, mode, method)), 'pass', `${method} ${mode} ${path}`);
    }
  }
  // Even when a build's file list somehow named it.
  assert.equal(handling(get('/v1/health'), SCOPE, new Set(['/v1/health'])), 'pass');
});

test('a page of the app is network first, wherever under /app/ it is', () => {
  for (const path of ['/app/', '/app', '/app/t/3f2a', '/app/deck', '/app/settings?x=1', '/app/lumen']) assert.equal(how(get(path, 'navigate')), 'navigate', path);
  // Pages outside the worker's scope are not its business.
  for (const path of ['/onboard?t=abc', '/login', '/', '/application']) assert.equal(how(get(path, 'navigate')), 'pass', path);
  // A form posted to a page is the network's.
  assert.equal(how(get('/app/', 'navigate', 'POST')), 'pass');
});

test('the build\'s own files come from the cache first; anything else goes to the network', () => {
  for (const path of ['/app/assets/index-C51jTSrq.js', '/app/assets/index-DX0wonIe.css', '/app/favicon.svg', '/app/manifest.webmanifest', '/app/icons/icon-192.png']) {
    assert.equal(how(get(path)), 'cache', path);
  }
  assert.equal(how(get('/app/', 'cors')), 'cache', 'the shell fetched by a script');
  for (const path of ['/app/assets/index-OLDHASH1.js', '/app/sw.js', '/app/assets/index-C51jTSrq.js?v=2', '/app/icons/nope.png']) assert.equal(how(get(path)), 'pass', path);
  assert.equal(how(get('/app/assets/index-C51jTSrq.js', 'cors', 'POST')), 'pass');
  // Another origin (the page loads none, but never from this cache).
  assert.equal(how({ method: 'GET', mode: 'cors', url: 'https://elsewhere.example/app/favicon.svg' }), 'pass');
  assert.equal(how({ method: 'GET', mode: 'navigate', url: 'http://ada.vyre.run/app/' }), 'pass', 'http is another origin');
  assert.equal(how({ method: 'GET', mode: 'cors', url: 'not a url' }), 'pass');
});

test('the caches are named by build, and only older builds\' caches are deleted', () => {
  assert.equal(cacheName('c5257600c7aa51d3'), 'vyre-app-c5257600c7aa51d3');
  const now = cacheName('new');
  assert.deepEqual(oldCaches(['vyre-app-old', now, 'someone-else', 'vyre-app-older'], now), ['vyre-app-old', 'vyre-app-older']);
  assert.deepEqual(oldCaches([now], now), []);
});

const res = (status, body) => ({ ok: status >= 200 && status < 300, status, body });
/** A timer that fires when the test says. */
function manualTimer() {
  const waiting = [];
  return { timer: (f, ms) => waiting.push({ f, ms }), fire: () => waiting.splice(0).forEach((w) => w.f()), waiting };
}

test('a page: the network\'s answer whenever it comes in time, a new build\'s page above all', async () => {
  const t = manualTimer();
  const shell = res(200, 'old shell');
  const got = await networkFirst(async () => res(200, 'new page'), async () => shell, SHELL_WAIT_MS, t.timer);
  assert.equal(got.body, 'new page');
  assert.equal(t.waiting[0].ms, SHELL_WAIT_MS);
  // A 404 is still the network's word (vyred gives the page for any path under /app/).
  assert.equal((await networkFirst(async () => res(404, 'missing'), async () => shell, 10, t.timer)).body, 'missing');
});

test('a page: the cached shell when the network fails, answers with a server error, or is slow', async () => {
  const t = manualTimer();
  const shell = res(200, 'shell');
  const down = () => Promise.reject(new TypeError('Failed to fetch'));
  assert.equal((await networkFirst(down, async () => shell, 10, t.timer)).body, 'shell');
  assert.equal((await networkFirst(async () => res(502, 'proxy'), async () => shell, 10, t.timer)).body, 'shell');
  // Slow: the shell once the wait is over; the network's late failure is not left unhandled.
  let fail;
  const slow = networkFirst(() => new Promise((_, no) => (fail = no)), async () => shell, 10, t.timer);
  t.fire();
  assert.equal((await slow).body, 'shell');
  fail(new TypeError('late'));
});

test('a page with no shell cached yet: the network\'s answer or failure as it is', async () => {
  const t = manualTimer();
  const none = async () => undefined;
  await assert.rejects(networkFirst(() => Promise.reject(new TypeError('Failed to fetch')), none, 10, t.timer), /Failed to fetch/);
  assert.equal((await networkFirst(async () => res(503, 'not built'), none, 10, t.timer)).body, 'not built');
  // Slow and nothing cached: it waits for the network.
  let answer;
  const slow = networkFirst(() => new Promise((ok) => (answer = ok)), none, 10, t.timer);
  t.fire();
  answer(res(200, 'late page'));
  assert.equal((await slow).body, 'late page');
  // A cache that fails to open is as good as none.
  assert.equal((await networkFirst(async () => res(500, 'err'), () => Promise.reject(new Error('no cache')), 10, t.timer)).body, 'err');
});

test('the app tries again soon, then every 15 seconds', () => {
  assert.deepEqual([0, 1, 2, 3, 4, 50].map(retryDelay), [2000, 4000, 8000, 15000, 15000, 15000]);
});

test('the worker is registered by a production build in a secure context, outside the Mac app', () => {
  const at = { prod: true, secure: true, supported: true, inApp: false, lumen: false };
  assert.equal(shouldRegister(at), true);
  for (const k of ['prod', 'secure', 'supported']) assert.equal(shouldRegister({ ...at, [k]: false }), false, k);
  for (const k of ['inApp', 'lumen']) assert.equal(shouldRegister({ ...at, [k]: true }), false, k);
});
