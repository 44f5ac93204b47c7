// The service worker (src/sw.ts → /app/sw.js) is registered here, once the page has loaded:
// only by a production build in a secure context (the phone opens https://<name>.vyre.run/app/;
// this machine's own address counts too), never in the Mac app or Lumen. See lib/offline.ts.
// Once it is, the page listens for the worker asking it to show an address (a click on a
// notification, lib/push.ts), and the worker's copy of the key follows this browser's
// notifications (lib/workerkey.ts).

import { shouldRegister } from './offline';
import { openRequest } from './push';
import { refreshWorkerKey } from './notifications';
import { inApp } from './tauri';

export function registerWorker(lumen: boolean): void {
  const at = {
    prod: import.meta.env.PROD,
    secure: window.isSecureContext,
    supported: 'serviceWorker' in navigator,
    inApp: inApp(window),
    lumen,
  };
  if (!shouldRegister(at)) return;
  const base = import.meta.env.BASE_URL; // /app/
  navigator.serviceWorker.addEventListener('message', (e) => {
    const path = openRequest(e.data, location.origin);
    if (!path) return;
    // The app's own router: the page is not loaded again, whatever it holds stays.
    void import('./app.svelte').then(({ navigate, parseRoute }) => navigate(parseRoute(new URL(path, location.origin))));
  });
  const register = () =>
    navigator.serviceWorker
      .register(`${base}sw.js`, { scope: base, updateViaCache: 'none' })
      .then(() => refreshWorkerKey())
      .catch((e) => {
        // The app works without it, only not offline.
        console.warn('Vyre: the offline worker did not register:', e);
      });
  if (document.readyState === 'complete') void register();
  else window.addEventListener('load', () => void register(), { once: true });
}
