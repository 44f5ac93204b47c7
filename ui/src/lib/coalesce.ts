// Loads that events start, which come in bursts (one per item a watcher filed, one per change of
// a planner item): one load at a time, and one more after it when more were asked for meanwhile,
// never one per event.

/** `f` run now, or once more after the run under way when one is. What it throws goes to
 * `onerror`; the next call runs again. */
export function coalesced(f: () => Promise<void>, onerror: (e: unknown) => void): () => Promise<void> {
  let inFlight = false;
  let again = false;
  return async () => {
    if (inFlight) {
      again = true;
      return;
    }
    inFlight = true;
    try {
      do {
        again = false;
        await f();
      } while (again);
    } catch (e) {
      onerror(e);
    } finally {
      inFlight = false;
    }
  };
}
