// Web Push, decided: what the service worker (src/sw.ts) shows for each message vyred pushes and
// what a click on it does, and what Settings says about this browser's notifications (whether it
// can get them, their state, a refusal in words). Pure: no DOM, no worker, no network, so
// node --test covers it (ui/test/push.test.mjs). The effects are in lib/notifications.ts (the
// page's side: permission, subscription, vyred's push.* tools) and src/sw.ts (the worker's).
//
// vyred pushes JSON, encrypted for this browser's subscription (RFC 8291):
//   {v:1, kind:"ask", tag:"ask:<ask>", ask, thread, title, body, actions, url}  an ask for your OK
//   {v:1, kind:"withdraw", tag:"ask:<ask>", ask}   the ask was answered elsewhere or closed
//   {v:1, kind:"test", tag:"test", title, body, url}                           Settings' test
//   {v:1, kind:"notice", tag:"notice:<module>:<tag>", title, body, url}  another module's (the
//                                                        Gate's items, the planner's reminders)
// Every message is pushed whether or not the app is open: the worker never holds one back.

/** A message vyred pushed, as the worker reads it. */
export interface PushMessage {
  v: 1;
  kind: string;
  /** The notification's tag: a newer message with the same tag replaces it, a withdraw closes it. */
  tag: string;
  ask?: string;
  thread?: string;
  title?: string;
  body?: string;
  /** The buttons an ask offers: `allow`, `deny`, both or none (a question or a plan opens the app). */
  actions?: string[];
  /** Where a click opens the app (`/app/t/<thread>`). */
  url?: string;
}

/** The decisions a notification's buttons send (`threads.answer`'s `decision`). */
export type Decision = 'allow' | 'deny';

/** A button on a notification (the Notifications API's `NotificationAction`). */
export interface NotificationButton {
  action: Decision;
  title: string;
}

/** What `registration.showNotification` takes here (the DOM's types leave out the worker's
 * `actions` and `renotify`). */
export interface NotificationShape {
  title: string;
  options: {
    body: string;
    tag: string;
    /** The message itself: what a click reads back. */
    data: PushMessage;
    actions: NotificationButton[];
    /** An ask stays until it is answered, opened or withdrawn. */
    requireInteraction: boolean;
    /** A second test alerts again, though it replaces the first (same tag). */
    renotify: boolean;
    icon: string;
  };
}

/** What the worker does with a message. */
export type PushPlan = { show: NotificationShape } | { close: string } | { nothing: string };

/** The buttons an ask may carry, in the order they show. */
const BUTTONS: NotificationButton[] = [
  { action: 'allow', title: 'Allow' },
  { action: 'deny', title: 'Deny' },
];

/** The app's icon, beside the worker's scope (`/app/`). */
export const ICON_PATH = 'icons/icon-192.png';

function text(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** A pushed message from its text; null when it is not one of vyred's (not JSON, another
 * version, no tag). */
export function readMessage(data: string | null | undefined): PushMessage | null {
  if (!data) return null;
  let m: unknown;
  try {
    m = JSON.parse(data);
  } catch {
    return null;
  }
  if (!m || typeof m !== 'object' || Array.isArray(m)) return null;
  const o = m as Record<string, unknown>;
  const kind = text(o.kind);
  const tag = text(o.tag);
  if (o.v !== 1 || !kind || !tag) return null;
  return {
    v: 1,
    kind,
    tag,
    ask: text(o.ask),
    thread: text(o.thread),
    title: text(o.title),
    body: text(o.body),
    actions: Array.isArray(o.actions) ? o.actions.filter((a): a is string => typeof a === 'string') : [],
    url: text(o.url),
  };
}

/** What the worker does with `m` (from `readMessage`); `scope`: its registration's scope
 * (`https://ada.vyre.run/app/`), for the icon. */
