// The time, for words that age on screen ("due 2 min ago", "in 5 min"): read again every 30 s
// while a view shows such words. Nothing is asked of vyred; the views just say it anew.

export const clock = $state({ now: Date.now() });

const EVERY_MS = 30_000;
let users = 0;
let timer: ReturnType<typeof setInterval> | undefined;

/** Read the time again now: new words are about to be said (an item added, loaded or due), and
 * a clock up to 30 s old would say "in 10 min" of one set "in 9m". */
export function readClock(): void {
  clock.now = Date.now();
}

/** Keep `clock.now` current while the caller is on screen; the answer stops it (onMount's). */
export function ticking(): () => void {
  if (users++ === 0) {
    clock.now = Date.now();
    timer = setInterval(() => (clock.now = Date.now()), EVERY_MS);
  }
  return () => {
    if (--users === 0) clearInterval(timer);
  };
}
