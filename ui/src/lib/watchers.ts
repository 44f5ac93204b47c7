// Watchers (issue 23): small scripts vyred runs on a schedule, filing what they find ("items")
// into a project. What the Watchers screen says of each: its state in words ("Waiting for you to
// turn it on", "Paused", "Turned off after 3 failures: …", "Runs every 15 minutes"), its
// schedule in words (with vyred's time zone when it is not the person's), its last and next
// run, what a run or a test found, its files in the order the person reads them; and the order
// of the list. Pure, for node --test (ui/test/watchers.test.mjs); the words take the time zone
// so a test can pin it. The calls to vyred are lib/watchercalls.ts.

// `.js`: node runs this module as tsc writes it for the tests (.test-build/), where an import
// needs its file's whole name; tsc and Vite both read it as planner.ts.
import { untilWords, whenWords } from './planner.js';
import type { ToolOutput } from './api';
import type { components } from './openapi/generated';

/** A watcher, as `watchers.list` (and every watchers tool that answers one) says it. Its
 * `project` and `schedule` are null when its watcher.json cannot be read (`problem` says why). */
export type Watcher = components['schemas']['watchers.list.Shown'];

/** An item a watcher filed (`watchers.items`, newest first). */
export type WatchItem = components['schemas']['watchers.items.Filed'];

/** What a dry run found (`watchers.test`): nothing filed, its place kept. */
export type Tested = ToolOutput<'watchers.test'>;

/** What a real run did (`watchers.run`). */
export type Ran = ToolOutput<'watchers.run'>;

export type LogLine = components['schemas']['watchers.logs.Line'];

/** What it runs (`watchers.source`): its files (the first 50; `left_out` counts the rest) and
 * `digest`, a hash of them all, which `watchers.resume` takes to turn on only what was read. */
export type Source = ToolOutput<'watchers.source'>;

// ---- State ----

/** Where a watcher stands, most pressing first: broken (its files), waiting for the person to
 * turn it on (new, or rewritten by a session), turned off after failures, paused by the
 * person, or on. */
export type WatcherState = 'broken' | 'waiting' | 'off' | 'paused' | 'on';

type Standing = Pick<Watcher, 'problem' | 'disabled' | 'paused' | 'waiting'>;

export function watcherState(w: Standing): WatcherState {
  if (w.problem) return 'broken';
  // Before "turned off": a session's rewrite of one turned off is a new script, and turning it
  // on clears both. Its old failure is still said, as its last run.
  if (w.waiting) return 'waiting';
  if (w.disabled !== null) return 'off';
  return w.paused ? 'paused' : 'on';
}

/** Whether the person can turn it on: it waits for them, was turned off, or is paused. Not a
 * broken one: vyred refuses until its files are put right. */
export function canTurnOn(w: Standing): boolean {
  const s = watcherState(w);
  return s === 'waiting' || s === 'off' || s === 'paused';
}

/** Whether it can be paused: it is on. */
export function canPause(w: Standing): boolean {
  return watcherState(w) === 'on';
}

const plural = (n: number, one: string, many = one + 's') => `${n} ${n === 1 ? one : many}`;

/** The watcher's state in a line, as the screen says it; its schedule with its time zone when
 * that is not the person's (`here`, the browser's unless a test says). */
export function statusWords(w: Standing & Pick<Watcher, 'failures' | 'schedule' | 'zone'>, here?: string, at = Date.now()): string {
  switch (watcherState(w)) {
    case 'broken':
      return `Something is wrong with it: ${w.problem}`;
    case 'off':
      return w.failures > 0 ? `Turned off after ${plural(w.failures, 'failure')}: ${w.disabled}` : `Turned off: ${w.disabled}`;
    case 'waiting':
      return 'Waiting for you to turn it on';
    case 'paused':
      return 'Paused';
    case 'on':
      return `Runs ${scheduleIn(w, here, at)}`;
  }
}

