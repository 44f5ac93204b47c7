// The app offline: what its service worker (src/sw.ts, built to /app/sw.js) does with each
// request, and how the app tries again when Vyre does not answer. Pure: no DOM, no caches, no
// timers of its own beyond the ones handed in, so node --test covers it (ui/test/offline.test.mjs).
//
// The worker keeps this build's app shell (index.html and its files) so the app opens without
// the network and says that it cannot reach Vyre. It never touches the API: /v1/ (calls, the
// event stream, file downloads) always goes to the network as if there were no worker.

/** What the worker does with a request. */
export type Handling =
  /** Not the worker's: the browser asks the network itself (the worker never answers). */
  | 'pass'
  /** A page of the app: the network first, so a new build is seen at once; the cached shell
   * when the network fails. */
  | 'navigate'
  /** A file of this build (its name is its content's hash, or it is the build's own): the cache
   * first. */
  | 'cache';

export interface RequestLike {
  method: string;
  url: string;
  mode: string;
}

/** The API's prefix: never cached, never answered by the worker. */
export const API_PREFIX = '/v1/';

/** Every cache the worker makes is named `vyre-app-<build>`. */
export const CACHE_PREFIX = 'vyre-app-';

/** How long a page waits for the network before the worker opens the cached shell instead (a
 * phone whose private network is down does not fail at once, it waits). */
export const SHELL_WAIT_MS = 6000;

export function cacheName(build: string): string {
  return CACHE_PREFIX + build;
}

/** The caches an older build left: deleted when this build's worker takes over. Another app's
 * caches on this origin are not ours to delete. */
export function oldCaches(names: readonly string[], current: string): string[] {
  return names.filter((n) => n.startsWith(CACHE_PREFIX) && n !== current);
}

/**
 * What the worker does with `req`, a request from a page of `scope` (its registration's scope,
 * an absolute address ending in `/`: `https://ada.vyre.run/app/`); `precached`: the paths of
 * this build's files, as the worker cached them.
 */
export function handling(req: RequestLike, scope: string, precached: ReadonlySet<string>): Handling {
  let url: URL;
  let home: URL;
  try {
    url = new URL(req.url);
    home = new URL(scope);
  } catch {
    return 'pass';
  }
  if (url.origin !== home.origin) return 'pass';
  // The API first, before anything else is considered: calls, the event stream, downloads.
  if (url.pathname === API_PREFIX.slice(0, -1) || url.pathname.startsWith(API_PREFIX)) return 'pass';
  if (req.method !== 'GET') return 'pass';
  if (req.mode === 'navigate') {
    const within = url.pathname.startsWith(home.pathname) || url.pathname === home.pathname.replace(/\/$/, '');
    return within ? 'navigate' : 'pass';
  }
  if (url.search === '' && precached.has(url.pathname)) return 'cache';
  return 'pass';
}

/** An answer the worker may give: what it needs to know of a Response. */
export interface Answer {
  ok: boolean;
  status: number;
}

/**
 * A page, network first: the network's answer when it comes (a new build's index.html is never
 * kept from the page); the cached shell when the network fails, answers with a server error (a
 * proxy in between), or takes longer than `waitMs` while a shell is cached. Without a cached
 * shell, the network's answer or failure as it is.
 */
export async function networkFirst<R extends Answer>(
  network: () => Promise<R>,
  cached: () => Promise<R | undefined>,
  waitMs: number,
  timer: (f: () => void, ms: number) => unknown = setTimeout,
): Promise<R> {
  const asked = network();
  // Settled one way or the other, so a late failure is never unhandled.
  const settled = asked.then(
    (r) => ({ r }),
    (e: unknown) => ({ e }),
  );
  const late = new Promise<'late'>((done) => timer(() => done('late'), waitMs));
  const first = await Promise.race([settled, late]);
  if (first !== 'late' && 'r' in first && first.r.status < 500) return first.r;
  const shell = await cached().catch(() => undefined);
  if (shell) return shell;
  const answer = first === 'late' ? await settled : first;
  if ('r' in answer) return answer.r;
  throw answer.e;
}

/** How long the app waits before asking again whether Vyre answers, after `tries` tries. */
export function retryDelay(tries: number): number {
  return [2000, 4000, 8000][tries] ?? 15000;
}

/** Whether this page registers the worker: a production build, in a secure context (https, or
 * this machine's own address), in a browser that has workers, and not in the Mac app or its
 * Lumen capsule (they load vyred on this machine, which does not go away). */
export function shouldRegister(at: { prod: boolean; secure: boolean; supported: boolean; inApp: boolean; lumen: boolean }): boolean {
  return at.prod && at.secure && at.supported && !at.inApp && !at.lumen;
}
