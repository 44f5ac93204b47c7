// Comments the person wrote on the lines of a thread's changes and has not sent yet, by thread:
// closing the Changes view, going to another thread and back, or a reload keeps them
// (lib/commentstore.ts keeps them in this origin's storage) until they are sent or thrown away.

import type { LineComment } from './changes';
import { keepComments, readComments } from './commentstore';

const drafts: Record<string, LineComment[]> = $state({});

/** A thread's unsent comments, read from storage the first time. Not from a `$derived`: the
 * first read writes the state. */
export function loadDrafts(thread: string): void {
  if (!(thread in drafts)) drafts[thread] = readComments(thread);
}

/** A thread's unsent comments as they are now (reactive). */
export function draftsOf(thread: string): LineComment[] {
  return drafts[thread] ?? [];
}

/** Put a thread's unsent comments in place, and keep them. */
export function setDrafts(thread: string, list: LineComment[]): void {
  drafts[thread] = list;
  keepComments(thread, list);
}
