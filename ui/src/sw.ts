// The app's service worker, built by `npm run build` into dist/sw.js (a plain script, served at
// /app/sw.js, scope /app/: the `serviceWorker` plugin in vite.config.ts builds it after the app,
// with the build's id and its files written in). Registered by src/lib/worker.ts.
//
// It keeps this build's app shell so the app opens without the network and says it cannot reach
// Vyre; what it does with each request is decided in src/lib/offline.ts (`handling`):
// - /v1/ (the API, the event stream, file downloads) is never answered or cached here;
// - a page of the app: the network first, the cached shell when the network fails;
// - a file of this build: the cache first.
// Its cache is named after the build; a new build's worker replaces it at once and deletes the
// older builds' caches.
//
// It also shows the notifications vyred pushes and answers an ask from one (Web Push, below).

import { SHELL_WAIT_MS, cacheName, handling, networkFirst, oldCaches } from './lib/offline';
import { ANSWER_PATH, OPEN_MESSAGE, answered, clickPlan, pickWindow, pushPlan, readMessage, subscriptionInput, type ClickPlan, type NotificationShape, type PushPlan } from './lib/push';
import { KEY_HEADER } from './lib/key';
import { sharedKey } from './lib/workerkey';

/** The build's id: a hash of every file the build wrote (written in by vite.config.ts). */
declare const __VYRE_BUILD__: string;
/** The build's files as paths (`/app/`, the shell, first), written in by vite.config.ts. */
declare const __VYRE_PRECACHE__: string[];

// The worker's own globals (the DOM's types are the project's; these are the few it uses).
interface LifeEvent extends Event {
  waitUntil(work: Promise<unknown>): void;
}
interface FetchEvent extends LifeEvent {
  request: Request;
  respondWith(answer: Promise<Response> | Response): void;
}
interface WorkerScope {
  registration: { scope: string };
  skipWaiting(): Promise<void>;
  clients: { claim(): Promise<void> };
  addEventListener(type: 'install' | 'activate', f: (e: LifeEvent) => void): void;
  addEventListener(type: 'fetch', f: (e: FetchEvent) => void): void;
}

// Web Push's (the DOM's types leave the worker's side out).
interface PushEvent extends LifeEvent {
  data: { text(): string } | null;
}
interface NotificationClickEvent extends LifeEvent {
  notification: Notification;
  action: string;
}
interface SubscriptionChangeEvent extends LifeEvent {
  oldSubscription: PushSubscription | null;
  newSubscription: PushSubscription | null;
}
interface WindowClient {
  url: string;
  focused: boolean;
  visibilityState: string;
  focus(): Promise<WindowClient>;
  postMessage(message: unknown): void;
}
interface PushScope {
  registration: {
    scope: string;
    pushManager: PushManager;
    showNotification(title: string, options: NotificationShape['options']): Promise<void>;
    getNotifications(filter?: { tag?: string }): Promise<Notification[]>;
  };
  clients: {
    matchAll(options: { type: 'window'; includeUncontrolled: boolean }): Promise<WindowClient[]>;
    openWindow(url: string): Promise<WindowClient | null>;
  };
  addEventListener(type: 'push', f: (e: PushEvent) => void): void;
  addEventListener(type: 'notificationclick', f: (e: NotificationClickEvent) => void): void;
  addEventListener(type: 'pushsubscriptionchange', f: (e: SubscriptionChangeEvent) => void): void;
}

const sw = self as unknown as WorkerScope;
const CACHE = cacheName(__VYRE_BUILD__);
const FILES = __VYRE_PRECACHE__;
const SHELL = FILES[0];
const PRECACHED = new Set(FILES);

sw.addEventListener('install', (e) => {
  e.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      // Past the browser's HTTP cache: what is kept is what vyred serves now. One file missing
      // fails the install, and the worker before (if any) stays.
      await cache.addAll(FILES.map((path) => new Request(path, { cache: 'no-cache' })));
      // A new build takes over at once: its shell is the one the network gives anyway.
      await sw.skipWaiting();
    })(),
  );
});

sw.addEventListener('activate', (e) => {
  e.waitUntil(
    (async () => {
      for (const name of oldCaches(await caches.keys(), CACHE)) await caches.delete(name);
      await sw.clients.claim();
    })(),
  );
});

