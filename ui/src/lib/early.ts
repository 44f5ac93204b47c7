// What the app asks vyred for while its own code is still loading, so that a thread's address
// paints sooner (issue 18: a 2,000-turn thread under 300 ms): the session, the stream's starting
// point and, at a thread's address, the thread's first page and detail. Each is taken once by the
// code that would otherwise ask (App's boot, its stream, the Chat view); nothing is asked when the
// address carries a link token (it is spent first). A 401 here is no one's business: the session's
// answer says who this browser is, and the app acts on that.

import { ApiError, callOn, callQuiet, getSession } from './api';
import type { TimelinePage } from './chat';
import type { Session, ThreadDetail } from './types';

/** Items in a thread's first page (a screen or two: what a person reads first paints fast). */
export const FIRST = 16;

export type First = Promise<[TimelinePage | null, ThreadDetail | null]>;

let session: Promise<Session> | null = null;
let newest: Promise<number | null> | null = null;
let first: { thread: string; first: First } | null = null;

/** A thread's first page and detail; null for a thread vyred does not know. `box`: a thread on
 * that paired box, asked through the pairing (never early: the app asks it as it opens). */
export function firstLoad(thread: string, quiet = false, box: string | null = null): First {
  const unknown = (e: ApiError) => (e.code === 'unknown_thread' ? null : Promise.reject(e));
  const ask = <T>(tool: 'threads.timeline' | 'threads.get', input: Record<string, unknown>) => (box ? callOn<T>(box, tool, input) : callQuiet<T>(tool, input, quiet));
  return Promise.all([ask<TimelinePage>('threads.timeline', { thread, limit: FIRST }).catch(unknown), ask<ThreadDetail>('threads.get', { thread }).catch(unknown)]);
}

/** The id of the newest event (null: none yet, or not a device): where the stream starts. */
function newestEvent(quiet: boolean): Promise<number | null> {
  return callQuiet<{ id: number }[]>('system.events', { limit: 1 }, quiet).then(
    (e) => (e.length ? e[e.length - 1].id : null),
    () => null,
  );
}

/** Ask now, for the address the page was opened at. */
export function askEarly(loc: { pathname: string; search: string }): void {
  if (new URLSearchParams(loc.search).has('t')) return;
  session = getSession();
  session.catch(() => {});
  newest = newestEvent(true);
  const m = loc.pathname.replace(/\/+$/, '').match(/^\/app\/t\/([^/]+)$/);
  if (m) {
    const thread = decodeURIComponent(m[1]);
    first = { thread, first: firstLoad(thread, true) };
    first.first.catch(() => {});
  }
}

/** The session: the one asked early, else asked now. */
export function takeSession(): Promise<Session> {
  const s = session ?? getSession();
  session = null;
  return s;
}

/** The stream's starting point: the one asked early, else asked now. */
export function takeNewest(): Promise<number | null> {
  const n = newest ?? newestEvent(false);
  newest = null;
  return n;
}

/** `thread`'s first page and detail if they were asked early (else null: ask now). */
export function takeFirst(thread: string): First | null {
  const f = first?.thread === thread ? first.first : null;
  first = null;
  return f;
}