export function pushPlan(m: PushMessage | null, scope: string): PushPlan {
  if (!m) return { nothing: 'not a message from Vyre' };
  if (m.kind === 'withdraw') return { close: m.tag };
  if (!m.title) return { nothing: `a ${m.kind} message without a title` };
  const ask = m.kind === 'ask';
  return {
    show: {
      title: m.title,
      options: {
        body: m.body ?? '',
        tag: m.tag,
        data: m,
        // Only an ask answers from the notification, and only with what vyred offered: a
        // destructive one offers Deny alone (a second look belongs in the app).
        actions: ask ? BUTTONS.filter((b) => m.actions?.includes(b.action)) : [],
        requireInteraction: ask,
        renotify: !ask,
        icon: new URL(ICON_PATH, scope).pathname,
      },
    },
  };
}

/** An address the notification may open: one under the worker's scope, as a path; anything
 * else (another origin, outside the app) opens the app's home. */
export function appUrl(url: string | undefined, scope: string): string {
  const home = new URL(scope);
  if (!url) return home.pathname;
  let u: URL;
  try {
    u = new URL(url, home);
  } catch {
    return home.pathname;
  }
  if (u.origin !== home.origin || !(u.pathname.startsWith(home.pathname) || u.pathname === home.pathname.replace(/\/$/, ''))) {
    return home.pathname;
  }
  return u.pathname + u.search + u.hash;
}

/** What a click on a notification does: answer its ask (then nothing more, unless the answer
 * fails), and the app's address to open otherwise. */
export interface ClickPlan {
  answer: { ask: string; decision: Decision; via: 'notification' } | null;
  open: string;
}

/**
 * A click on a notification whose data is `data` (the message it showed), on its button
 * `action` (`''`: on the notification itself). A button answers only an ask, and only with a
 * decision vyred offered on it.
 */
export function clickPlan(data: unknown, action: string, scope: string): ClickPlan {
  const m = data && typeof data === 'object' ? (data as Partial<PushMessage>) : {};
  const open = appUrl(typeof m.url === 'string' ? m.url : undefined, scope);
  const offered = Array.isArray(m.actions) ? m.actions : [];
  if (m.kind === 'ask' && typeof m.ask === 'string' && m.ask && (action === 'allow' || action === 'deny') && offered.includes(action)) {
    return { answer: { ask: m.ask, decision: action, via: 'notification' }, open };
  }
  return { answer: null, open };
}

/** The address of the tool a notification's button calls. */
export const ANSWER_PATH = '/v1/tools/threads.answer';

/** Whether vyred took the answer: an HTTP success with `{data}`, not `{error}`. */
export function answered(status: number, body: unknown): boolean {
  return status >= 200 && status < 300 && !!body && typeof body === 'object' && 'data' in body && !('error' in body);
}

/** A window of the app the worker can show an address in. */
export interface WindowLike {
  url: string;
  focused: boolean;
  visibilityState: string;
}

/** The window a click brings forward: the focused one, else a visible one, else any; only
 * windows of the app (under `scope`). */
export function pickWindow<W extends WindowLike>(windows: readonly W[], scope: string): W | null {
  const home = new URL(scope);
  const ours = windows.filter((w) => {
    try {
      const u = new URL(w.url);
      return u.origin === home.origin && u.pathname.startsWith(home.pathname);
    } catch {
      return false;
    }
  });
  return ours.find((w) => w.focused) ?? ours.find((w) => w.visibilityState === 'visible') ?? ours[0] ?? null;
}

/** The message the worker posts to an open window: show this address (the app's own router
 * takes it, without a reload). */
export const OPEN_MESSAGE = 'vyre:open';

/** The address in a worker's message to the page, when it is one (under the app). */
export function openRequest(data: unknown, origin: string): string | null {
  if (!data || typeof data !== 'object') return null;
  const d = data as { type?: unknown; url?: unknown };
  if (d.type !== OPEN_MESSAGE || typeof d.url !== 'string') return null;
  return appUrl(d.url, `${origin}/app/`);
}

