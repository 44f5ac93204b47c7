// The app's global state: the session, the route, the open asks (Needs) and the stream's status.

import { call, callAs, type ApiError } from './api';
import { hub, type StreamStatus } from './stream';
import { questionsOf } from './chat';
import { closeBy, parseRoute, pathOf, type Over, type Route } from './routes';
import type { Agent, Always, AskInfo, Pairing, Question, Session, ThreadDetail, ThreadInfo, VyreEvent } from './types';

// The app's paths are lib/routes.ts's (pure, tested); the views import them from here.
export { parseRoute, pathOf, type Route };

export interface Need {
  ask: string;
  thread: string;
  kind: string;
  tool: string;
  summary: string;
  questions: Question[];
  input: Record<string, any> | null;
  rule: Always | null;
  destructive: string | null;
  at: number;
  /** The paired box the ask is on (a pairing id), answered there through `pairing.call`. */
  box: string | null;
}

/** A box this Vyre is paired with, as Needs and the thread list name it. */
export interface Box {
  name: string;
  /** Whether its events reach this machine: `up`, `down`, `revoked`, or not known yet. */
  link: string | null;
  /** Where this machine reaches it (`host:port`), and where a download it makes (`files.fetch`) is followed. */
  address?: string;
}

export const app = $state({
  session: null as Session | null,
  /** Why this browser is signed out, when it is (a 401, or the device revoked). */
  signedOut: null as string | null,
  route: parseRoute(location) as Route,
  stream: 'off' as StreamStatus,
  needs: {} as Record<string, Need>,
  titles: {} as Record<string, string>,
  /** The boxes this Vyre is paired with, by pairing id (none on a box). */
  boxes: {} as Record<string, Box>,
  assistant: null as Agent | null,
  toast: null as { text: string; level: 'info' | 'error' } | null,
  /** Settings opens "Add a phone or laptop" once it shows (the onboarding's "Add my phone right
   * after"); Settings clears it. */
  joinDevice: false,
  /** Where the app continues once the onboarding is finished: the name's address, when this
   * device reaches it there (the address step's "Continue at … when I finish"). */
  moveTo: null as string | null,
  /** The Deck opens its New session form with these once it shows (a chat whose worktree was
   * removed: "New session" in its repository); the Deck clears it. */
  newSession: null as { cwd: string; project: string | null } | null,
});

export function navigate(r: Route, replace = false): void {
  const path = pathOf(r);
  if (replace) history.replaceState(null, '', path);
  else if (location.pathname + location.search !== path) history.pushState(null, '', path);
  app.route = r;
}

/** A view over the screen (a chat's Changes): its own history entry, which says what is under
 * it, so Back closes it and Forward opens it again. */
export function openOver(r: Route): void {
  const state: Over = { under: location.pathname + location.search };
  history.pushState(state, '', pathOf(r));
  app.route = r;
}

/** The view over the screen closes onto `r`: back to the entry under it when there is one, else
 * (opened from a link, or after the entry under it was left) `r` in its place. */
export function closeOver(r: Route): void {
  if (closeBy(history.state, pathOf(r)) === 'back') history.back();
  else navigate(r, true);
}

if (typeof window !== 'undefined') {
  window.addEventListener('popstate', () => {
    app.route = parseRoute(location);
  });
}

hub.onStatus = (s) => {
  app.stream = s;
};

let toastTimer: ReturnType<typeof setTimeout> | undefined;
export function toast(text: string, level: 'info' | 'error' = 'info'): void {
  app.toast = { text, level };
  clearTimeout(toastTimer);
  // A one-shot timer to hide the line, not a poll.
  toastTimer = setTimeout(() => (app.toast = null), level === 'error' ? 8000 : 4000);
}

export function fail(e: unknown): void {
  const err = e as ApiError;
  if (err?.code && ['unauthenticated', 'invalid_credential'].includes(err.code)) return;
  toast(err?.message ?? String(e), 'error');
}

// ---- Needs: every open ask across threads ----

/** The open asks, oldest first: the Needs page's list and Lumen's. */
export function openNeeds(): Need[] {
  return Object.values(app.needs).sort((a, b) => a.at - b.at);
}

/** Where an ask is kept in `app.needs`: a box's asks under their pairing. */
export function needKey(ask: string, box: string | null): string {
  return box ? `${box}:${ask}` : ask;
}

function addNeed(thread: string, a: Partial<AskInfo> & { ask: string }, at: number, box: string | null = null): void {
  const key = needKey(a.ask, box);
  if (app.needs[key]) return;
  app.needs[key] = {
    ask: a.ask,
    thread,
    kind: a.kind ?? 'permission',
    tool: a.tool ?? '',
    summary: a.summary ?? '',
    questions: questionsOf(a),
    input: a.input && typeof a.input === 'object' ? a.input : null,
    rule: a.rule ?? null,
    destructive: a.destructive ?? null,
    at,
    box,
  };
}

