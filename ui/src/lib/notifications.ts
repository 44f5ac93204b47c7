// This browser's notifications, the page's side: whether it can get them, turning them on
// (the browser's permission, a subscription from its push service for vyred's key, handed to
// vyred with push.subscribe) and off, where they stand, and a test. What each step decides is in
// lib/push.ts; the service worker (src/sw.ts) shows what vyred pushes and answers from a button.

import { ApiError, call } from './api';
import { browserKey } from './key';
import { inApp } from './tauri';
import { shareKey } from './workerkey';
import { keyBytes, pushSupport, sameKey, subscriptionInput, type PushFacts } from './push';
import type { ToolOutput } from './api';

/** A subscription as `push.list` shows it (`mine`: this browser's device's). */
export type PushEntry = ToolOutput<'push.list'>[number];

/** Whether this browser can get notifications, and if not, why in words. */
export function support(): { ok: true } | { ok: false; why: string } {
  const nav = navigator as Navigator & { standalone?: boolean };
  return pushSupport({
    secure: window.isSecureContext,
    serviceWorker: 'serviceWorker' in navigator,
    pushManager: 'PushManager' in window,
    notification: 'Notification' in window,
    standalone: nav.standalone === true || window.matchMedia?.('(display-mode: standalone)').matches === true,
    userAgent: navigator.userAgent,
    touchPoints: navigator.maxTouchPoints ?? 0,
    inApp: inApp(window),
  });
}

/** The app's worker registration, once active (src/lib/worker.ts registers it when the page
 * has loaded): null when there is none within `waitMs`, as in a development build. */
async function registration(waitMs = 10_000): Promise<ServiceWorkerRegistration | null> {
  if (!('serviceWorker' in navigator)) return null;
  const deadline = Date.now() + waitMs;
  while (!(await navigator.serviceWorker.getRegistration(import.meta.env.BASE_URL))) {
    if (Date.now() > deadline) return null;
    await new Promise((t) => setTimeout(t, 250));
  }
  const late = new Promise<null>((done) => setTimeout(() => done(null), Math.max(0, deadline - Date.now())));
  return Promise.race([navigator.serviceWorker.ready, late]);
}

/** This browser's subscription, when it has one. */
async function subscription(): Promise<PushSubscription | null> {
  const reg = await registration(3000);
  return reg ? reg.pushManager.getSubscription() : null;
}

function permission(): PushFacts['permission'] {
  return 'Notification' in window ? Notification.permission : 'default';
}

/** Where this browser's notifications stand, and the subscriptions vyred has (every device's). */
export async function loadState(): Promise<{ facts: PushFacts; entries: PushEntry[] }> {
  const [sub, entries] = await Promise.all([subscription().catch(() => null), call('push.list')]);
  const known = !!sub && entries.some((e) => e.mine);
  // The worker's copy of the key follows the key the page holds now (a new sign-in changes it).
  if (sub) void shareKey(browserKey());
  return { facts: { permission: permission(), subscribed: !!sub, known }, entries };
}

/** A failure of the browser's part, in the same shape as vyred's (`lib/push.ts` says it in words). */
function refused(code: string, message: string): ApiError {
  return new ApiError(0, code, message);
}

/**
 * Turn notifications on here: the browser's permission (asked now: call it from a click), a
 * subscription for vyred's key (a subscription made for another key is replaced), and vyred told.
 */
export async function turnOn(): Promise<void> {
  const asked = await Notification.requestPermission();
  if (asked !== 'granted') throw refused(`permission_${asked}`, asked === 'denied' ? 'The browser blocks notifications for this site.' : '');
  const reg = await registration();
  if (!reg) throw refused('no_worker', 'No service worker controls this page.');
  const { public_key } = await call('push.key');
  const key = keyBytes(public_key);
  let sub = await reg.pushManager.getSubscription();
  if (sub && !sameKey(sub.options?.applicationServerKey, key)) {
    await sub.unsubscribe().catch(() => false);
    sub = null;
  }
  if (!sub) {
    try {
      sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
    } catch (e) {
      throw refused('subscribe_failed', e instanceof Error ? e.message : String(e));
    }
  }
  await shareKey(browserKey());
  await call('push.subscribe', subscriptionInput(sub.toJSON()));
}

/** Turn notifications off here: vyred forgets the subscription and the browser drops it. The
 * browser's part happens even when vyred cannot be told (a later push finds it gone). */
export async function turnOff(): Promise<void> {
  const sub = await subscription().catch(() => null);
  try {
    if (sub) await call('push.unsubscribe', { endpoint: sub.endpoint });
  } finally {
    await sub?.unsubscribe().catch(() => false);
    await shareKey(null);
  }
}

/** A test notification to this device's subscriptions. */
export function sendTest(): Promise<ToolOutput<'push.test'>> {
  return call('push.test');
}

/** At the app's start: the worker's copy of the key follows this browser's subscription (kept
 * while there is one, deleted when there is none). */
export async function refreshWorkerKey(): Promise<void> {
  if (!('serviceWorker' in navigator) || !window.isSecureContext) return;
  const reg = await navigator.serviceWorker.getRegistration(import.meta.env.BASE_URL).catch(() => undefined);
  if (!reg || !('pushManager' in reg)) return;
  const sub = await reg.pushManager.getSubscription().catch(() => null);
  await shareKey(sub ? browserKey() : null);
}
