// A thread's own actions that call vyred and then go on by themselves (docs/api.md,
// `threads.*`): the rewind with its questions, a fork that opens the new thread, the end of a
// session. The chat (components/Chat.svelte) keeps what changes its own state.

import { ApiError, call } from './api';
import { fail, navigate } from './app.svelte';
import { confirmAction, confirmChecked } from './confirm.svelte';
import { filesRefused, FILES_REFUSED, rewindQuestion } from './rewind';

/** Rewind `thread` to the message `uuid`; with the `files` the session changed since, when the
 * person ticks that (0: none offered, as for a box's threads, whose changes are not read here). */
export async function rewindThread(thread: string, uuid: string, files: number): Promise<void> {
  const { yes, checked } = await confirmChecked(rewindQuestion(files));
  if (!yes) return;
  try {
    await call('threads.rewind', checked ? { thread, uuid, files: true } : { thread, uuid });
  } catch (e) {
    // The files could not be put back, so nothing was done: vyred's words (the files it
    // names), and the conversation's rewind alone offered.
    if (!checked || !(e instanceof ApiError) || !FILES_REFUSED.includes(e.code)) return fail(e);
    if (!(await confirmAction(filesRefused(e.message)))) return;
    await call('threads.rewind', { thread, uuid }).catch(fail);
  }
}

/** Fork `thread` (from message `uuid`, else whole) and open the new thread. */
export async function forkThread(thread: string, uuid?: string): Promise<void> {
  try {
    const r = await call('threads.fork', uuid ? { thread, uuid } : { thread });
    navigate({ name: 'thread', thread: r.thread });
  } catch (e) {
    fail(e);
  }
}

/** What the chat asks of a thread's provider (`sessions.providers`): the reasoning efforts it
 * takes, least first (none: no such choice), and whether its threads go back to a message. */
export interface ProviderFacts {
  efforts: string[];
  rewinds: boolean;
}
/** As for Claude Code, when vyred does not say (an older one, a box whose link does not allow
 * asking): no efforts offered, rewinds as before. */
export const CLAUDE_FACTS: ProviderFacts = { efforts: [], rewinds: true };

/** Provider `provider`'s facts, asked once per source (`where`: a box, or '' for this machine). */
const known = new Map<string, Promise<Record<string, ProviderFacts>>>();
export async function factsOf(
  provider: string,
  ask: () => Promise<{ name: string; efforts?: string[]; rewinds?: boolean }[]>,
  where = '',
): Promise<ProviderFacts> {
  let all = known.get(where);
  if (!all) {
    all = ask()
      .then((list) => Object.fromEntries(list.map((p) => [p.name, { efforts: p.efforts ?? [], rewinds: p.rewinds ?? true }])))
      .catch(() => {
        known.delete(where);
        return {};
      });
    known.set(where, all);
  }
  return (await all)[provider] ?? CLAUDE_FACTS;
}

/** End `thread`'s session. */
export async function stopThread(thread: string): Promise<void> {
  await call('threads.stop', { thread }).catch(fail);
}