/** One of the box's events, as the Mac republishes it (`pairing.box_event`). */
interface BoxEvent {
  box: string;
  type: string;
  thread: string | null;
  at: number;
  payload: any;
}

let boxesLoading: Promise<Pairing[]> | null = null;
/** The paired boxes (`pairing.list`) into `app.boxes`; callers at the same time share one call. */
export function loadBoxes(): Promise<Pairing[]> {
  boxesLoading ??= call('pairing.list')
    .then((boxes) => {
      for (const b of boxes) app.boxes[b.id] = { name: b.box_name || b.address, link: b.link ?? (b.status === 'paired' ? 'up' : 'down'), address: b.address };
      return boxes;
    })
    .finally(() => (boxesLoading = null));
  return boxesLoading;
}

/** A box's open asks and its threads' titles, asked of the box itself (once a load). */
async function loadBoxNeeds(): Promise<void> {
  const boxes = await loadBoxes();
  await Promise.all(
    boxes
      .filter((b) => b.status === 'paired')
      .map(async (b) => {
        const on = <T>(tool: string, input: Record<string, unknown> = {}) => callAs<T>('pairing.call', { box: b.id, tool, input });
        const threads = await on<ThreadInfo[]>('threads.list');
        for (const t of threads) if (t.title) app.titles[t.thread] = t.title;
        const waiting = threads.filter((t) => t.live && t.state === 'waiting');
        await Promise.all(
          waiting.map(async (t) => {
            const d = await on<ThreadDetail>('threads.get', { thread: t.thread });
            for (const a of d.asks) if (a.status === 'open') addNeed(t.thread, a, d.updated_at, b.id);
          }),
        );
      })
      // A box out of reach says so in one place (`app.boxes`); the rest of Needs goes on.
      .map((p) => p.catch(() => {})),
  );
}

let needsWired = false;
/** Load the open asks once, then keep them from the stream. */
export async function loadNeeds(): Promise<void> {
  if (!needsWired) {
    needsWired = true;
    hub.subscribe({ types: ['ask.raised', 'ask.answered'] }, (e: VyreEvent) => {
      if (e.type === 'ask.raised' && e.thread) {
        addNeed(e.thread, e.payload as any, e.at);
        if (!app.titles[e.thread]) loadTitles().catch(() => {});
      } else delete app.needs[e.payload.ask];
    });
    hub.subscribe({ types: ['pairing.box_event', 'pairing.link', 'pairing.added', 'pairing.removed'] }, (e: VyreEvent) => {
      const p = e.payload as any;
      if (e.type === 'pairing.link') {
        if (app.boxes[p.box]) app.boxes[p.box].link = p.state;
        else app.boxes[p.box] = { name: p.box, link: p.state };
        if (p.state === 'up') loadBoxNeeds().catch(() => {});
      } else if (e.type === 'pairing.box_event') {
        const b = p as BoxEvent;
        if (b.type === 'ask.raised' && b.thread) addNeed(b.thread, b.payload, b.at, b.box);
        else if (b.type === 'ask.answered') delete app.needs[needKey(b.payload?.ask, b.box)];
      } else {
        if (e.type === 'pairing.removed') {
          delete app.boxes[p.id];
          for (const [k, n] of Object.entries(app.needs)) if (n.box === p.id) delete app.needs[k];
        }
        loadBoxNeeds().catch(() => {});
      }
    });
  }
  // Begun first, so a caller that wants the boxes too (Lumen) shares its pairing.list.
  const onBoxes = loadBoxNeeds().catch(() => {});
  const threads = await call('threads.list');
  const waiting = threads.filter((t) => t.live && t.state === 'waiting');
  await Promise.all([
    ...waiting.map(async (t) => {
      const d = await call('threads.get', { thread: t.thread });
      for (const a of d.asks) if (a.status === 'open') addNeed(t.thread, a, d.updated_at);
    }),
    onBoxes,
  ]);
  await loadTitles();
}

/** Titles for the threads that ask something (and `more`: those the Gate holds a call of),
 * from the catalogue (once a load, not a poll). */
export async function loadTitles(more: string[] = []): Promise<void> {
  const want = new Set([...Object.values(app.needs).filter((n) => !n.box).map((n) => n.thread), ...more]);
  if (![...want].some((t) => !app.titles[t])) return;
  const all = await call('projects.catalog', { limit: 200 });
  for (const e of all) {
    const t = e.title || e.first_message;
    if (t) app.titles[e.thread] = t;
  }
}

let assistantLoading: Promise<Agent | null> | null = null;
/** The assistant from agents.list; callers at the same time share one call. */
export function loadAssistant(): Promise<Agent | null> {
  assistantLoading ??= call('agents.list')
    .then((agents) => (app.assistant = agents.find((a) => a.kind === 'assistant') ?? null))
    .finally(() => (assistantLoading = null));
  return assistantLoading;
}

/** An agent's name as a person reads it: `juno` → `Juno`. */
export function pretty(name: string): string {
  return name ? name[0].toUpperCase() + name.slice(1) : name;
}
