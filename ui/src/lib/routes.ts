// The app's addresses: each screen's path under /app/, and the screen a path opens. Pure, for
// node --test (ui/test/routes.test.mjs).

export type Route =
  | { name: 'home' }
  | { name: 'deck' }
  | { name: 'needs' }
  | { name: 'planner' }
  | { name: 'watchers' }
  /** What Vyre learned from how the person corrects it (spec 7.11). */
  | { name: 'lessons' }
  | { name: 'files' }
  | { name: 'settings' }
  /** One project's page: its sessions, watchers, what they filed, and its planner items. */
  | { name: 'project'; project: string }
  /** A thread, on this machine or (`box`, a pairing id) on a paired box: the same chat view. */
  | { name: 'thread'; thread: string; box?: string | null }
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
  const token = new URLSearchParams(loc.search).get('t');
  const path = loc.pathname.replace(/\/+$/, '');
  if (path === '/onboard') return { name: 'onboard', token };
  if (path === '/login') return { name: 'login', token };
  const rest = path.replace(/^\/app/, '');
  const m = rest.match(/^\/t\/([^/]+)$/);
  if (m) return { name: 'thread', thread: decode(m[1]) };
  const b = rest.match(/^\/b\/([^/]+)\/t\/([^/]+)$/);
  if (b) return { name: 'thread', thread: decode(b[2]), box: decode(b[1]) };
  const p = rest.match(/^\/p\/([^/]+)$/);
  if (p) return { name: 'project', project: decode(p[1]) };
  if (rest === '/deck') return { name: 'deck' };
  if (rest === '/needs') return { name: 'needs' };
  if (rest === '/planner') return { name: 'planner' };
  if (rest === '/watchers') return { name: 'watchers' };
  if (rest === '/lessons') return { name: 'lessons' };
  if (rest === '/files') return { name: 'files' };
  if (rest === '/settings') return { name: 'settings' };
  return { name: 'home' };
}

export function pathOf(r: Route): string {
  switch (r.name) {
    case 'thread':
      return r.box ? `/app/b/${encodeURIComponent(r.box)}/t/${encodeURIComponent(r.thread)}` : `/app/t/${encodeURIComponent(r.thread)}`;
    case 'project':
      return `/app/p/${encodeURIComponent(r.project)}`;
    case 'home':
      return '/app/';
    case 'onboard':
    case 'login':
      return '/' + r.name;
    default:
      return `/app/${r.name}`;
  }
}
