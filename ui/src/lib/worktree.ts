// A session in a git worktree of its own (issue 25, ADR 0031): what the New session form asks
// vyred for, the branch badge's words, and what a merge or a removal answered or refused, said
// for a person. Pure, for node --test (ui/test/worktree.test.mjs); the components call vyred.

import type { components } from './openapi/generated';

/** A thread's worktree, as `threads.get` says it. */
export type Worktree = components['schemas']['threads.get.Worktree'];

/** What the New session form sends as `threads.start`'s `worktree`: nothing when it is off,
 * `true` when Vyre names the branch (the field left empty), else the branch typed. */
export function startWish(on: boolean, branch: string): true | string | undefined {
  if (!on) return undefined;
  const b = branch.trim();
  return b ? b : true;
}

/**
 * What is wrong with a branch name the person typed, in words; null when vyred would take it.
 * The same rule vyred keeps (`branch_ok`): said as they type, before the form is sent.
 */
export function branchProblem(name: string): string | null {
  const b = name.trim();
  if (!b) return null;
  if (b.length > 100) return 'A branch name is at most 100 characters.';
  if (/[^A-Za-z0-9._/-]/.test(b)) return 'A branch name has only letters, digits, -, _, . and /.';
  if (/^[-/.]/.test(b)) return 'A branch name does not start with -, / or a dot.';
  if (/[/.]$/.test(b) || b.endsWith('.lock')) return 'A branch name does not end with /, a dot or .lock.';
  if (b.includes('..') || b.includes('//')) return 'A branch name has no .. and no //.';
  return null;
}

/** vyred's words with a capital first letter (its refusals start in lower case). */
export function sentence(message: string): string {
  const m = message.trim();
  return m ? m[0].toUpperCase() + m.slice(1) : m;
}

/** What a refused `threads.start {worktree}` says, with what to do about it. */
export function startRefusal(code: string, message: string): string {
  const said = sentence(message);
  switch (code) {
    case 'not_a_repository':
      return `${said}. Pick a folder inside a git repository, or turn off “Work in a worktree”.`;
    case 'no_commit':
      return `${said}. Make a first commit in the repository, then start again.`;
    case 'worktree_exists':
      return `${said}. Type another branch name, or leave it empty for one Vyre names.`;
    case 'invalid_input':
      return said;
    case 'worktree_failed':
      return `Git could not make the worktree: ${message}`;
    default:
      return said;
  }
}

/** Where a worktree is: still there, merged (and still there), or removed. */
export type WorktreeState = 'open' | 'merged' | 'removed';

export function worktreeState(w: Pick<Worktree, 'merged_at' | 'removed_at'>): WorktreeState {
  if (w.removed_at) return 'removed';
  if (w.merged_at) return 'merged';
  return 'open';
}

/** The badge's words: the branch while the worktree is there, else that it was removed. */
export function badgeWords(w: Pick<Worktree, 'branch' | 'removed_at'>): string {
  return w.removed_at ? 'worktree removed' : w.branch;
}

/** What the filters vyred turned off mean for the worktree's files; null when none were. */
export function filtersNote(filters: string[]): string | null {
  if (!filters.length) return null;
  const lfs = filters.includes('lfs');
  const others = filters.filter((f) => f !== 'lfs');
  const parts: string[] = [];
  if (lfs) parts.push('LFS files are as stored; run `git lfs pull` in the session to fill them in.');
  if (others.length) {
    const named = others.join(', ');
    parts.push(`The repository's ${others.length === 1 ? 'filter' : 'filters'} ${named} ${others.length === 1 ? 'was' : 'were'} off: those files are as stored.`);
  }
  return parts.join(' ');
}

/** A commit named short, as git does. */
export function shortCommit(c: string | null | undefined): string {
  return c ? c.slice(0, 7) : '';
}

