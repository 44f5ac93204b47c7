// The lessons this page knows, for every surface at once (the Lessons screen, Settings' count, a
// chat's notices): loaded with `learn.lessons {all: true}` (retired ones too: the screen shows
// them when asked, and a chat's "Learned" notice stays where it happened), then kept from the
// stream (`lesson.*`, folded at once by lib/lessons.ts, then read again: what vyred says wins).
// Only this machine's: a paired box's lessons are the box's.

import { call, toolMissing } from './api';
import { coalesced } from './coalesce';
import { foldLesson, foldNotice, putLesson, type Lesson, type LessonNotice } from './lessons';
import type { VyreEvent } from './types';
import { hub } from './stream';

export const lessons = $state({
  list: [] as Lesson[],
  /** Read at least once. */
  loaded: false,
  /** This vyred has no lessons (an older one). */
  missing: false,
  /** Why the last read failed, when it did (the screen says so; a chat does not). */
  error: null as unknown,
});

const read = coalesced(
  async () => {
    lessons.list = await call('learn.lessons', { all: true });
    lessons.loaded = true;
    lessons.error = null;
  },
  (e) => {
    if (toolMissing(e)) lessons.missing = true;
    else lessons.error = e;
  },
);

let wired = false;

function wire(): void {
  if (wired) return;
  wired = true;
  hub.subscribe({ types: ['lesson.*'] }, (e) => {
    lessons.list = foldLesson(lessons.list, e).list;
    // Read again after every change: a fold is quick, the list is the truth (counts a read
    // meanwhile already had would otherwise count twice).
    void read();
  });
}

/** Every lesson, retired ones too, then kept from the stream. */
export async function loadLessons(): Promise<void> {
  wire();
  await read();
}

/** What vyred answered (learn.add, learn.edit, learn.retire), in the list at once. */
export function putAnswer(l: Lesson): void {
  lessons.list = putLesson(lessons.list, l);
}

/** One lesson, by its id. */
export function lessonById(id: number): Lesson | undefined {
  return lessons.list.find((l) => l.lesson === id);
}

/** Where a lesson was learned or kept in one thread (`lesson.*`): its events read when the chat
 * opens (`learn.events`) and followed after, one quiet notice each in the chat. */
export class ThreadLessons {
  events = $state<LessonNotice[]>([]);

  follow(thread: string, events: (f: (e: VyreEvent) => void, types?: string[]) => () => void): () => void {
    const off = events((e) => (this.events = foldNotice(this.events, e)), ['lesson.*']);
    void (async () => {
      await loadLessons();
      if (lessons.missing) return;
      const before = await call('learn.events', { thread, limit: 200 });
      for (const e of before) this.events = foldNotice(this.events, e);
    })().catch((e) => console.warn('lesson events', e));
    return off;
  }
}