// ─── The page's side ─────────────────────────────────────────────────────────────────────────

/** What the page knows about its browser, for `pushSupport`. */
export interface BrowserFacts {
  /** `window.isSecureContext`: https, or this machine's own address. */
  secure: boolean;
  serviceWorker: boolean;
  pushManager: boolean;
  notification: boolean;
  /** The page runs as an installed app (from the Home Screen). */
  standalone: boolean;
  userAgent: string;
  /** `navigator.maxTouchPoints`: an iPad says it is a Mac. */
  touchPoints: number;
  /** Inside the Mac app's window. */
  inApp: boolean;
}

/** An iPhone or iPad (whatever browser: they are all Safari inside). */
export function isIos(userAgent: string, touchPoints = 0): boolean {
  return /iPhone|iPad|iPod/.test(userAgent) || (/Macintosh/.test(userAgent) && touchPoints > 1);
}

/** Whether this browser can get notifications from Vyre, and if not, why in words. */
export function pushSupport(b: BrowserFacts): { ok: true } | { ok: false; why: string } {
  if (b.inApp) return { ok: false, why: 'This window is the Mac app’s: turn notifications on in a browser or on your phone.' };
  const ios = isIos(b.userAgent, b.touchPoints);
  // Safari on an iPhone gives web apps notifications only once they are on the Home Screen.
  if (ios && !b.standalone && !(b.pushManager && b.notification)) {
    return {
      ok: false,
      why: 'On an iPhone or iPad, add Vyre to the Home Screen first (Share, then Add to Home Screen), open it from there, and turn notifications on in its Settings.',
    };
  }
  if (!b.secure) {
    return { ok: false, why: 'Notifications need a secure address: open Vyre at its https:// address (on this machine, http://127.0.0.1 works too).' };
  }
  if (!b.serviceWorker || !b.pushManager || !b.notification) {
    return { ok: false, why: 'This browser cannot show notifications from a web app.' };
  }
  return { ok: true };
}

/** The application server key `push.key` gives (base64url, no padding) as the bytes
 * `pushManager.subscribe` takes. */