// ---- The schedule in words ----

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

const SHORTHANDS: Record<string, string> = {
  '@hourly': 'every hour',
  '@daily': 'every day at 00:00',
  '@midnight': 'every day at 00:00',
  '@weekly': 'every Sunday at 00:00',
  '@monthly': 'on the 1st of every month at 00:00',
  '@yearly': 'every year on 1 January at 00:00',
  '@annually': 'every year on 1 January at 00:00',
};

/** A cron field's plain numbers ("1,3,5", "1-5"; "mon-fri" with `names`, the first standing for
 * `lo`), or null when it is anything else (a step, a star). */
function numbers(field: string, lo: number, hi: number, names: string[] = []): number[] | null {
  const one = (word: string) => {
    const named = names.indexOf(word.toLowerCase());
    return named >= 0 ? lo + named : /^\d+$/.test(word) ? Number(word) : NaN;
  };
  const out: number[] = [];
  for (const part of field.split(',')) {
    const [first, last = first, more] = part.split('-');
    const a = one(first);
    const b = one(last);
    if (more !== undefined || Number.isNaN(a) || Number.isNaN(b) || a < lo || b > hi || a > b) return null;
    for (let n = a; n <= b; n++) out.push(n);
  }
  return [...new Set(out)].sort((x, y) => x - y);
}

const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const MONTH_NAMES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** "a", "a and b", "a, b and c". */
function and(words: string[]): string {
  return words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;
}

const two = (n: number) => String(n).padStart(2, '0');
const ordinal = (n: number) => {
  const tens = n % 100;
  const end = tens >= 11 && tens <= 13 ? 'th' : ['th', 'st', 'nd', 'rd'][n % 10] ?? 'th';
  return `${n}${end}`;
};

/** The days of the week in words: "on weekdays", "every Monday", "on Monday and Friday". */
function weekdays(days: number[]): string {
  // 7 is Sunday too, in cron.
  const d = [...new Set(days.map((n) => n % 7))].sort((x, y) => x - y);
  if (d.join() === '1,2,3,4,5') return 'on weekdays';
  if (d.join() === '0,6') return 'at weekends';
  if (d.length === 7) return 'every day';
  if (d.length === 1) return `every ${DAYS[d[0]]}`;
  return `on ${and(d.map((n) => DAYS[n]))}`;
}

/** A schedule in words, and which clock its words hold on: `any` (every 15 minutes, every 2
 * hours: true in every time zone), `minutes` (every hour at 5 minutes past: true where the clock
 * is a whole number of hours from the schedule's), or `clock` (at 09:00, on Mondays: only in
 * the schedule's own time zone). */
type Read = [words: string, holds: 'any' | 'minutes' | 'clock'];

/**
 * When a schedule runs, as a person says it: "every 15 minutes", "every hour at :05", "every
 * day at 09:00", "on weekdays at 08:30", "on the 1st of every month at 06:00", "when its web
 * address is called". A schedule too odd to say is given as written: `on the schedule “…”`.
 * The times are the schedule's own, as written (scheduleIn says in which time zone).
 */
export function scheduleWords(schedule: string | null): string {
  return read(schedule)[0];
}

/**
 * A watcher's schedule in words, with the time zone vyred reads it in when the person's clock
 * (`here`, the browser's unless a test says) is another and the words would not hold on it:
 * "on weekdays at 09:00 (UTC)", but "every 15 minutes". `at`: when the two zones are compared
 * (their offsets change with summer time).
 */
export function scheduleIn(w: Pick<Watcher, 'schedule' | 'zone'>, here?: string, at = Date.now()): string {
  const [words, holds] = read(w.schedule);
  const theirs = w.zone;
  if (!theirs || holds === 'any') return words;
  const mine = here ?? new Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (sameZone(theirs, mine)) return words;
  if (holds === 'minutes' && (offsetMinutes(theirs, at) - offsetMinutes(mine, at)) % 60 === 0) return words;
  return `${words} (${zoneName(theirs)})`;
}

