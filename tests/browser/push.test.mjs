// Notifications on this device (Web Push: ui/src/sw.ts, ui/src/lib/push.ts and notifications.ts,
// Settings' section) against a real vyred running the pinned Claude Code CLI, with the fake push
// service of `vyre-fake-api` (a second instance, in `push.services`) playing the browser vendor's:
// it holds a subscription's private key, checks vyred's VAPID signature and decrypts what vyred
// sends. Headless Chromium has no push service of its own, so the page's PushManager hands out
// that subscription, and what the fake received is delivered to the service worker through the
// DevTools protocol, as the browser would on a push. Turned on in Settings; a session's ask
// pushed, shown with Allow and Deny, and allowed from the notification (the worker answers,
// `via: notification`, as this browser's device); an ask answered in the app withdrawn and its
// notification closed; a push service not in the list refused; a test notification opening
// Settings in the open window; a subscription the push service dropped forgotten; turned off;
// and the browser's permission refused, said with how to allow it again.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { API_KEY, Rig, claudeMissing, startFakeApi, waitFor } from './lib/rig.mjs';
import { DESKTOP, PHONE, SHOTS, fromPage, openBrowser, shot, shootingTest } from './lib/browser.mjs';
import { onboardWithKey } from './lib/onboard.mjs';

const noClaude = claudeMissing();
const T = { timeout: 180_000 };
/** The fake push service (the browser vendor's). */
let pushService;
/** The subscription the fake made, the one the page's PushManager hands out. */
let sub;
let rig;
let browser;
let page;
/** This browser's device id. */
let device;

before(async () => {
  pushService = await startFakeApi();
  rig = await Rig.start('push', { claude: !noClaude, config: { push: { services: [pushService.url] } } });
  // Made for vyred's key: the fake refuses a message signed with another.
  const { public_key } = await rig.sock('push.key');
  sub = await post(`${pushService.url}/push/subscriptions`, { applicationServerKey: public_key });
  browser = await openBrowser();
  page = browser.page;
  await browser.context.grantPermissions(['notifications'], { origin: rig.base });
  // No push service in headless Chromium: subscribe() and getSubscription() answer the fake's
  // subscription, shaped as a PushSubscription, and keep it across reloads as a browser does.
  // The key the app subscribed with is kept for the test to check.
  await browser.context.addInitScript((s) => {
    if (typeof PushManager === 'undefined') return;
    const HELD = 'vyre-test-push';
    const b64url = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    const subscription = () => ({
      endpoint: s.endpoint,
      expirationTime: null,
      options: { userVisibleOnly: true, applicationServerKey: null },
      toJSON: () => ({ endpoint: s.endpoint, expirationTime: null, keys: { ...s.keys } }),
      unsubscribe: async () => {
        localStorage.removeItem(HELD);
        return true;
      },
    });
    PushManager.prototype.subscribe = async function (options) {
      const key = options?.applicationServerKey;
      localStorage.setItem(HELD, typeof key === 'string' ? key : b64url(key instanceof ArrayBuffer ? key : key.buffer.slice(key.byteOffset, key.byteOffset + key.byteLength)));
      localStorage.setItem(`${HELD}-visible`, String(options?.userVisibleOnly));
      return subscription();
    };
    PushManager.prototype.getSubscription = async function () {
      return localStorage.getItem(HELD) ? subscription() : null;
    };
  }, sub);
  // The onboarding's tools straight from the page (app.test.mjs walks its screens), with the
  // API key the sessions use.
  await onboardWithKey(rig, page, API_KEY);
  await page.goto(`${rig.base}/app/`);
  device = await page.evaluate(async () => {
    const r = await fetch('/v1/session', { headers: { 'x-vyre-key': localStorage.getItem('vyre_key') } });
    return (await r.json()).data.device.id;
  });
  // The worker, active and in control of the page (it registers once the page has loaded).
  await waitFor('the worker to control the page', () => page.evaluate(() => navigator.serviceWorker.controller?.state === 'activated'));
});

after(async () => {
  await browser?.close();
  await rig?.stop();
  pushService?.child.kill('SIGKILL');
});

const it = shootingTest('push-', () => page);

async function post(url, body) {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) });
  assert.ok(r.ok, `${url}: ${r.status}`);
  return r.json();
}

/** What the fake push service received for the subscription, decrypted, oldest first. */
async function received() {
  const r = await fetch(`${pushService.url}/push/messages/${sub.id}`);
  assert.ok(r.ok, `messages: ${r.status}`);
  return r.json();
}

