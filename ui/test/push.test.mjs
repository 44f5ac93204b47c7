// Web Push, decided (src/lib/push.ts): what the service worker shows for each message vyred
// pushes, what a click does, and what Settings says about this browser's notifications.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ANSWER_PATH,
  OPEN_MESSAGE,
  answered,
  appUrl,
  clickPlan,
  isIos,
  keyBytes,
  openRequest,
  pickWindow,
  pushError,
  pushPlan,
  pushSupport,
  pushView,
  readMessage,
  sameKey,
  subscriptionInput,
  testText,
  unblockHelp,
} from '../.test-build/push.js';

const SCOPE = 'https://ada.vyre.run/app/';
const ASK = {
  v: 1,
  kind: 'ask',
  tag: 'ask:a1',
  ask: 'a1',
  thread: 't1',
  title: 'Run a command?',
  body: 'touch pushed.txt',
  actions: ['allow', 'deny'],
  url: '/app/t/t1',
};
const msg = (o) => readMessage(JSON.stringify(o));

test('a pushed message is read only when it is one of vyred\'s', () => {
  assert.deepEqual(msg(ASK), ASK);
  for (const bad of [null, undefined, '', 'not json', '[]', '"ask"', '{}', '{"v":2,"kind":"ask","tag":"x"}', '{"v":1,"tag":"x"}', '{"v":1,"kind":"ask"}']) {
    assert.equal(readMessage(bad), null, String(bad));
  }
  // Fields of the wrong type are left out, not trusted.
  const m = msg({ v: 1, kind: 'ask', tag: 'ask:a', ask: 7, title: ['x'], actions: ['allow', 3, null, 'deny'] });
  assert.equal(m.ask, undefined);
  assert.equal(m.title, undefined);
  assert.deepEqual(m.actions, ['allow', 'deny']);
  assert.deepEqual(msg({ v: 1, kind: 'test', tag: 'test', title: 'T' }).actions, []);
});

test('an ask shows with Allow and Deny, stays until answered, and carries itself for the click', () => {
  const plan = pushPlan(msg(ASK), SCOPE);
  assert.ok('show' in plan);
  const { title, options } = plan.show;
  assert.equal(title, 'Run a command?');
  assert.equal(options.body, 'touch pushed.txt');
  assert.equal(options.tag, 'ask:a1');
  assert.deepEqual(options.actions, [
    { action: 'allow', title: 'Allow' },
    { action: 'deny', title: 'Deny' },
  ]);
  assert.equal(options.requireInteraction, true);
  assert.equal(options.renotify, false);
  assert.equal(options.icon, '/app/icons/icon-192.png');
  assert.deepEqual(options.data, ASK);
});

test('the buttons are the ones vyred offered, in their order: Deny alone for a destructive ask, none for a question', () => {
  const buttons = (actions) => pushPlan(msg({ ...ASK, actions }), SCOPE).show.options.actions.map((b) => b.action);
  assert.deepEqual(buttons(['deny']), ['deny']);
  assert.deepEqual(buttons(['deny', 'allow']), ['allow', 'deny']);
  assert.deepEqual(buttons([]), []);
  assert.deepEqual(buttons(['always', 'open']), [], 'nothing the worker does not know');
  assert.deepEqual(pushPlan(msg({ ...ASK, actions: undefined }), SCOPE).show.options.actions, []);
});

test('a withdrawal closes the ask\'s notification and shows nothing; the test shows without buttons', () => {
  assert.deepEqual(pushPlan(msg({ v: 1, kind: 'withdraw', tag: 'ask:a1', ask: 'a1' }), SCOPE), { close: 'ask:a1' });
  const t = pushPlan(msg({ v: 1, kind: 'test', tag: 'test', title: 'Vyre', body: 'It works.', url: '/app/settings', actions: ['allow'] }), SCOPE);
  assert.equal(t.show.title, 'Vyre');
  assert.equal(t.show.options.tag, 'test');
  assert.deepEqual(t.show.options.actions, [], 'only an ask answers');
  assert.equal(t.show.options.requireInteraction, false);
  assert.equal(t.show.options.renotify, true, 'a second test alerts again');
  assert.ok('nothing' in pushPlan(null, SCOPE));
  assert.ok('nothing' in pushPlan(msg({ v: 1, kind: 'ask', tag: 'ask:x' }), SCOPE), 'nothing to say without a title');
});

