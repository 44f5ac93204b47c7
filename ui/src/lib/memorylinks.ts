// The words of an answer that quote what memory gave the session (lib/memory.ts), marked where
// the answer is read: a chat gives its Markdown the words and what opens a fact's "why"
// (`provideMemoryLinks`), and md/Inline marks them in its text. Like lib/filelinks.ts.

import { getContext, setContext } from 'svelte';
import type { MemoryWord } from './memory';

export interface MemoryLinks {
  /** The words to mark (none: nothing is). */
  readonly words: MemoryWord[];
  /** Opens where a fact came from; null: the words are not marked. */
  readonly open: ((fact: number) => void) | null;
}

const KEY = Symbol('memory links');
const NONE: MemoryLinks = { words: [], open: null };

/** For the markdown under this component. */
export function provideMemoryLinks(links: MemoryLinks): void {
  setContext(KEY, links);
}

/** The words to mark, as the markdown above provides them. */
export function memoryLinks(): MemoryLinks {
  return getContext<MemoryLinks | undefined>(KEY) ?? NONE;
}