/** The first message received that `pred` takes. */
function receivedWhere(what, pred, timeout = 90_000) {
  return waitFor(what, async () => (await received()).find(pred), timeout, 200);
}

/** The DevTools session pushes are delivered through, and the worker's registration id: one
 * for the whole file (its ServiceWorker domain stays enabled). */
let devtools;
async function pushChannel() {
  if (devtools) return devtools;
  const cdp = await browser.context.newCDPSession(page);
  const scope = `${rig.base}/app/`;
  const registration = new Promise((ok) =>
    cdp.on('ServiceWorker.workerRegistrationUpdated', ({ registrations }) => {
      const r = registrations.find((r) => r.scopeURL === scope && !r.isDeleted);
      if (r) ok(r.registrationId);
    }),
  );
  await cdp.send('ServiceWorker.enable');
  const registrationId = await Promise.race([registration, new Promise((_, no) => setTimeout(() => no(new Error('no registration for /app/')), 10_000))]);
  devtools = { cdp, registrationId };
  return devtools;
}

/** `payload` delivered to the service worker as a push, through the DevTools protocol. */
async function deliver(payload) {
  const { cdp, registrationId } = await pushChannel();
  await cdp.send('ServiceWorker.deliverPushMessage', { origin: rig.base, registrationId, data: JSON.stringify(payload) });
}

/** The notifications showing with `tag`, as the page sees them. */
function notifications(tag) {
  return page.evaluate(async (tag) => {
    const reg = await navigator.serviceWorker.ready;
    return (await reg.getNotifications({ tag })).map((n) => ({
      title: n.title,
      body: n.body,
      tag: n.tag,
      actions: (n.actions ?? []).map((a) => ({ action: a.action, title: a.title })),
      requireInteraction: n.requireInteraction,
      data: n.data,
    }));
  }, tag);
}

/** The notification showing with `tag`, once it shows (alone). */
function shownWith(tag, timeoutMs) {
  return waitFor(`the notification ${tag}`, async () => {
    const n = await notifications(tag);
    return n.length === 1 && n;
  }, timeoutMs);
}

/** `m` pushed until its notification shows: a push handed to a service worker that Chromium
 * is stopping under load can be dropped (a real push service delivers again), and the tag makes
 * a second delivery replace the first, never add to it. */
async function deliverUntilShown(m) {
  for (let attempt = 1; ; attempt++) {
    await deliver(m);
    try {
      return await shownWith(m.tag, 5_000);
    } catch (e) {
      if (attempt >= 4) throw e;
    }
  }
}

/** The app's service worker, started again if it had stopped. */
async function serviceWorker() {
  const url = `${rig.base}/app/sw.js`;
  const running = browser.context.serviceWorkers().find((w) => w.url() === url);
  if (running) return running;
  const started = browser.context.waitForEvent('serviceworker', { predicate: (w) => w.url() === url });
  // A request of the page's under the worker's scope starts it.
  await page.evaluate(() => fetch('/app/favicon.svg'));
  return started;
}

/** A click on the notification `tag`, on its button `action` ('' for the notification itself),
 * dispatched in the worker as the browser would. */
async function click(tag, action) {
  const worker = await serviceWorker();
  await worker.evaluate(
    async ([tag, action]) => {
      const [n] = await self.registration.getNotifications({ tag });
      if (!n) throw new Error(`no notification ${tag}`);
      self.dispatchEvent(new NotificationEvent('notificationclick', { notification: n, action }));
    },
    [tag, action],
  );
}

/** The ask.answered event of `ask`, once there is one. */
function answeredEvent(ask) {
  return waitFor(`${ask} answered`, async () => (await rig.sock('system.events', { types: ['ask.answered'], limit: 100 })).find((e) => e.payload.ask === ask), 60_000, 200);
}

async function openSettings() {
  await page.click('[data-nav=settings]');
  const section = page.getByTestId('push');
  await section.getByTestId('push-state').waitFor();
  return section;
}

