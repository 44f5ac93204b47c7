// A rewind in the chat, and the files with it (`threads.rewind {files}`): how many files the
// session changed from a message on (what the checkbox offers to put back), the question, and
// what a refusal says. Pure, for node --test (ui/test/rewind.test.mjs).

import type { ChangeLog } from './changes';

/** What lib/confirm.svelte.ts's `confirmChecked` asks (the part a rewind uses). */
export interface Question {
  title: string;
  warning?: string;
  body?: string;
  ok: string;
  danger?: boolean;
  check?: string;
  checkNote?: string;
}

/** The files the thread's turns changed after `at` (a message's time): the turns that message
 * began and those after it. 0 when the message's time is not known. */
export function filesSince(log: ChangeLog, at: number | null | undefined): number {
  if (!at) return 0;
  const seen = new Set<string>();
  let unnamed = 0;
  for (const t of log.turns) {
    if (t.at < at || !t.files) continue;
    for (const p of t.paths) seen.add(p.path);
    unnamed += Math.max(0, t.files - t.paths.length);
  }
  return seen.size + unnamed;
}

const filesWord = (n: number) => `${n} file${n === 1 ? '' : 's'}`;

/** The rewind's question; with files changed since, the choice to put them back too. */
export function rewindQuestion(files: number): Question {
  const q: Question = {
    title: 'Rewind to this message?',
    body: 'What came after it is dropped, in this thread. Fork instead to keep it.',
    ok: 'Rewind',
    danger: true,
  };
  if (files > 0) {
    q.check = `Also put back the files changed since (${filesWord(files)})`;
    q.checkNote =
      'Each goes back to how it was before this message, and a file added since is removed. If one changed again after the session last changed it, nothing is done.';
  }
  return q;
}

/** The codes that mean the files could not be put back, and nothing was done. */
export const FILES_REFUSED = ['changed_since', 'not_followed', 'not_a_turn', 'folder_changed', 'no_snapshots'];

/** What to ask when the files could not be put back: vyred's words (which name the files), and
 * the rewind of the conversation alone. */
export function filesRefused(message: string): Question {
  const m = message.trim();
  return {
    title: 'The files were not put back',
    warning: m ? m[0].toUpperCase() + m.slice(1) + (/[.!]$/.test(m) ? '' : '.') : undefined,
    body: 'Rewind only the conversation, and leave the files as they are?',
    ok: 'Rewind the conversation',
    danger: true,
  };
}
