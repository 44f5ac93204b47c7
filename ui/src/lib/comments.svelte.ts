// Comments the person wrote on the lines of a thread's changes and has not sent yet, by thread:
// closing the Changes view, or going to another thread and back, keeps them until they are sent
// or thrown away (a reload does not).

import type { LineComment } from './changes';

export const drafts: Record<string, LineComment[]> = $state({});