it('Settings turns notifications on for this browser, and vyred has its subscription', T, async () => {
  const section = await openSettings();
  assert.match(await section.getByTestId('push-about').innerText(), /asks for your OK/i);
  assert.equal(await section.getByTestId('push-state').getAttribute('data-state'), 'off');
  await section.getByTestId('push-on').click();
  await section.locator('[data-testid=push-state][data-state=on]').waitFor();
  assert.equal(await section.getByTestId('push-error').count(), 0);
  // Subscribed for vyred's key, to show every push.
  const { public_key } = await rig.sock('push.key');
  assert.equal(await page.evaluate(() => localStorage.getItem('vyre-test-push')), public_key);
  assert.equal(await page.evaluate(() => localStorage.getItem('vyre-test-push-visible')), 'true');
  const listed = await rig.sock('push.list');
  assert.equal(listed.length, 1, JSON.stringify(listed));
  assert.equal(listed[0].device, device);
  assert.equal(listed[0].last_error, null);
  const mine = await fromPage(page, 'push.list');
  assert.deepEqual(mine.data.map((e) => [e.device, e.mine]), [[device, true]]);
  // Subscribing again (another Turn on) replaces it, not adds.
  assert.ok((await fromPage(page, 'push.subscribe', { endpoint: sub.endpoint, keys: sub.keys })).data);
  assert.equal((await rig.sock('push.list')).length, 1);

  await section.scrollIntoViewIfNeeded();
  await shot(page, 'settings-push');
  // The section itself, at both sizes (the page's shot shows where the window was scrolled).
  mkdirSync(SHOTS, { recursive: true });
  await section.screenshot({ path: join(SHOTS, 'settings-push-section-desktop.png') });
  await page.setViewportSize(PHONE);
  try {
    await section.screenshot({ path: join(SHOTS, 'settings-push-section-phone.png') });
  } finally {
    await page.setViewportSize(DESKTOP);
  }
});

it('an ask is pushed, shows with Allow and Deny, and Allow on the notification answers it', { ...T, skip: noClaude }, async () => {
  const { thread } = await rig.sock('threads.start', { cwd: rig.work, text: 'RUNBASH touch pushed.txt' });
  const got = await receivedWhere('the ask pushed', (m) => m.payload?.kind === 'ask' && m.payload.thread === thread);
  const m = got.payload;
  const { asks } = await rig.sock('threads.get', { thread });
  assert.deepEqual(asks.map((a) => a.ask), [m.ask]);
  assert.equal(m.v, 1);
  assert.equal(m.tag, `ask:${m.ask}`);
  assert.deepEqual(m.actions, ['allow', 'deny']);
  assert.equal(m.url, `/app/t/${thread}`);
  assert.equal(typeof m.title, 'string');
  assert.match(m.body, /touch pushed\.txt/);
  // Sent as an ask should be: collapsible under its topic, urgent, signed by vyred for this
  // push service.
  assert.match(got.topic, /^[A-Za-z0-9_-]{1,32}$/);
  assert.equal(got.urgency, 'high');
  assert.ok(got.ttl > 0);
  assert.equal(got.vapid.aud, new URL(pushService.url).origin);
  assert.equal(got.vapid.k, (await rig.sock('push.key')).public_key);
  assert.match(got.vapid.sub, /^(mailto:|https:)/);

  const [shown] = await deliverUntilShown(m);
  assert.equal(shown.title, m.title);
  assert.equal(shown.body, m.body);
  assert.deepEqual(shown.actions, [
    { action: 'allow', title: 'Allow' },
    { action: 'deny', title: 'Deny' },
  ]);
  assert.equal(shown.requireInteraction, true);
  assert.deepEqual(shown.data, m);

  await click(m.tag, 'allow');
  const answered = await answeredEvent(m.ask);
  assert.equal(answered.payload.decision, 'allow');
  assert.equal(answered.payload.by, `device:${device}`);
  assert.equal(answered.payload.via, 'notification');
  await waitFor('the allowed command to run', () => existsSync(join(rig.work, 'pushed.txt')), 60_000);
  const finished = await waitFor('the turn to finish', async () => (await rig.sock('system.events', { types: ['thread.finished'], thread, limit: 10 }))[0], 60_000, 200);
  assert.equal(finished.payload.ok, true, JSON.stringify(finished.payload));
  assert.deepEqual(await notifications(m.tag), [], 'the notification closed itself');
});

it('an ask answered in the app is withdrawn, and its notification closes', { ...T, skip: noClaude }, async () => {
  const { thread } = await rig.sock('threads.start', { cwd: rig.work, text: 'RUNBASH touch answered-in-the-app.txt' });
  const got = await receivedWhere('the second ask pushed', (m) => m.payload?.kind === 'ask' && m.payload.thread === thread);
  const m = got.payload;
  await deliverUntilShown(m);

  await page.click('[data-nav=needs]');
  const card = page.locator(`[data-testid=ask][data-ask="${m.ask}"]`);
  await card.waitFor({ timeout: 30_000 });
  await card.getByTestId('allow').click();
  const answered = await answeredEvent(m.ask);
  assert.equal(answered.payload.by, `device:${device}`);
  assert.equal(answered.payload.via ?? null, null, 'not from the notification');

  const withdrawn = await receivedWhere('the withdrawal', (w) => w.payload?.kind === 'withdraw' && w.payload.ask === m.ask, 30_000);
  assert.deepEqual(withdrawn.payload, { v: 1, kind: 'withdraw', tag: m.tag, ask: m.ask });
  assert.equal(withdrawn.topic, got.topic, 'under the ask\'s topic, so a push service still holding the ask drops it');
  await deliver(withdrawn.payload);
  await waitFor('the notification to close', async () => (await notifications(m.tag)).length === 0);
  await waitFor('the allowed command to run', () => existsSync(join(rig.work, 'answered-in-the-app.txt')), 60_000);
});

