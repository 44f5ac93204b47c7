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
