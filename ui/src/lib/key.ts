// This browser's key (ADR 0009). The device cookie is HttpOnly, but a browser sends it to every
// port of the host, so a dev server a session started on another port receives it; the cookie
// alone therefore proves nothing. The key is the second half: vyred answers it once, when a link
// is redeemed, and only this origin's storage keeps it (another port is another origin). Every
// call to vyred, the event stream included, carries it as `X-Vyre-Key`.

/** Where this origin keeps the key. */
export const KEY_ITEM = 'vyre_key';
/** The header vyred reads it from. */
export const KEY_HEADER = 'X-Vyre-Key';

type Store = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

function origin(): Store | null {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null; // storage disabled: this browser cannot stay signed in
  }
}

/** This browser's key, when it has one. */
export function browserKey(store: Store | null = origin()): string | null {
  return store?.getItem(KEY_ITEM) ?? null;
}

/** Keep the key a redeem answered; `null` forgets it (signing out). */
export function keepKey(key: string | null, store: Store | null = origin()): void {
  if (!store) return;
  if (key) store.setItem(KEY_ITEM, key);
  else store.removeItem(KEY_ITEM);
}

/** The header that proves this browser, besides the cookie the browser sends by itself. */
export function keyHeaders(store: Store | null = origin()): Record<string, string> {
  const key = browserKey(store);
  return key ? { [KEY_HEADER]: key } : {};
}

/** Whether this page runs inside the Mac app's webview (Tauri), not a browser. */
function inApp(): boolean {
  return typeof (globalThis as { __TAURI_INTERNALS__?: unknown }).__TAURI_INTERNALS__ === 'object';
}

/**
 * The Mac app signs its windows in itself and hands the page the key in the address's fragment
 * (`#vyre-key=...`), which is never sent anywhere: keep it, and take it out of the address and
 * the history. Only inside the app: in a browser, a page elsewhere could link here with a key
 * of its choosing and sign the person out. Whether one was taken.
 */
export function takeKeyFromAddress(
  loc: Pick<Location, 'hash' | 'pathname' | 'search'> = location,
  hist: Pick<History, 'replaceState' | 'state'> = history,
  store: Store | null = origin(),
  app: boolean = inApp(),
): boolean {
  const m = /^#vyre-key=([A-Za-z0-9_-]{16,128})$/.exec(loc.hash);
  if (!m) return false;
  // Out of the address either way: a key never stays where it can be copied or bookmarked.
  hist.replaceState(hist.state, '', loc.pathname + loc.search);
  if (!app) return false;
  keepKey(m[1], store);
  return true;
}