it('a push service not in push.services is refused, and only a browser subscribes', T, async () => {
  const refused = await fromPage(page, 'push.subscribe', { endpoint: 'https://push.elsewhere.example/send/abc', keys: sub.keys });
  assert.equal(refused.error?.code, 'push_service_refused', JSON.stringify(refused));
  await assert.rejects(rig.sock('push.subscribe', { endpoint: sub.endpoint, keys: sub.keys }), (e) => e.code === 'device_only');
  assert.equal((await rig.sock('push.list')).length, 1);
});

it('Send a test: the notification comes, and a click on it shows Settings in the open window', T, async () => {
  const section = await openSettings();
  await section.getByTestId('push-test').click();
  await section.getByTestId('push-tested').waitFor();
  const got = await receivedWhere('the test pushed', (m) => m.payload?.kind === 'test', 30_000);
  assert.equal(got.payload.tag, 'test');
  assert.equal(got.payload.url, '/app/settings');
  await deliver(got.payload);
  const [shown] = await shownWith('test');
  assert.deepEqual(shown.actions, []);
  assert.equal(shown.requireInteraction, false);

  // From elsewhere in the app, the page kept (not loaded again): the worker tells it where to go.
  await page.click('[data-nav=deck]');
  await page.waitForURL((u) => u.pathname === '/app/deck');
  await page.evaluate(() => (window.__vyreStayed = true));
  await click('test', '');
  await page.waitForURL((u) => u.pathname === '/app/settings');
  await page.getByTestId('push').waitFor();
  assert.equal(await page.evaluate(() => window.__vyreStayed), true, 'the same page, routed by the app');
  assert.deepEqual(await notifications('test'), []);
});

it('a subscription its push service dropped is forgotten; Turn off forgets this browser\'s', T, async () => {
  const section = await openSettings();
  // The push service drops it (410 Gone from now on): the next send finds out.
  const r = await fetch(`${pushService.url}/push/subscriptions/${sub.id}`, { method: 'DELETE' });
  assert.ok(r.ok, `delete: ${r.status}`);
  await section.getByTestId('push-test').click();
  await section.getByTestId('push-error').waitFor();
  assert.match(await section.getByTestId('push-error').innerText(), /^The test notification could not be sent\./);
  await waitFor('vyred to forget it', async () => (await rig.sock('push.list')).length === 0);
  // This browser still holds it: Settings says vyred does not have it, and offers Turn on.
  await section.locator('[data-testid=push-state][data-state=unknown]').waitFor();
  await section.getByTestId('push-off').click();
  await section.locator('[data-testid=push-state][data-state=off]').waitFor();
  assert.equal(await page.evaluate(() => localStorage.getItem('vyre-test-push')), null, 'the browser dropped it');
  assert.deepEqual(await rig.sock('push.list'), []);
});

it('with notifications blocked, Settings says so and how to allow them again', T, async () => {
  // Headless Chromium answers the permission's question with a no once nothing grants it.
  await browser.context.clearPermissions();
  await page.reload();
  const section = await openSettings();
  assert.equal(await section.getByTestId('push-state').getAttribute('data-state'), 'off');
  await section.getByTestId('push-on').click();
  await section.locator('[data-testid=push-state][data-state=blocked]').waitFor();
  assert.match(await section.getByTestId('push-blocked').innerText(), /To allow them again, click the icon left of the address, open Site settings/);
  assert.equal(await section.getByTestId('push-on').count(), 0, 'nothing to press: only the browser can allow them again');
  assert.equal(await section.getByTestId('push-error').count(), 0, 'said once, as the blocked state');
  assert.deepEqual(await rig.sock('push.list'), []);
  mkdirSync(SHOTS, { recursive: true });
  await section.screenshot({ path: join(SHOTS, 'settings-push-blocked.png') });
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});
