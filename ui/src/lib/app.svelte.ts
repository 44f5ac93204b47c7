// The app's global state: the session, the route, the open asks (Needs) and the stream's status.

import { call, type ApiError } from './api';
import { hub, type StreamStatus } from './stream';
import { questionsOf } from './chat';
import type { Agent, Always, AskInfo, Question, Session, ThreadDetail, ThreadInfo, VyreEvent } from './types';

export type Route =
  | { name: 'home' }
  | { name: 'deck' }
  | { name: 'needs' }
  | { name: 'settings' }
  | { name: 'thread'; thread: string }
  | { name: 'onboard'; token: string | null }
  | { name: 'login'; token: string | null };

export function parseRoute(loc: { pathname: string; search: string }): Route {
  const token = new URLSearchParams(loc.search).get('t');
  const path = loc.pathname.replace(/\/+$/, '');
  if (path === '/onboard') return { name: 'onboard', token };
  if (path === '/login') return { name: 'login', token };
  const rest = path.replace(/^\/app/, '');
  const m = rest.match(/^\/t\/([^/]+)$/);
  if (m) return { name: 'thread', thread: decodeURIComponent(m[1]) };
  if (rest === '/deck') return { name: 'deck' };
  if (rest === '/needs') return { name: 'needs' };
  if (rest === '/settings') return { name: 'settings' };
  return { name: 'home' };
}

export function pathOf(r: Route): string {
  switch (r.name) {
    case 'thread':
      return `/app/t/${encodeURIComponent(r.thread)}`;
    case 'home':
      return '/app/';
    case 'onboard':
    case 'login':
      return '/' + r.name;
    default:
      return `/app/${r.name}`;
  }
}

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
}

export const app = $state({
  session: null as Session | null,
  /** Why this browser is signed out, when it is (a 401, or the device revoked). */
  signedOut: null as string | null,
  route: parseRoute(location) as Route,
  stream: 'off' as StreamStatus,
  needs: {} as Record<string, Need>,
  titles: {} as Record<string, string>,
  assistant: null as Agent | null,
  toast: null as { text: string; level: 'info' | 'error' } | null,
});

export function navigate(r: Route, replace = false): void {
  const path = pathOf(r);
  if (replace) history.replaceState(null, '', path);
  else if (location.pathname !== path) history.pushState(null, '', path);
  app.route = r;
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

function addNeed(thread: string, a: Partial<AskInfo> & { ask: string }, at: number): void {
  if (app.needs[a.ask]) return;
  app.needs[a.ask] = {
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
  };
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
  }
  const threads = await call('threads.list');
  const waiting = threads.filter((t) => t.live && t.state === 'waiting');
  await Promise.all(
    waiting.map(async (t) => {
      const d = await call('threads.get', { thread: t.thread });
      for (const a of d.asks) if (a.status === 'open') addNeed(t.thread, a, d.updated_at);
    }),
  );
  await loadTitles();
}

/** Titles for the threads that ask something, from the catalogue (once a load, not a poll). */
export async function loadTitles(): Promise<void> {
  const want = new Set(Object.values(app.needs).map((n) => n.thread));
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
