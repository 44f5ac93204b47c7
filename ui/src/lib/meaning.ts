// Search by meaning (dense recall): what Settings says of the model that understands the
// sessions (recall.status's `dense`, recall.model_progress while it is fetched), and how a search
// hit (recall.search) says where it came from. Pure: no DOM, no fetch, so node --test covers it
// (ui/test/meaning.test.mjs).

/** Where the model stands: recall.status's `dense` (`fetching` while recall.fetch runs). */
export type ModelState = 'off' | 'missing' | 'broken' | 'ready' | 'fetching';

export interface DenseFacts {
  state: ModelState | string;
  error?: string | null;
  /** Turns given a meaning so far. */
  embedded: number;
}

/** A fetch under way, from `recall.model_progress`. */
export interface FetchProgress {
  state: 'fetching' | 'ready' | 'failed';
  done: number | null;
  total: number | null;
  error: string | null;
}

/** What Settings shows: a badge, a sentence, and whether "Get the model" is offered. */
export interface MeaningView {
  status: ModelState;
  badge: string;
  text: string;
  /** "Get the model (83 MB)" is offered. */
  canFetch: boolean;
  /** 0–100 while the model is fetched and its size is known; null otherwise. */
  percent: number | null;
}

/** How much of the model has arrived, in whole percent; null when its size is not known. */
export function fetchPercent(done: number | null | undefined, total: number | null | undefined): number | null {
  if (typeof done !== 'number' || typeof total !== 'number' || !(total > 0)) return null;
  return Math.max(0, Math.min(100, Math.floor((100 * done) / total)));
}

/** "12 MB" from bytes, for "12 of 83 MB". */
export function megabytes(bytes: number): string {
  return `${Math.round(bytes / 1_000_000)} MB`;
}

/** A `recall.model_progress` payload read field by field (it is data), or null. */
export function progressOf(payload: unknown): FetchProgress | null {
  if (!payload || typeof payload !== 'object') return null;
  const p = payload as Record<string, unknown>;
  const state = p.state === 'fetching' || p.state === 'ready' || p.state === 'failed' ? p.state : null;
  if (!state) return null;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return { state, done: num(p.done), total: num(p.total), error: typeof p.error === 'string' ? p.error : null };
}

/** vyred's words ended as a sentence. */
const sentence = (s: string) => (/[.!?]$/.test(s.trim()) ? s.trim() : `${s.trim()}.`);

/** "1 turn" / "12 turns". */
const turnsText = (n: number) => `${n} turn${n === 1 ? '' : 's'}`;

/**
 * What Settings says of the model. `turns`: every turn recall has read; `progress`: the last
 * fetch event, which wins over a status read before it (the status is asked once, the events
 * keep coming).
 */
export function meaningView(dense: DenseFacts, turns: number, progress: FetchProgress | null = null): MeaningView {
  const state: ModelState = progress?.state === 'fetching' ? 'fetching' : (['off', 'missing', 'broken', 'ready', 'fetching'].includes(dense.state) ? (dense.state as ModelState) : 'missing');
  switch (state) {
    case 'ready': {
      const of = Math.min(dense.embedded, turns);
      const text =
        turns === 0
          ? 'Ready. No sessions to understand yet.'
          : of >= turns
            ? `Ready: all ${turnsText(turns)} understood.`
            : `Ready: ${of} of ${turnsText(turns)} understood. The rest follow in the background.`;
      return { status: 'ready', badge: 'ready', text, canFetch: false, percent: null };
    }
    case 'fetching': {
      const percent = fetchPercent(progress?.done, progress?.total);
      const got = progress?.done && progress.total ? ` ${megabytes(progress.done)} of ${megabytes(progress.total)}.` : '';
      return { status: 'fetching', badge: 'getting it', text: `Getting the model…${got}`, canFetch: false, percent: percent ?? 0 };
    }
    case 'broken':
      return {
        status: 'broken',
        badge: 'not working',
        text: `The model on this machine cannot be used${dense.error ? `: ${sentence(dense.error)}` : '.'} Getting it again usually mends it.`,
        canFetch: true,
        percent: null,
      };
    case 'off':
      return {
        status: 'off',
        badge: 'off',
        text: "Turned off in Vyre's config file. Search finds the words you type.",
        canFetch: false,
        percent: null,
      };
    default:
      return {
        status: 'missing',
        badge: 'not set up',
        text: 'Search finds the words you type. With a small model that runs on this machine, it also finds what you meant, said in other words.',
        canFetch: true,
        percent: null,
      };
  }
}

/** What a failed fetch says, in words first. */
export function fetchFailedText(error: string | null): string {
  return error ? `The model could not be fetched: ${error}` : 'The model could not be fetched.';
}

/** How a search hit was found: by its words, its meaning, or both. */
export type Half = 'words' | 'meaning';

/** A hit's small tag: "words", "meaning" or "words + meaning"; null when it says neither. */
export function foundTag(found: readonly string[] | null | undefined): { label: string; title: string } | null {
  const words = !!found?.includes('words');
  const meaning = !!found?.includes('meaning');
  if (words && meaning) return { label: 'words + meaning', title: 'Found by the words you typed and by what they mean' };
  if (words) return { label: 'words', title: 'Found by the words you typed' };
  if (meaning) return { label: 'meaning', title: 'Found by what you meant, said in other words' };
  return null;
}

/** What a hit's session is called: its title, the one the app knows, else "an earlier session". */
export function hitTitle(hit: { title: string | null }, known?: string | null): string {
  return hit.title?.trim() || known?.trim() || 'an earlier session';
}

/** Hits, each turn once: the list is keyed by turn, and a key twice would break it. */
export function uniqueHits<T extends { thread: string; turn: string }>(hits: T[]): T[] {
  const seen = new Set<string>();
  return hits.filter((h) => {
    const k = `${h.thread}\u0000${h.turn}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