sw.addEventListener('fetch', (e) => {
  const how = handling(e.request, sw.registration.scope, PRECACHED);
  // Not ours (the API above all): no answer, so the browser asks the network as without a worker.
  if (how === 'pass') return;
  if (how === 'navigate') {
    const request = e.request;
    e.respondWith(
      networkFirst(
        () => fetch(request),
        () => caches.open(CACHE).then((c) => c.match(SHELL)),
        SHELL_WAIT_MS,
      ),
    );
    return;
  }
  const request = e.request;
  e.respondWith(caches.open(CACHE).then(async (c) => (await c.match(request)) ?? fetch(request)));
});

// ─── Web Push ────────────────────────────────────────────────────────────────────────────────
// What vyred pushes (an ask for the person's OK, its withdrawal, Settings' test) becomes a
// notification here; what each message and each click does is decided in src/lib/push.ts.
// - push: show the message (an ask with Allow and Deny as vyred offers them), or close the
//   notification of an ask answered elsewhere. Shown whether or not a window of the app is open.
// - notificationclick: Allow or Deny answers the ask (threads.answer, `via: notification`), with
//   the browser's cookie and the key the page shared (lib/workerkey.ts); when that fails, or on a
//   click on the notification itself, the app shows the ask's thread: an open window of the app
//   is brought forward and told where to go, else a new one opens.
// Turning notifications on and off is the page's (src/lib/notifications.ts, from Settings).

const push = self as unknown as PushScope;

push.addEventListener('push', (e) => {
  const plan = pushPlan(readMessage(e.data?.text()), push.registration.scope);
  e.waitUntil(showPlan(plan));
});

async function showPlan(plan: PushPlan): Promise<void> {
  if ('close' in plan) {
    for (const n of await push.registration.getNotifications({ tag: plan.close })) n.close();
  } else if ('show' in plan) {
    await push.registration.showNotification(plan.show.title, plan.show.options);
  }
}

push.addEventListener('notificationclick', (e) => {
  // The work starts before waitUntil is called: waitUntil throws (InvalidStateError) for an
  // event a script dispatched rather than the browser (the browser tests press Allow that
  // way), and the answer must go out all the same. For the browser's own click, waitUntil keeps
  // the worker alive until the answer is in.
  const work = onClick(e.notification, e.action);
  try {
    e.waitUntil(work);
  } catch {
    /* an untrusted event: the work runs on without it */
  }
});

async function onClick(n: Notification, action: string): Promise<void> {
  n.close();
  const plan = clickPlan(n.data, action, push.registration.scope);
  if (plan.answer && (await sendAnswer(plan.answer))) return;
  await openApp(plan.open);
}

/** threads.answer from the worker; whether vyred took it. */
async function sendAnswer(answer: NonNullable<ClickPlan['answer']>): Promise<boolean> {
  const key = await sharedKey();
  try {
    const r = await fetch(ANSWER_PATH, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', ...(key ? { [KEY_HEADER]: key } : {}) },
      body: JSON.stringify(answer),
    });
    return answered(r.status, await r.json().catch(() => null));
  } catch {
    return false;
  }
}

/** The app at `path`: an open window brought forward and routed there, else a new window. */
async function openApp(path: string): Promise<void> {
  const open = await push.clients.matchAll({ type: 'window', includeUncontrolled: false });
  const win = pickWindow(open, push.registration.scope);
  if (win) {
    // Focusing needs the click's user activation; a window not brought forward still goes.
    await win.focus().catch(() => undefined);
    win.postMessage({ type: OPEN_MESSAGE, url: path });
    return;
  }
  await push.clients.openWindow(path).catch(() => null);
}

// The push service replaced this browser's subscription (it expired, or was renewed): vyred is
// given the new one, for the same key, and forgets the old.
push.addEventListener('pushsubscriptionchange', (e) => {
  e.waitUntil(
    (async () => {
      const old = e.oldSubscription ?? null;
      const key = old?.options?.applicationServerKey ?? null;
      const sub = e.newSubscription ?? (key ? await push.registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key }) : null);
      if (sub) await callTool('push.subscribe', subscriptionInput(sub.toJSON()));
      if (old && old.endpoint !== sub?.endpoint) await callTool('push.unsubscribe', { endpoint: old.endpoint });
    })().catch((err) => console.warn('Vyre: the renewed push subscription was not handed to Vyre:', err)),
  );
});

/** A tool called from the worker, with the key the page shared. */
async function callTool(tool: string, input: unknown): Promise<void> {
  const key = await sharedKey();
  const r = await fetch(`/v1/tools/${tool}`, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', ...(key ? { [KEY_HEADER]: key } : {}) },
    body: JSON.stringify(input),
  });
  if (!answered(r.status, await r.json().catch(() => null))) throw new Error(`${tool} answered ${r.status}`);
}