export function keyBytes(base64url: string): Uint8Array<ArrayBuffer> {
  const b64 = base64url.trim().replace(/-/g, '+').replace(/_/g, '/');
  const padded = b64 + '='.repeat((4 - (b64.length % 4)) % 4);
  const bin = atob(padded);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Whether a subscription was made with `key` (its `options.applicationServerKey`); an unknown
 * key counts as the same (the subscription is kept). */
export function sameKey(had: ArrayBuffer | null | undefined, key: Uint8Array): boolean {
  if (!had) return true;
  const a = new Uint8Array(had);
  return a.length === key.length && a.every((x, i) => x === key[i]);
}

/** What `push.subscribe` takes, from `PushSubscription.toJSON()` (its expiry left out). */
export function subscriptionInput(json: { endpoint?: string | null; keys?: Record<string, string> | null }): {
  endpoint: string;
  keys: { p256dh: string; auth: string };
} {
  const endpoint = json.endpoint ?? '';
  const p256dh = json.keys?.p256dh ?? '';
  const auth = json.keys?.auth ?? '';
  if (!endpoint || !p256dh || !auth) throw new Error('the browser gave a subscription without its address or keys');
  return { endpoint, keys: { p256dh, auth } };
}

/** Where this browser's notifications stand. */
export interface PushFacts {
  permission: 'default' | 'granted' | 'denied';
  /** This browser holds a subscription. */
  subscribed: boolean;
  /** vyred has this browser's subscription (`push.list`'s `mine`). */
  known: boolean;
}

export type PushStatus = 'on' | 'off' | 'blocked' | 'unknown';

/** The state Settings shows, and which buttons it offers. */
export interface PushView {
  status: PushStatus;
  text: string;
  canTurnOn: boolean;
  canTurnOff: boolean;
  canTest: boolean;
}

export function pushView(f: PushFacts): PushView {
  if (f.permission === 'denied') {
    // A subscription may outlive the permission; turning off still tidies it away.
    return { status: 'blocked', text: 'This browser does not let Vyre show notifications.', canTurnOn: false, canTurnOff: f.subscribed || f.known, canTest: false };
  }
  if (f.subscribed && f.known && f.permission === 'granted') {
    return { status: 'on', text: 'This device gets them.', canTurnOn: false, canTurnOff: true, canTest: true };
  }
  if (f.subscribed && !f.known) {
    return { status: 'unknown', text: 'This browser is subscribed, but Vyre does not have it: turn notifications on again.', canTurnOn: true, canTurnOff: true, canTest: false };
  }
  return { status: 'off', text: 'This device does not get them.', canTurnOn: true, canTurnOff: f.known, canTest: false };
}

/** How to allow notifications again once they were blocked, for this browser. */
export function unblockHelp(userAgent: string, touchPoints = 0): string {
  if (isIos(userAgent, touchPoints)) return 'To allow them again, open the iPhone’s Settings, then Notifications, then Vyre, and turn on Allow Notifications.';
  if (/Firefox\//.test(userAgent)) return 'To allow them again, click the icon left of the address, clear the blocked Notifications permission, and reload the page.';
  if (/Android/.test(userAgent)) return 'To allow them again, tap the icon left of the address, then Permissions (or Site settings), set Notifications to Allow, and reload.';
  if (/Safari\//.test(userAgent) && !/Chrom(e|ium)\//.test(userAgent)) return 'To allow them again, open Safari’s Settings, then Websites, then Notifications, set this site to Allow, and reload.';
  return 'To allow them again, click the icon left of the address, open Site settings, set Notifications to Allow, and reload the page.';
}

/** A failure to turn notifications on or off, or to send a test, in words: the lead sentence,
 * then what vyred or the browser said. */
export function pushError(code: string, message: string): { text: string; detail: string } {
  const detail = message.trim();
  switch (code) {
    case 'permission_denied':
      return { text: 'Notifications were not allowed, so Vyre cannot show them here.', detail };
    case 'permission_default':
      return { text: 'The browser’s question was closed without an answer: press Turn on again and choose Allow.', detail };
    case 'no_worker':
      return { text: 'The app’s background worker is not running in this page, and notifications need it. Reload the page and try again.', detail };
    case 'subscribe_failed':
      return { text: 'This browser’s push service did not give Vyre an address to send to. Try again later.', detail };
    case 'push_service_refused':
      return { text: 'Vyre does not send to this browser’s push service: its address is not in the push services Vyre’s configuration allows.', detail };
    case 'not_subscribed':
      return { text: 'Vyre has no subscription for this device: turn notifications on first.', detail };
    case 'device_only':
      return { text: 'Only a signed-in browser gets notifications.', detail };
    case 'forbidden':
    case 'person_only':
      return { text: 'Only you can turn notifications on, from a browser you signed in.', detail };
    case 'offline':
      return { text: 'Vyre did not answer. Is vyred running?', detail: '' };
    default:
      return { text: 'That did not work.', detail };
  }
}

/** A test's outcome, in words (`push.test`'s `{sent, failed}`). */
export function testText(r: { sent: number; failed: number }): { text: string; ok: boolean } {
  if (r.sent === 0 && r.failed === 0) return { text: 'Vyre has no subscription for this device: turn notifications on first.', ok: false };
  if (r.failed === 0) return { text: r.sent === 1 ? 'A test notification is on its way.' : `${r.sent} test notifications are on their way.`, ok: true };
  if (r.sent === 0) return { text: 'The test notification could not be sent.', ok: false };
  return { text: `${r.sent} sent, ${r.failed} could not be sent.`, ok: false };
}
