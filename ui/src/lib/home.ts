// The sessions' HOME (what `~` means in a folder), asked of vyred once a page.
import { call } from './api';

let once: Promise<string | null> | null = null;

/** The sessions' HOME, or null when vyred does not say. */
export function sessionsHome(): Promise<string | null> {
  once ??= call('threads.folders', { limit: 1 })
    .then((r) => r.home)
    .catch(() => {
      once = null;
      return null;
    });
  return once;
}
