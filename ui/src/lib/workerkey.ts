// This browser's key (lib/key.ts, ADR 0009) where the service worker can read it. A notification's
// Allow and Deny answer the ask from the worker, with no page open, and over loopback or a name
// vyred wants the cookie and the key together; the key lives in the page's localStorage, which a
// worker cannot read. So while this browser has notifications on, the page keeps a copy in
// IndexedDB: the same origin's storage, so no page of another port or site can read it either.
// Turning notifications off or logging out deletes it; the app refreshes it when it starts.

const DB = 'vyre-worker';
const STORE = 'keys';
const ITEM = 'browser';

function open(): Promise<IDBDatabase> {
  return new Promise((ok, fail) => {
    const req = indexedDB.open(DB, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    req.onsuccess = () => ok(req.result);
    req.onerror = () => fail(req.error);
  });
}

async function inStore<T>(mode: IDBTransactionMode, f: (s: IDBObjectStore) => IDBRequest): Promise<T> {
  const db = await open();
  try {
    return await new Promise<T>((ok, fail) => {
      const tx = db.transaction(STORE, mode);
      const req = f(tx.objectStore(STORE));
      tx.oncomplete = () => ok(req.result as T);
      tx.onerror = () => fail(tx.error);
      tx.onabort = () => fail(tx.error);
    });
  } finally {
    db.close();
  }
}

/** Keep `key` for the worker; null deletes the copy. Never throws (no IndexedDB: no copy, and a
 * notification's button opens the app instead). */
export async function shareKey(key: string | null): Promise<void> {
  if (typeof indexedDB === 'undefined') return;
  try {
    await inStore('readwrite', (s) => (key ? s.put(key, ITEM) : s.delete(ITEM)));
  } catch (e) {
    console.warn('Vyre: the key for notifications was not kept:', e);
  }
}

/** The copy of the key, for the worker's calls to vyred; null without one. */
export async function sharedKey(): Promise<string | null> {
  if (typeof indexedDB === 'undefined') return null;
  try {
    const v = await inStore<unknown>('readonly', (s) => s.get(ITEM));
    return typeof v === 'string' && v ? v : null;
  } catch {
    return null;
  }
}
