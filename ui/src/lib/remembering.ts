// Following what memory gave one thread (`harness.remembered`, lib/memory.ts), wherever the
// thread runs: its events so far, read where it runs (`harness.remembered` there), and those that
// come after. A thread here comes on the app's one stream. A paired box's thread stream carries
// the box's `thread.*` and `ask.*` events only (vyred's pairing follows those), so a box's memory
// is read there again as its turns move: when its session starts, changes state, or the turn's
// answer begins (the hooks have run by then), until the stream brings one itself.
// Pure: what it reads and follows is given, so node --test covers it (ui/test/remembering.test.mjs).

import { cardOf, type MemoryCard } from './memory.js';

/** An event as it comes (the stream's and `system.events`' shape). */
export interface Happened {
  id: number;
  at: number;
  type: string;
  payload?: any;
}

/** Where a thread's memory is read and followed. */
export interface RememberedAt {
  /** The thread's `harness.remembered` events so far, read where it runs. */
  read(): Promise<Happened[]>;
  /** The thread's events there as they come, only those of `types`. */
  events(f: (e: Happened) => void, types: string[]): () => void;
  /** Its stream may not carry `harness.remembered` (a box's): read again as its turns move. */
  reread: boolean;
}

export interface Following {
  /** What could not be read (the box was out of reach) is read now: the box is back. */
  again(): void;
  stop(): void;
}

/** A box's events after which what memory gave the turn is there to read. */
export const TURN_MOVES = ['thread.started', 'thread.state', 'thread.item'];

/**
 * Follow `at`'s memory: `add` is given each card once (by its event's id, however often it is
 * read). `failed` is told of a read that failed and says whether to read again at the next move
 * (false: it was refused, for good, and nothing reads there again).
 */
export function followRemembered(at: RememberedAt, add: (c: MemoryCard) => void, failed: (e: unknown) => boolean): Following {
  const seen = new Set<number>();
  let stopped = false;
  let refused = false;
  /** The last read failed (and was not refused): read once the box is back. */
  let stale = false;
  let reading = false;
  let pending = false;
  /** The stream brought one: it carries them, reading again is not needed. */
  let streamed = false;
  /** The turn's answer began and memory was read since its state last changed. */
  let answered = false;

  const take = (e: Happened) => {
    if (stopped || seen.has(e.id)) return;
    const c = cardOf(e);
    if (!c) return;
    seen.add(e.id);
    add(c);
  };

  function read(): void {
    if (stopped || refused) return;
    if (reading) {
      pending = true;
      return;
    }
    reading = true;
    at.read()
      .then((es) => {
        stale = false;
        es.forEach(take);
      })
      .catch((e) => {
        if (stopped) return;
        if (failed(e)) stale = true;
        else refused = true;
      })
      .finally(() => {
        reading = false;
        if (pending && !streamed) {
          pending = false;
          read();
        }
      });
  }

  const offLive = at.events((e) => {
    if (e.type !== 'harness.remembered') return;
    streamed = true;
    take(e);
  }, ['harness.remembered']);
  const offMoves = at.reread
    ? at.events((e) => {
        if (streamed) return;
        if (e.type === 'thread.item') {
          if (answered || e.payload?.item?.kind !== 'assistant') return;
          answered = true;
        } else answered = false;
        read();
      }, TURN_MOVES)
    : () => {};
  read();

  return {
    again() {
      if (stale) read();
    },
    stop() {
      stopped = true;
      offLive();
      offMoves();
    },
  };
}
