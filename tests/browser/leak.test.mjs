// A browser's credential is bound to Vyre's origin (issue 17, finding 7; ADR 0009). Browsers
// scope cookies by host, not port: signed in to Vyre at http://127.0.0.1:<vyre>/, Chromium sends
// the `vyre_device` cookie to http://127.0.0.1:<any other port>/ too, e.g. a dev server a
// session started. Here a tiny recording server on another loopback port plays that server: what
// it receives must call no tool (as a cookie or as a bearer token), its page must not reach the
// key, and the person's app must go on working. No Claude Code needed.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { Rig, waitFor } from './lib/rig.mjs';
import { openBrowser, shot } from './lib/browser.mjs';

let rig;
let b;
let recorder;
let port;
/** Every request the other port received: its path and headers. */
const seen = [];

before(async () => {
  rig = await Rig.start('leak');
  b = await openBrowser();
  // The onboarding from the page itself (app.test.mjs walks its screens).
  await b.page.goto(await rig.onboardLink());
  await b.page.waitForURL((u) => u.pathname === '/onboard' && !u.search.includes('t='));
  await b.page.getByTestId('ob-name').waitFor();
  await b.page.evaluate(async () => {
    const headers = { 'content-type': 'application/json', 'x-vyre-key': localStorage.getItem('vyre_key') };
    for (const [path, body] of [
      ['/v1/tools/onboarding.you', { name: 'Ada', assistant_name: 'Juno' }],
      ['/v1/session/finish', {}],
    ]) {
      const j = await (await fetch(path, { method: 'POST', headers, body: JSON.stringify(body) })).json();
      if (j.error) throw new Error(`${path}: ${j.error.code}`);
    }
  });
  await b.page.goto(`${rig.base}/app/`);
  await b.page.locator('[data-nav=settings]').waitFor();

  // The other port: records what it is sent, and serves a page that tries its luck.
  recorder = http.createServer((req, res) => {
    seen.push({ path: req.url, headers: req.headers });
    res.setHeader('content-type', 'text/html');
    res.end(`<!doctype html><title>dev server</title><p>a dev server</p><script>
      window.tried = (async () => {
        const out = { key: localStorage.getItem('vyre_key') };
        try {
          const r = await fetch('${rig.base}/v1/tools/threads.list', { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body: '{}' });
          out.read = r.status;
        } catch (e) { out.read = 'blocked'; }
        try {
          await fetch('${rig.base}/v1/tools/devices.add', { method: 'POST', mode: 'no-cors', credentials: 'include', body: '{"name":"mallory"}' });
          out.sent = true;
        } catch (e) { out.sent = 'blocked'; }
        return out;
      })();
    </script>`);
  });
  await new Promise((ok) => recorder.listen(0, '127.0.0.1', ok));
  port = recorder.address().port;
});

after(async () => {
  await b?.close();
  recorder?.close();
  await rig?.stop();
});

const T = { timeout: 120_000 };

/** The cookie's value in a request the recorder saw. */
function cookieIn(req) {
  const m = /(?:^|;\s*)vyre_device=([^;]+)/.exec(req.headers.cookie ?? '');
  return m ? m[1] : null;
}

let leaked;
let key;

test('a page on another loopback port is sent the cookie, never the key', T, async () => {
  const other = await b.context.newPage();
  await other.goto(`http://127.0.0.1:${port}/`);
  const tried = await other.evaluate(() => window.tried);
  await other.close();
  await waitFor('the recorder to be reached', () => seen.length > 0);
  // The premise of the attack: Chromium sends the cookie across ports.
  leaked = cookieIn(seen[0]);
  assert.ok(leaked, `Chromium sent the cookie to the other port: ${JSON.stringify(seen[0].headers)}`);
  // But the key stays in Vyre's origin: not sent, not readable by the other page.
  key = await b.page.evaluate(() => localStorage.getItem('vyre_key'));
  assert.match(key ?? '', /^[A-Za-z0-9_-]{40,}$/, 'Vyre\'s page holds its key');
  assert.ok(!JSON.stringify(seen).includes(key), 'the key never reached the other port');
  assert.ok(seen.every((r) => !('x-vyre-key' in r.headers)));
  assert.equal(tried.key, null, 'the other origin cannot read Vyre\'s storage');
  assert.equal(tried.read, 'blocked', 'its page cannot read an answer from vyred');
});

test('what the other port received calls no tool, as a cookie or as a bearer token', T, async () => {
  assert.ok(leaked);
  const before = await rig.sock('devices.list');
  const newest = (await rig.sock('system.events', { limit: 1 }))[0]?.id ?? 0;
  const post = (path, headers, body = '{}') =>
    fetch(`${rig.base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  for (const tool of ['threads.list', 'devices.add', 'devices.link', 'vault.list', 'system.status']) {
    const body = tool === 'devices.add' ? '{"name":"mallory"}' : '{}';
    const asCookie = await post(`/v1/tools/${tool}`, { cookie: `vyre_device=${leaked}` }, body);
    assert.equal(asCookie.status, 401, `${tool} with the cookie`);
    assert.equal((await asCookie.json()).error.code, 'key_missing');
    const asBearer = await post(`/v1/tools/${tool}`, { authorization: `Bearer ${leaked}` }, body);
    assert.equal(asBearer.status, 401, `${tool} as a bearer token`);
    assert.equal((await asBearer.json()).error.code, 'browser_credential');
  }
  const events = await fetch(`${rig.base}/v1/events?follow=false`, { headers: { cookie: `vyre_device=${leaked}` } });
  assert.equal(events.status, 401, 'the event stream with the cookie');
  const eventsBearer = await fetch(`${rig.base}/v1/events?follow=false`, { headers: { authorization: `Bearer ${leaked}` } });
  assert.equal(eventsBearer.status, 401, 'the event stream as a bearer token');
  const session = await (await fetch(`${rig.base}/v1/session`, { headers: { cookie: `vyre_device=${leaked}` } })).json();
  assert.equal(session.data.device, null, 'the cookie does not even say whose it is');
  // Nothing changed: the page's no-cors post and these calls made no device and no event.
  assert.deepEqual(await rig.sock('devices.list'), before);
  const after = await rig.sock('system.events', { limit: 50 });
  assert.deepEqual(after.filter((e) => e.id > newest).map((e) => e.type), []);
});

test('the person\'s app goes on working, and a browser without its key is asked to sign in again', T, async () => {
  const page = b.page;
  await page.reload();
  await page.click('[data-nav=settings]');
  await page.getByTestId('this-device').waitFor();
  await shot(page, 'leak-app-still-works');
  // A browser signed in before keys (or whose storage was cleared) says what to do.
  await page.evaluate(() => localStorage.removeItem('vyre_key'));
  await page.reload();
  const box = page.getByTestId('signed-out');
  await box.waitFor();
  assert.match(await box.innerText(), /sign in again/i);
  assert.match(await box.innerText(), /vyre open/);
  await shot(page, 'signed-out-no-key');
  // A fresh sign-in link brings it back, with a new key.
  const { url } = await rig.sock('devices.link', {});
  await page.goto(url);
  await page.waitForURL((u) => u.pathname === '/app/');
  await page.locator('[data-nav=settings]').waitFor();
  await shot(page, 'signed-in-again');
  const fresh = await page.evaluate(() => localStorage.getItem('vyre_key'));
  assert.ok(fresh && fresh !== key);
  assert.deepEqual(b.errors, [], 'no script errors on the page');
});