/** A zone's name as a person reads it: "UTC" (for "Etc/UTC" too), "America/New York". */
function zoneName(zone: string): string {
  return sameZone(zone, 'UTC') ? 'UTC' : zone.replaceAll('_', ' ');
}

/** Whether two zone names are the same zone ("Etc/UTC" is "UTC"). An unknown one is another. */
function sameZone(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    const canonical = (z: string) => new Intl.DateTimeFormat('en', { timeZone: z }).resolvedOptions().timeZone;
    return canonical(a) === canonical(b);
  } catch {
    return false;
  }
}

/** How far `zone`'s clock is from UTC at `at`, in minutes (India: 330); NaN for an unknown zone. */
function offsetMinutes(zone: string, at: number): number {
  try {
    const name = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' }).formatToParts(at).find((p) => p.type === 'timeZoneName')?.value;
    // "GMT+05:30", "GMT-08:00", or "GMT" itself.
    const m = name?.match(/^GMT(?:([+-])(\d{2}):(\d{2}))?$/);
    if (!m) return NaN;
    return m[1] ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
  } catch {
    return NaN;
  }
}

/** The schedule in words, and where those words hold (Read). */
function read(schedule: string | null): Read {
  if (schedule === null) return ['on no schedule it can read', 'any'];
  const s = schedule.trim();
  if (s === 'webhook') return ['when its web address is called', 'any'];
  if (SHORTHANDS[s]) return [SHORTHANDS[s], s === '@hourly' ? 'any' : 'clock'];
  const odd: Read = [`on the schedule “${s}”`, 'clock'];
  const f = s.split(/\s+/);
  if (f.length !== 5) return odd;
  const [min, hour, dom, mon, dow] = f;
  const anyDay = dom === '*' && mon === '*' && dow === '*';

  // Every N minutes, every minute.
  const everyMin = min.match(/^(?:\*|0-59)\/(\d+)$/);
  if (hour === '*' && anyDay) {
    if (min === '*') return ['every minute', 'any'];
    if (everyMin) return [Number(everyMin[1]) === 1 ? 'every minute' : `every ${everyMin[1]} minutes`, 'any'];
  }

  const mins = numbers(min, 0, 59);
  if (!mins) return odd;
  const past = `${and(mins.map(String))} ${mins.length === 1 && mins[0] === 1 ? 'minute' : 'minutes'} past`;

  // Every hour, every N hours.
  if (anyDay && hour === '*') {
    if (mins.length === 1 && mins[0] === 0) return ['every hour', 'any'];
    // "0,20,40": every 20 minutes.
    const step = mins[1] - mins[0];
    if (mins[0] === 0 && 60 % step === 0 && mins.length === 60 / step && mins.every((m, i) => m === i * step)) return [`every ${step} minutes`, 'any'];
    return [`every hour at ${past}`, 'minutes'];
  }
  const everyHour = hour.match(/^(?:\*|0-23)\/(\d+)$/);
  if (anyDay && everyHour && mins.length === 1) {
    const n = Number(everyHour[1]);
    const at = mins[0] === 0 ? '' : ` at ${past}`;
    return [n === 1 ? `every hour${at}` : `every ${n} hours${at}`, at ? 'minutes' : 'any'];
  }

  // At set times of day: "09:00", "09:00 and 17:00".
  const hours = numbers(hour, 0, 23);
  if (!hours || hours.length * mins.length > 4) return odd;
  const times = and(hours.flatMap((h) => mins.map((m) => `${two(h)}:${two(m)}`)));

  if (mon !== '*') {
    const months = numbers(mon, 1, 12, MONTH_NAMES);
    const days = numbers(dom, 1, 31);
    if (!months || !days || dow !== '*' || months.length > 1) return odd;
    return [`every year on ${and(days.map(String))} ${MONTHS[months[0] - 1]} at ${times}`, 'clock'];
  }
  if (dom !== '*') {
    const days = numbers(dom, 1, 31);
    if (!days || dow !== '*') return odd;
    return [`on the ${and(days.map(ordinal))} of every month at ${times}`, 'clock'];
  }
  if (dow !== '*') {
    const days = numbers(dow, 0, 7, DAY_NAMES);
    if (!days) return odd;
    return [`${weekdays(days)} at ${times}`, 'clock'];
  }
  return [`every day at ${times}`, 'clock'];
}