test('Allow and Deny answer the ask from the notification; anything else opens its thread', () => {
  assert.deepEqual(clickPlan(ASK, 'allow', SCOPE), { answer: { ask: 'a1', decision: 'allow', via: 'notification' }, open: '/app/t/t1' });
  assert.deepEqual(clickPlan(ASK, 'deny', SCOPE), { answer: { ask: 'a1', decision: 'deny', via: 'notification' }, open: '/app/t/t1' });
  assert.deepEqual(clickPlan(ASK, '', SCOPE), { answer: null, open: '/app/t/t1' });
  // A decision vyred did not offer (Allow on a destructive ask) is never sent.
  assert.equal(clickPlan({ ...ASK, actions: ['deny'] }, 'allow', SCOPE).answer, null);
  assert.equal(clickPlan({ ...ASK, actions: [] }, 'deny', SCOPE).answer, null);
  assert.equal(clickPlan({ ...ASK, kind: 'test' }, 'allow', SCOPE).answer, null);
  assert.equal(clickPlan({ ...ASK, ask: '' }, 'allow', SCOPE).answer, null);
  assert.equal(clickPlan(ASK, 'always', SCOPE).answer, null);
  assert.deepEqual(clickPlan(null, 'allow', SCOPE), { answer: null, open: '/app/' });
  assert.deepEqual(clickPlan({ v: 1, kind: 'test', tag: 'test', url: '/app/settings' }, '', SCOPE), { answer: null, open: '/app/settings' });
  assert.equal(ANSWER_PATH, '/v1/tools/threads.answer');
});

test('a notification opens only the app: another origin or a path outside it opens its home', () => {
  assert.equal(appUrl('/app/t/t1', SCOPE), '/app/t/t1');
  assert.equal(appUrl('https://ada.vyre.run/app/settings?x=1#y', SCOPE), '/app/settings?x=1#y');
  assert.equal(appUrl('t/t2', SCOPE), '/app/t/t2');
  assert.equal(appUrl('/app', SCOPE), '/app');
  for (const bad of [undefined, '', 'https://evil.example/app/t/1', '//evil.example/app/', '/v1/tools/devices.revoke', '/application', 'http://ada.vyre.run/app/', 'javascript:alert(1)']) {
    assert.equal(appUrl(bad, SCOPE), '/app/', String(bad));
  }
});

test('vyred took an answer only on success with data', () => {
  assert.equal(answered(200, { data: { ok: true } }), true);
  assert.equal(answered(200, { data: null }), true);
  assert.equal(answered(200, { error: { code: 'x' } }), false);
  assert.equal(answered(401, { error: { code: 'key_missing' } }), false);
  assert.equal(answered(404, { data: {} }), false);
  assert.equal(answered(200, null), false);
  assert.equal(answered(502, 'Bad gateway'), false);
});

test('a click brings forward the focused window of the app, else a visible one, else any', () => {
  const w = (url, focused = false, visibilityState = 'hidden') => ({ url, focused, visibilityState });
  const a = w('https://ada.vyre.run/app/deck');
  const b = w('https://ada.vyre.run/app/', false, 'visible');
  const c = w('https://ada.vyre.run/app/t/1', true, 'visible');
  assert.equal(pickWindow([a, b, c], SCOPE), c);
  assert.equal(pickWindow([a, b], SCOPE), b);
  assert.equal(pickWindow([a], SCOPE), a);
  assert.equal(pickWindow([], SCOPE), null);
  // Not the app's: the onboarding page, another origin.
  assert.equal(pickWindow([w('https://ada.vyre.run/onboard', true, 'visible'), w('https://other.example/app/', true, 'visible')], SCOPE), null);
});

test('the page takes the worker\'s "show this address" only for an address of the app', () => {
  const origin = 'https://ada.vyre.run';
  assert.equal(openRequest({ type: OPEN_MESSAGE, url: '/app/t/t1' }, origin), '/app/t/t1');
  assert.equal(openRequest({ type: OPEN_MESSAGE, url: 'https://evil.example/' }, origin), '/app/');
  assert.equal(openRequest({ type: 'other', url: '/app/t/t1' }, origin), null);
  assert.equal(openRequest({ type: OPEN_MESSAGE }, origin), null);
  assert.equal(openRequest('vyre:open', origin), null);
  assert.equal(openRequest(null, origin), null);
});

const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1';
const IPAD = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15';
const ANDROID = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const all = { secure: true, serviceWorker: true, pushManager: true, notification: true, standalone: false, userAgent: CHROME, touchPoints: 0, inApp: false };

test('whether this browser can get notifications, and why not in words', () => {
  assert.deepEqual(pushSupport(all), { ok: true });
  // Safari on an iPhone: only from the Home Screen.
  const tab = pushSupport({ ...all, userAgent: IPHONE, pushManager: false, notification: false });
  assert.equal(tab.ok, false);
  assert.match(tab.why, /Home Screen first/);
  assert.match(pushSupport({ ...all, userAgent: IPAD, touchPoints: 5, pushManager: false, notification: false }).why, /Home Screen/);
  assert.deepEqual(pushSupport({ ...all, userAgent: IPHONE, standalone: true }), { ok: true });
  assert.match(pushSupport({ ...all, secure: false }).why, /secure address/);
  assert.match(pushSupport({ ...all, pushManager: false }).why, /cannot show notifications/);
  assert.match(pushSupport({ ...all, inApp: true }).why, /Mac app/);
  assert.equal(isIos(IPAD, 0), false, 'a Mac is not an iPad');
  assert.equal(isIos(IPAD, 5), true);
  assert.equal(isIos(ANDROID), false);
});

