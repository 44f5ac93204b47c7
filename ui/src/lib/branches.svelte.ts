// The worktree branch of each thread on this machine whose worktree is there (`threads.list`'s
// `branch`), for the session lists' badges (SessionRow). Asked once when the first list shows,
// then kept from the stream: a new worktree adds its branch, a removal takes it away.

import { call } from './api';
import { hub } from './stream';
import { branchesOf, WORKTREE_EVENTS } from './worktree';

export const branches = $state({ of: {} as Record<string, string> });

let users = 0;
let unsub: (() => void) | null = null;

/** Keep `branches` current while a list shows; the returned function lets go. */
export function followBranches(): () => void {
  if (users++ === 0) {
    unsub = hub.subscribe({ types: WORKTREE_EVENTS }, (e) => {
      if (!e.thread) return;
      if (e.type === 'thread.worktree' && e.payload.branch) branches.of[e.thread] = e.payload.branch;
      else if (e.type === 'thread.worktree_removed') delete branches.of[e.thread];
    });
    call('threads.list')
      .then((threads) => (branches.of = branchesOf(threads)))
      .catch(() => {});
  }
  return () => {
    if (--users === 0) {
      unsub?.();
      unsub = null;
    }
  };
}
