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

import { SHELL_WAIT_MS, cacheName, handling, networkFirst, oldCaches } from './lib/offline';

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
// A later change adds its handlers here, beside the ones above:
//   sw.addEventListener('push', …)              show what needs the person (an ask, a turn done)
//   sw.addEventListener('notificationclick', …) focus an open window of the app, else open the
//                                               address the notification carries (under /app/)
// Until then the app asks for no permission and subscribes to nothing.
// ─────────────────────────────────────────────────────────────────────────────────────────────