test('vyred\'s key, base64url without padding, becomes the 65 bytes of its point', () => {
  const bytes = new Uint8Array(65).map((_, i) => (i === 0 ? 4 : (i * 37) & 255));
  const b64url = Buffer.from(bytes).toString('base64url');
  assert.ok(!b64url.includes('='));
  assert.deepEqual([...keyBytes(b64url)], [...bytes]);
  assert.deepEqual([...keyBytes(' _-8 ')], [...Buffer.from('_-8', 'base64url')]);
  assert.equal(sameKey(bytes.buffer.slice(0), keyBytes(b64url)), true);
  assert.equal(sameKey(new Uint8Array(65).buffer, keyBytes(b64url)), false);
  assert.equal(sameKey(null, keyBytes(b64url)), true, 'an unknown key keeps the subscription');
});

test('push.subscribe gets the endpoint and keys, without the expiry', () => {
  const json = { endpoint: 'https://push.example/s/1', expirationTime: null, keys: { p256dh: 'BPk', auth: 'au' } };
  assert.deepEqual(subscriptionInput(json), { endpoint: 'https://push.example/s/1', keys: { p256dh: 'BPk', auth: 'au' } });
  assert.throws(() => subscriptionInput({ endpoint: 'https://push.example/s/1' }), /keys/);
  assert.throws(() => subscriptionInput({ keys: { p256dh: 'a', auth: 'b' } }), /address/);
});

test('the state and the buttons Settings offers', () => {
  const on = pushView({ permission: 'granted', subscribed: true, known: true });
  assert.equal(on.status, 'on');
  assert.deepEqual([on.canTurnOn, on.canTurnOff, on.canTest], [false, true, true]);
  const off = pushView({ permission: 'default', subscribed: false, known: false });
  assert.equal(off.status, 'off');
  assert.deepEqual([off.canTurnOn, off.canTurnOff, off.canTest], [true, false, false]);
  const stale = pushView({ permission: 'granted', subscribed: true, known: false });
  assert.equal(stale.status, 'unknown');
  assert.equal(stale.canTurnOn, true);
  // vyred still has one this browser lost: Turn on makes a new one, Turn off tidies it.
  const lost = pushView({ permission: 'granted', subscribed: false, known: true });
  assert.deepEqual([lost.status, lost.canTurnOn, lost.canTurnOff], ['off', true, true]);
  const blocked = pushView({ permission: 'denied', subscribed: false, known: false });
  assert.equal(blocked.status, 'blocked');
  assert.deepEqual([blocked.canTurnOn, blocked.canTurnOff, blocked.canTest], [false, false, false]);
  assert.equal(pushView({ permission: 'denied', subscribed: true, known: true }).canTurnOff, true);
});

test('how to allow notifications again, for the browser at hand', () => {
  assert.match(unblockHelp(IPHONE), /Settings, then Notifications, then Vyre/);
  assert.match(unblockHelp(ANDROID), /tap/);
  assert.match(unblockHelp(FIREFOX), /clear the blocked/);
  assert.match(unblockHelp(CHROME), /Site settings/);
  assert.match(unblockHelp(IPAD, 0), /Safari’s Settings/);
});

test('a refusal in words, vyred\'s message kept beside it', () => {
  const r = pushError('push_service_refused', ' https://push.example is not in push.services ');
  assert.match(r.text, /push services/);
  assert.equal(r.detail, 'https://push.example is not in push.services');
  assert.match(pushError('device_only', 'x').text, /signed-in browser/);
  assert.match(pushError('not_subscribed', 'x').text, /turn notifications on first/);
  assert.match(pushError('permission_denied', '').text, /not allowed/);
  assert.match(pushError('permission_default', '').text, /Turn on again/);
  assert.match(pushError('no_worker', '').text, /Reload/);
  assert.match(pushError('subscribe_failed', 'AbortError').text, /push service/);
  assert.deepEqual(pushError('offline', 'Vyre did not answer. Is vyred running?'), { text: 'Vyre did not answer. Is vyred running?', detail: '' });
  assert.deepEqual(pushError('boom', 'it broke'), { text: 'That did not work.', detail: 'it broke' });
});

test('a test\'s outcome in words', () => {
  assert.deepEqual(testText({ sent: 1, failed: 0 }), { text: 'A test notification is on its way.', ok: true });
  assert.equal(testText({ sent: 2, failed: 0 }).text, '2 test notifications are on their way.');
  assert.equal(testText({ sent: 0, failed: 0 }).ok, false);
  assert.match(testText({ sent: 0, failed: 0 }).text, /turn notifications on/);
  assert.equal(testText({ sent: 0, failed: 1 }).ok, false);
  assert.equal(testText({ sent: 1, failed: 1 }).text, '1 sent, 1 could not be sent.');
});