// ---- Runs in words ----

/** When it runs next: "today 15:20, in 5 min"; null when it does not run by itself (paused,
 * turned off, or run by a webhook). */
export function nextRunWords(w: Pick<Watcher, 'next_run_at'>, now = Date.now(), zone?: string): string | null {
  if (w.next_run_at === null) return null;
  const when = whenWords(w.next_run_at, now, zone);
  return w.next_run_at - now < 24 * 3600_000 ? `${when}, ${untilWords(w.next_run_at, now)}` : when;
}

/** Its last run: "Not run yet", "Last ran today 15:00", or "Last run today 15:00 failed: why"
 * (a run failed when no run went well since the error). `withError` false: "Last run today
 * 15:00" for a failed one, whose error is said elsewhere (a watcher turned off says why). */
export function lastRunWords(w: Pick<Watcher, 'last_run_at' | 'last_ok_at' | 'last_error'>, now = Date.now(), zone?: string, withError = true): string {
  if (w.last_run_at === null) return 'Not run yet';
  const when = whenWords(w.last_run_at, now, zone);
  if (!lastFailed(w)) return `Last ran ${when}`;
  return withError ? `Last run ${when} failed: ${w.last_error}` : `Last run ${when}`;
}

/** Whether its last run failed. */
export function lastFailed(w: Pick<Watcher, 'last_run_at' | 'last_ok_at' | 'last_error'>): boolean {
  return w.last_run_at !== null && w.last_error !== null && (w.last_ok_at === null || w.last_ok_at < w.last_run_at);
}

/** Whether the person wrote it (through the app, the CLI or the API), not a session in a chat. */
export function byPerson(createdBy: string): boolean {
  return createdBy === 'person';
}

/** What a run did, in a line: "Filed 2 new items.", "Nothing new.", "It failed: why". */
export function ranWords(r: Pick<Ran, 'ok' | 'error' | 'filed'>): string {
  if (!r.ok || r.error) return `It failed: ${r.error ?? 'no reason given'}`;
  return r.filed ? `Filed ${plural(r.filed, 'new item')}.` : 'Nothing new.';
}

/** What a dry run found, in a line: "Found 2 items in 0.4 s. Nothing was filed." */
export function testedWords(t: Pick<Tested, 'ok' | 'error' | 'items' | 'took_ms'>): string {
  const took = t.took_ms < 1000 ? `${Math.max(1, Math.round(t.took_ms))} ms` : `${(t.took_ms / 1000).toFixed(1)} s`;
  if (!t.ok || t.error) return `It failed after ${took}: ${t.error ?? 'no reason given'}`;
  const found = t.items.length ? `Found ${plural(t.items.length, 'item')}` : 'Found nothing';
  return `${found} in ${took}. Nothing was filed.`;
}

/** The time of a log line: "15:20:07" in the person's zone. */
export function clockWords(ms: number, zone?: string): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }).format(ms);
}

// ---- Order, links ----

const RANK: Record<WatcherState, number> = { broken: 0, waiting: 1, off: 2, on: 3, paused: 4 };

/** The Watchers list: those that need the person first (broken, waiting to be turned on, turned
 * off), then those that run, soonest first, then the paused; by name within each. */
