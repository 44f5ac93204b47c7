// What the Deck says of a session: one badge for its state (never "live" and "idle" side by
// side), and when it was last active. Pure, for node --test (ui/test/deck.test.mjs).

export interface Badge {
  label: string;
  /** A class for its colour: working, warn, live, err. */
  tone: string;
}

/** A session's one state badge; none for a closed one. */
export function badgeOf(e: { source: string; live: boolean; state?: string | null }): Badge | null {
  if (e.source !== 'vyre') return e.live ? { label: 'in a terminal', tone: 'live' } : null;
  switch (e.state) {
    case 'running':
      return { label: 'working', tone: 'working' };
    case 'waiting':
      return { label: 'needs you', tone: 'warn' };
    case 'starting':
      return { label: 'starting', tone: 'working' };
    case 'failed':
      return { label: 'failed', tone: 'err' };
    case 'idle':
      return e.live ? { label: 'open', tone: 'live' } : null;
    default:
      return null;
  }
}

/** "just now", "5 min ago", "3 h ago", "2 d ago", else the date. */
export function ago(ms: number | null | undefined, now = Date.now()): string {
  if (!ms) return '';
  const s = Math.max(0, (now - ms) / 1000);
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  if (s < 86400 * 7) return `${Math.floor(s / 86400)} d ago`;
  return new Date(ms).toLocaleDateString();
}

/** What the Deck's (and a project page's) session rows need of a catalog entry. */
interface Listed {
  thread: string;
  title: string | null;
  forked_from: string | null;
  live: boolean;
  state: string | null;
  last_activity: number | null;
}

/** The thread events that change a listed session (or add one). */
export const SESSION_EVENTS = ['thread.state', 'thread.started', 'thread.stopped', 'thread.adopted', 'thread.titled', 'project.created'];

/**
 * A session event applied in place to the listed sessions; `titles` (the app's, by thread) learns
 * a new title. False when the list must be loaded again: the event names a session not listed
 * (a new one), or a project was made (its folders may claim sessions).
 */
export function applySessionEvent(
  entries: Listed[],
  e: { type: string; at: number; thread: string | null; payload: Record<string, any> },
  titles: Record<string, string>,
): boolean {
  const it = entries.find((x) => x.thread === e.thread);
  if (!it || e.type === 'project.created') return false;
  if (e.type === 'thread.titled') {
    it.title = e.payload.title ?? null;
    if (e.payload.forked_from) it.forked_from = e.payload.forked_from;
    if (it.title) titles[it.thread] = it.title;
    return true;
  }
  if (e.type === 'thread.state') it.state = e.payload.state;
  if (e.type === 'thread.stopped') {
    it.live = false;
    it.state = 'stopped';
  }
  if (e.type === 'thread.started') it.live = true;
  it.last_activity = e.at;
  return true;
}

/** What a session is called: its title, its first words, the title the app learnt, else
 * "Untitled session". */
export function sessionTitle(e: { thread: string; title: string | null; first_message: string | null }, titles: Record<string, string>): string {
  return e.title || e.first_message || titles[e.thread] || 'Untitled session';
}