/** A refused merge, for the panel: vyred's words, and whether a merge commit may do it. */
export interface MergeRefusal {
  text: string;
  /** `not_fast_forward`: the branches went apart; a merge commit would bring them together. */
  offerMergeCommit: boolean;
  /** Nothing went wrong (there was nothing to merge): said calmly, not as an error. */
  calm: boolean;
}

export function mergeRefusal(code: string, message: string): MergeRefusal {
  const said = sentence(message);
  switch (code) {
    case 'not_fast_forward':
      return { text: `${said}.`, offerMergeCommit: true, calm: false };
    case 'nothing_to_merge':
      return { text: `Nothing to merge: ${message}.`, offerMergeCommit: false, calm: true };
    default:
      return { text: said.endsWith('.') ? said : `${said}.`, offerMergeCommit: false, calm: false };
  }
}

/** What a merge did, in words. */
export function mergedWords(m: { branch: string; into: string; how: string; commit: string }): string {
  const how = m.how === 'merge' ? 'with a merge commit' : 'fast-forward';
  return `Merged ${m.branch} into ${m.into} (${how}); ${m.into} is at ${shortCommit(m.commit)} now.`;
}

/** What a removal did, in words, with what the person's confirmation gave up. */
export function removedWords(r: { branch: string; branch_deleted: boolean; lost_files: number; lost_commits: number }): string {
  const out = [r.branch_deleted ? `Removed the worktree and its branch ${r.branch}.` : `Removed the worktree; the branch ${r.branch} stays (it has commits nothing else has).`];
  const lost: string[] = [];
  if (r.lost_files) lost.push(`${r.lost_files} file${r.lost_files === 1 ? '' : 's'} not committed`);
  if (r.lost_commits) lost.push(`${r.lost_commits} commit${r.lost_commits === 1 ? '' : 's'}`);
  if (lost.length) out.push(`Given up: ${lost.join(' and ')}.`);
  return out.join(' ');
}

/** Whether what the person typed names the branch, so the removal may go ahead. */
export function confirmed(typed: string, branch: string): boolean {
  return typed.trim() === branch;
}

/**
 * A thread's worktree after one of its events (`thread.worktree_merged`, `..._removed`): the
 * panel follows what happened, from here or from another device. `null` in, `null` out.
 */
export function applyWorktreeEvent<W extends Pick<Worktree, 'merged_at' | 'merged_to' | 'removed_at'>>(
  w: W | null,
  e: { type: string; at: number; payload: Record<string, any> },
): W | null {
  if (!w) return w;
  if (e.type === 'thread.worktree_merged') return { ...w, merged_at: e.at, merged_to: e.payload.commit ?? w.merged_to };
  if (e.type === 'thread.worktree_removed') return { ...w, removed_at: e.at };
  return w;
}

/** The events the panel follows. */
export const WORKTREE_EVENTS = ['thread.worktree', 'thread.worktree_merged', 'thread.worktree_removed'];

/** Each listed thread's branch, for the threads whose worktree is there (`threads.list`). */
export function branchesOf(threads: { thread: string; branch?: string | null }[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const t of threads) if (t.branch) out[t.thread] = t.branch;
  return out;
}

/** Whether the thread can go on: not once its worktree was removed (its folder is gone). */
export function worktreeGone(w: Pick<Worktree, 'removed_at'> | null | undefined): boolean {
  return !!w?.removed_at;
}

/** What the chat says in place of sending, once the worktree was removed; on a paired box
 * (`box`, its name), where a new session is started there. */
export function goneWords(box: string | null = null): string {
  return box ? `The worktree was removed, so this session cannot go on: start a new one on ${box}.` : 'The worktree was removed, so this session cannot go on.';
}

/** Where the New session form starts, for a session that takes over from one whose worktree
 * was removed: the repository's own folder, in the same project. */
export function takeOver(w: Pick<Worktree, 'repo'>, project: string | null | undefined): { cwd: string; project: string | null } {
  return { cwd: w.repo, project: project || null };
}