export function sortWatchers<W extends Standing & Pick<Watcher, 'name' | 'next_run_at'>>(list: W[]): W[] {
  return [...list].sort(
    (a, b) =>
      RANK[watcherState(a)] - RANK[watcherState(b)] ||
      (a.next_run_at ?? Infinity) - (b.next_run_at ?? Infinity) ||
      a.name.localeCompare(b.name),
  );
}

/** An item's address, when it is one a link may open (http or https); anything else (a
 * `javascript:` one that a script filed, or words that are no address) is no link. */
export function safeUrl(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}

// ---- What it runs ----

/** One file of its folder, as `watchers.source` gives it: a file too large or not text has a
 * short note as its text. */
export interface SourceFile {
  name: string;
  text: string;
}

/** A file as the app shows it: what it is to the watcher, and whether it is shown opened. */
export interface ShownFile extends SourceFile {
  /** `script`: what its watcher.json runs; `settings`: watcher.json itself; `other`: the rest
   * (a module the script imports, data). */
  kind: 'script' | 'settings' | 'other';
  open: boolean;
}

const SETTINGS = 'watcher.json';
const DEFAULT_SCRIPT = 'watch.js';

/** The files its watcher.json says it runs: those of `run`'s words ("python3", "watch.py") that
 * are a file of its folder, or watch.js without `run`. None when watcher.json cannot be read. */
export function scriptNames(files: SourceFile[]): string[] {
  const settings = files.find((f) => f.name === SETTINGS);
  let run: unknown;
  try {
    run = settings ? (JSON.parse(settings.text) as { run?: unknown }).run : undefined;
  } catch {
    return [];
  }
  if (run === undefined || run === null) return files.some((f) => f.name === DEFAULT_SCRIPT) ? [DEFAULT_SCRIPT] : [];
  if (!Array.isArray(run)) return [];
  const named = new Set(run.filter((w): w is string => typeof w === 'string').map((w) => w.replace(/^\.\//, '')));
  return files.filter((f) => named.has(f.name)).map((f) => f.name);
}

/**
 * Its files in the order the person reads them: the script it runs first, then its other files
 * (code it may import: shown opened too, as they run as well), then watcher.json, shut (what it
 * declares is said in words above it: its schedule, project and vault items).
 */
export function sourceOrder(files: SourceFile[]): ShownFile[] {
  const scripts = new Set(scriptNames(files));
  const kind = (f: SourceFile): ShownFile['kind'] => (f.name === SETTINGS ? 'settings' : scripts.has(f.name) ? 'script' : 'other');
  const rank = { script: 0, other: 1, settings: 2 };
  return files
    .map((f) => ({ ...f, kind: kind(f), open: kind(f) !== 'settings' }))
    .sort((a, b) => rank[a.kind] - rank[b.kind]);
}

/** What is said above the files of one a session wrote (null for the person's own): plainly, as
 * the person is about to hand it their vault items. `asking`: in the Turn on question. */
export function sourceNote(createdBy: string, asking: boolean): string | null {
  if (byPerson(createdBy)) return null;
  return asking ? 'Written by Claude in a chat. Read what it runs before you turn it on.' : 'Written by Claude in a chat.';
}

/** Said under its files when vyred left some out (it shows the first 50): null when none. */
export function leftOutWords(leftOut: number): string | null {
  return leftOut > 0 ? `and ${plural(leftOut, 'more file', 'more files')} not shown` : null;
}

/** Whether vyred refused to turn it on because it was rewritten since its files were read
 * (`watchers.resume` with the `digest` of what was shown: 409 `changed`). It was not turned on:
 * the person reads it again. */
export function rewrittenSinceRead(e: unknown): boolean {
  const c = e as { status?: unknown; code?: unknown } | null;
  return typeof c === 'object' && c !== null && c.status === 409 && c.code === 'changed';
}

/** Said at the top of the Turn on question asked again after `rewrittenSinceRead`. */
export function rewrittenWords(name: string): string {
  return `“${name}” was rewritten while you were reading it, so it was not turned on. What it runs now is below: read it before you turn it on.`;
}
