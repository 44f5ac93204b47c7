// Whether this device reaches Vyre at its name (`alex.vyre.run`, or the person's own domain).
// The name points at this machine's private address, so it answers only where the name
// resolves and the device's tunnel is up: the one way to know is to knock. A `no-cors` fetch of
// vyred's health route (no credential needed) settles when anything answers there, its answer
// unread (another origin's), and fails when nothing does (no tunnel, no such name, a certificate
// the browser does not trust). The page's Content-Security-Policy must let it through
// (connect-src): vyred adds its name's health route there once it holds a name.
//
// No DOM and no timers of its own beyond the ones handed in, so node --test covers it
// (ui/test/reach.test.mjs); the components hand in the browser's.

/** Where the probe knocks: vyred's health route at the name, which needs no credential. */
export function probeUrl(fqdn: string): string {
  return `https://${fqdn}/v1/health`;
}

/** How long a knock waits: a name that resolves but has no route here (no tunnel) hangs. */
export const PROBE_MS = 4000;
/** How often a name not reached yet is tried again while the page is shown: never under 5 s,
 * so a page left open costs next to nothing. */
export const PROBE_EVERY_MS = 15_000;

type Fetch = (url: string, init: RequestInit) => Promise<unknown>;

/** Knock once at the name: true when vyred (or anything) answered there within `ms`. */
export async function reaches(fqdn: string, ms = PROBE_MS, f: Fetch = (u, i) => fetch(u, i)): Promise<boolean> {
  try {
    await f(probeUrl(fqdn), {
      mode: 'no-cors',
      cache: 'no-store',
      // Nothing of this origin's goes to the name: no cookie, no referrer.
      credentials: 'omit',
      referrerPolicy: 'no-referrer',
      signal: AbortSignal.timeout(ms),
    });
    return true;
  } catch {
    return false;
  }
}

/** What watchReach needs of the page: its timers, and whether it is shown, and to be told when
 * it is shown again or back online. */
export interface Surroundings {
  setTimeout: (f: () => void, ms: number) => unknown;
  clearTimeout: (t: unknown) => void;
  /** Whether the page is on screen (a hidden tab knocks no more). */
  visible: () => boolean;
  /** Call `f` when the page is shown again or the device is back online; returns the undo. */
  onWake: (f: () => void) => () => void;
}

/** The browser's own surroundings. */
export function browserSurroundings(): Surroundings {
  return {
    setTimeout: (f, ms) => setTimeout(f, ms),
    clearTimeout: (t) => clearTimeout(t as ReturnType<typeof setTimeout>),
    visible: () => document.visibilityState === 'visible',
    onWake: (f) => {
      const shown = () => {
        if (document.visibilityState === 'visible') f();
      };
      document.addEventListener('visibilitychange', shown);
      window.addEventListener('online', f);
      return () => {
        document.removeEventListener('visibilitychange', shown);
        window.removeEventListener('online', f);
      };
    },
  };
}

/**
 * Knock at the name now, then every `everyMs` while it is not reached and the page is shown, and
 * again whenever the page is shown or back online; `onchange` hears each answer that differs
 * from the last (the first one always). Once reached it stops knocking until the page wakes.
 * Returns the stop: nothing runs after it, an answer already under way included.
 */
export function watchReach(
  fqdn: string,
  onchange: (reachable: boolean) => void,
  s: Surroundings = browserSurroundings(),
  probe: (fqdn: string) => Promise<boolean> = (n) => reaches(n),
  everyMs = PROBE_EVERY_MS,
): () => void {
  const every = Math.max(everyMs, 5000);
  let stopped = false;
  let running = false;
  let timer: unknown = null;
  let last: boolean | null = null;

  async function knock(): Promise<void> {
    if (stopped || running) return;
    if (timer !== null) s.clearTimeout(timer);
    timer = null;
    running = true;
    const ok = await probe(fqdn);
    running = false;
    if (stopped) return;
    if (ok !== last) {
      last = ok;
      onchange(ok);
    }
    if (!ok && s.visible()) timer = s.setTimeout(() => void knock(), every);
  }

  const unwake = s.onWake(() => void knock());
  void knock();
  return () => {
    stopped = true;
    if (timer !== null) s.clearTimeout(timer);
    unwake();
  };
}
