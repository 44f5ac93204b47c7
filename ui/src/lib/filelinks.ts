// The files an answer names, opened where the answer is read: a chat gives its Markdown what
// opens one (`provideFileLinks`), and md/Inline makes the inline code that names a file a link.

import { getContext, setContext } from 'svelte';
import type { FileRef } from './filepaths';

export type OpenFile = (file: FileRef) => void;

const KEY = Symbol('file links');

/** For the markdown under this component: `open()` is what opens a file, or null (no links). */
export function provideFileLinks(links: { readonly open: OpenFile | null }): void {
  setContext(KEY, links);
}

/** What opens a file, as the markdown above provides it (null: none). */
export function fileLinks(): { readonly open: OpenFile | null } {
  return getContext<{ readonly open: OpenFile | null } | undefined>(KEY) ?? { open: null };
}
