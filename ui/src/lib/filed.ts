// What the watchers filed, found by its words (`recall.filed`, issue 23): the Deck's "Filed by
// watchers" and a project page's search of what it found. Which words are worth asking for, and
// whether a hit's snippet is only its title again (a title match: then the title itself is shown
// with its words marked, and no second line). Pure, for node --test (ui/test/filed.test.mjs);
// the call is lib/watchercalls.ts.

// `.js`: node runs this module as tsc writes it for the tests (.test-build/), where an import
// needs its file's whole name; tsc and Vite both read it as memory.ts.
import { snippetParts } from './memory.js';
import type { ToolOutput } from './api';

/** One item found: its watcher, project, title, link, when, and the words around the match
 * (`[` `]` around each matched word). */
export type FiledHit = ToolOutput<'recall.filed'>[number];

/** How many the Deck shows: a short section under what was said in the sessions. */
export const DECK_FILED = 5;

/** How many a project page's search shows. */
export const PROJECT_FILED = 50;

/** The words to ask for: what was typed, trimmed; null when it holds no letter or digit (vyred
 * refuses a query without one, and there is nothing to find). */
export function filedQuery(typed: string): string | null {
  const q = typed.trim();
  return /[\p{L}\p{N}_]/u.test(q) ? q : null;
}

/** Each item once (the first, the best), in the order found: the lists are keyed by item. */
export function uniqueFiled<H extends { watcher: string; item: number }>(hits: H[]): H[] {
  const seen = new Set<string>();
  return hits.filter((h) => {
    const key = `${h.watcher}\u0000${h.item}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Whether the snippet is the title again, its words marked: FTS5 gives the best column's
 * words, the title's when it matched there and is short. */
export function snippetIsTitle(hit: { title: string; snippet: string }): boolean {
  const plain = snippetParts(hit.snippet)
    .map((p) => p.text)
    .join('');
  return plain.trim() === hit.title.trim() && hit.snippet.trim() !== '';
}
