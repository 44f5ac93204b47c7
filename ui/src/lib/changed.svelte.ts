// What each turn changed in one thread's folder (`thread.changed`, `thread.reverted`), as the
// chat shows it: a row after the turn and the header's count. The events are read when the chat
// opens and followed after; the diffs are read only when the Changes view opens. A box's link
// does not give the events before (its rows come from its live events only).

import { call } from './api';
import { emptyLog, filesChanged, foldChange, type ChangeLog } from './changes';
import type { VyreEvent } from './types';

const TYPES = ['thread.changed', 'thread.reverted'];

export class ThreadChanges {
  log = $state<ChangeLog>(emptyLog());
  /** Files changed across the thread's turns. */
  count = $derived(filesChanged(this.log));
  /** Changes no tool call said it would make. */
  unannounced = $derived(this.log.turns.reduce((n, t) => n + t.unannounced, 0));

  /** Follow `thread`'s change events on `events`, and read those before when `before`. */
  follow(thread: string, events: (f: (e: VyreEvent) => void, types?: string[]) => () => void, before: boolean): () => void {
    const off = events((e) => (this.log = foldChange(this.log, e)), TYPES);
    if (before)
      void call('system.events', { thread, types: TYPES, limit: 1000 })
        .then((was) => {
          for (const e of was) this.log = foldChange(this.log, e);
        })
        .catch((e) => console.warn('change events', e));
    return off;
  }
}
