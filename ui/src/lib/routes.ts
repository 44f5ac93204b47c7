// The app's addresses: each screen's path under /app/, and the screen a path opens. Pure, for
// node --test (ui/test/routes.test.mjs). A chat's Changes view has an address too (`?changes=`
// after the chat's), so the browser's Back closes it and a reload opens it again.

/** What a chat's Changes view opens at: `all` (the newest turn first), or a turn by its number. */
export type ChangesAt = string;

export type Route =
  /** The assistant's chat; `changes`: its Changes view is open. */
  | { name: 'home'; changes?: ChangesAt }
  | { name: 'deck' }
  | { name: 'needs' }
  | { name: 'planner' }
  | { name: 'watchers' }
  /** What Vyre learned from how the person corrects it (spec 7.11). */
  | { name: 'lessons' }
  /** The person's vault: its items (never a value), adding, the generator, an import. */
  | { name: 'vault' }
  | { name: 'files' }
  | { name: 'settings' }
  /** One project's page: its sessions, watchers, what they filed, and its planner items. */
  | { name: 'project'; project: string }
  /** A thread, on this machine or (`box`, a pairing id) on a paired box: the same chat view. */
  | { name: 'thread'; thread: string; box?: string | null; changes?: ChangesAt }
  | { name: 'onboard'; token: string | null }
  | { name: 'login'; token: string | null };

/** A path segment as it was encoded; one that is not valid percent-encoding (typed by hand) as it
 * stands, rather than an error that would stop the app from starting. */
function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

export function parseRoute(loc: { pathname: string; search: string }): Route {
  const query = new URLSearchParams(loc.search);
  const token = query.get('t');
  const path = loc.pathname.replace(/\/+$/, '');
  if (path === '/onboard') return { name: 'onboard', token };
  if (path === '/login') return { name: 'login', token };
  const rest = path.replace(/^\/app/, '');
  // Only the chats have a Changes view; an empty value is none.
  const changes = query.get('changes') || null;
  const m = rest.match(/^\/t\/([^/]+)$/);
  if (m) return withChanges({ name: 'thread', thread: decode(m[1]) }, changes);
  const b = rest.match(/^\/b\/([^/]+)\/t\/([^/]+)$/);
  if (b) return withChanges({ name: 'thread', thread: decode(b[2]), box: decode(b[1]) }, changes);
  const p = rest.match(/^\/p\/([^/]+)$/);
  if (p) return { name: 'project', project: decode(p[1]) };
  if (rest === '/deck') return { name: 'deck' };
  if (rest === '/needs') return { name: 'needs' };
  if (rest === '/planner') return { name: 'planner' };
  if (rest === '/watchers') return { name: 'watchers' };
  if (rest === '/lessons') return { name: 'lessons' };
  if (rest === '/vault') return { name: 'vault' };
  if (rest === '/files') return { name: 'files' };
  if (rest === '/settings') return { name: 'settings' };
  return withChanges({ name: 'home' }, rest === '' ? changes : null);
}

/** `?changes=<at>` after a chat's path, when its Changes view is open. */
function changesQuery(r: Route): string {
  const at = changesOf(r);
  return at ? `?changes=${encodeURIComponent(at)}` : '';
}

export function pathOf(r: Route): string {
  switch (r.name) {
    case 'thread':
      return (r.box ? `/app/b/${encodeURIComponent(r.box)}/t/${encodeURIComponent(r.thread)}` : `/app/t/${encodeURIComponent(r.thread)}`) + changesQuery(r);
    case 'project':
      return `/app/p/${encodeURIComponent(r.project)}`;
    case 'home':
      return '/app/' + changesQuery(r);
    case 'onboard':
    case 'login':
      return '/' + r.name;
    default:
      return `/app/${r.name}`;
  }
}

/** Where the route's Changes view is open; null when it is closed, or the screen has none. */
export function changesOf(r: Route): ChangesAt | null {
  return (r.name === 'thread' || r.name === 'home') && r.changes ? r.changes : null;
}

/** The same screen with its Changes view open at `at`, or closed (null). A screen that is no
 * chat is given back as it is. */
export function withChanges(r: Route, at: ChangesAt | null): Route {
  if (r.name !== 'thread' && r.name !== 'home') return r;
  const out = { ...r };
  delete out.changes;
  return at ? { ...out, changes: at } : out;
}

/**
 * What the history entry of a view opened over a screen keeps (`history.state`): the address of
 * the entry under it. A view that closes goes back to that entry when it is the one under it
 * (Back and Forward then do what they say); else, opened from a link or a reload with no entry
 * under it, it puts the screen's address in its place, and the history does not grow.
 */
export interface Over {
  under: string;
}

export function closeBy(state: unknown, under: string): 'back' | 'replace' {
  return !!state && typeof state === 'object' && (state as Partial<Over>).under === under ? 'back' : 'replace';
}
