import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  applyWorktreeEvent,
  badgeWords,
  branchProblem,
  branchesOf,
  confirmed,
  filtersNote,
  mergeRefusal,
  mergedWords,
  removedWords,
  sentence,
  startRefusal,
  startWish,
  worktreeState,
  worktreeGone,
  goneWords,
  takeOver,
} from '../.test-build/worktree.js';

test('the form asks for a worktree only when it is on: true for a branch Vyre names, else the name', () => {
  assert.equal(startWish(false, 'feature/x'), undefined);
  assert.equal(startWish(true, ''), true);
  assert.equal(startWish(true, '   '), true);
  assert.equal(startWish(true, ' feature/x '), 'feature/x');
});

test('a branch name vyred would refuse is said in words before it is sent', () => {
  for (const ok of ['', 'feature/login', 'vyre/fix-3f2a', 'a_b.c', 'v1.2']) assert.equal(branchProblem(ok), null, ok);
  assert.match(branchProblem('has space'), /only letters, digits/);
  assert.match(branchProblem('ünï'), /only letters, digits/);
  assert.match(branchProblem('a@{1}'), /only letters, digits/);
  assert.match(branchProblem('-x'), /does not start/);
  assert.match(branchProblem('/x'), /does not start/);
  assert.match(branchProblem('.x'), /does not start/);
  assert.match(branchProblem('x/'), /does not end/);
  assert.match(branchProblem('x.'), /does not end/);
  assert.match(branchProblem('x.lock'), /does not end/);
  assert.match(branchProblem('a..b'), /no \.\./);
  assert.match(branchProblem('a//b'), /no \.\./);
  assert.match(branchProblem('x'.repeat(101)), /at most 100/);
});

test('a refused start says vyred\'s words, capitalised, and what to do', () => {
  assert.equal(sentence('the repository has no commit'), 'The repository has no commit');
  assert.equal(sentence(''), '');
  assert.equal(
    startRefusal('not_a_repository', '/home/a/notes is not in a git repository, so it cannot have a worktree'),
    '/home/a/notes is not in a git repository, so it cannot have a worktree. Pick a folder inside a git repository, or turn off “Work in a worktree”.',
  );
  assert.match(startRefusal('no_commit', 'the repository has no commit yet: a worktree starts from one'), /^The repository has no commit yet.*Make a first commit/);
  assert.match(startRefusal('worktree_exists', '/w/.vyre-worktrees/r/x is there already'), /Type another branch name/);
  assert.equal(startRefusal('invalid_input', '"a b" is not a branch name Vyre makes'), '"a b" is not a branch name Vyre makes');
  assert.equal(startRefusal('worktree_failed', 'fatal: bad'), 'Git could not make the worktree: fatal: bad');
  assert.equal(startRefusal('no_such_folder', 'no folder ~/x'), 'No folder ~/x');
});

test('the badge says the branch until the worktree is removed', () => {
  const w = { branch: 'vyre/fix-1a2b', merged_at: null, removed_at: null };
  assert.equal(worktreeState(w), 'open');
  assert.equal(badgeWords(w), 'vyre/fix-1a2b');
  assert.equal(worktreeState({ ...w, merged_at: 5 }), 'merged');
  assert.equal(badgeWords({ ...w, merged_at: 5 }), 'vyre/fix-1a2b');
  assert.equal(worktreeState({ ...w, merged_at: 5, removed_at: 6 }), 'removed');
  assert.equal(badgeWords({ ...w, removed_at: 6 }), 'worktree removed');
});

test('the filters that were off are said: LFS with what to run, others by name', () => {
  assert.equal(filtersNote([]), null);
  assert.equal(filtersNote(['lfs']), 'LFS files are as stored; run `git lfs pull` in the session to fill them in.');
  assert.equal(filtersNote(['crypt']), "The repository's filter crypt was off: those files are as stored.");
  assert.match(filtersNote(['lfs', 'a', 'b']), /^LFS files.* The repository's filters a, b were off/);
});

test('a refused merge offers a merge commit only when it could not fast-forward', () => {
  const nf = mergeRefusal('not_fast_forward', 'main cannot fast-forward to vyre/x (fatal: Not possible): merge with a merge commit instead');
  assert.equal(nf.offerMergeCommit, true);
  assert.equal(nf.calm, false);
  assert.match(nf.text, /^Main cannot fast-forward.*instead\.$/);
  const un = mergeRefusal('uncommitted', '1 file(s) in the worktree are not committed (b.txt): ask the session to commit them');
  assert.equal(un.offerMergeCommit, false);
  assert.match(un.text, /^1 file\(s\).*b\.txt.*\.$/);
  const none = mergeRefusal('nothing_to_merge', 'vyre/x has no commit that main lacks');
  assert.equal(none.text, 'Nothing to merge: vyre/x has no commit that main lacks.');
  assert.equal(none.calm, true, 'nothing went wrong');
  assert.equal(mergeRefusal('merge_conflict', 'merging x into main conflicts in a.txt; nothing was changed.').text, 'Merging x into main conflicts in a.txt; nothing was changed.');
});

test('what a merge and a removal did, in words', () => {
  assert.equal(mergedWords({ branch: 'vyre/x', into: 'main', how: 'fast-forward', commit: '0123456789abcdef' }), 'Merged vyre/x into main (fast-forward); main is at 0123456 now.');
  assert.match(mergedWords({ branch: 'vyre/x', into: 'main', how: 'merge', commit: 'abc' }), /with a merge commit/);
  assert.equal(removedWords({ branch: 'vyre/x', branch_deleted: true, lost_files: 0, lost_commits: 0 }), 'Removed the worktree and its branch vyre/x.');
  assert.equal(
    removedWords({ branch: 'vyre/x', branch_deleted: true, lost_files: 1, lost_commits: 2 }),
    'Removed the worktree and its branch vyre/x. Given up: 1 file not committed and 2 commits.',
  );
  assert.match(removedWords({ branch: 'vyre/x', branch_deleted: false, lost_files: 3, lost_commits: 0 }), /the branch vyre\/x stays.*Given up: 3 files not committed\.$/);
});

test('the removal goes ahead only when the branch is typed as it is', () => {
  assert.equal(confirmed('vyre/x', 'vyre/x'), true);
  assert.equal(confirmed('  vyre/x ', 'vyre/x'), true);
  assert.equal(confirmed('vyre/X', 'vyre/x'), false);
  assert.equal(confirmed('', 'vyre/x'), false);
});

test('the panel follows the thread\'s merge and removal events', () => {
  const w = { branch: 'b', merged_at: null, merged_to: null, removed_at: null };
  const merged = applyWorktreeEvent(w, { type: 'thread.worktree_merged', at: 10, payload: { commit: 'c1' } });
  assert.deepEqual(merged, { branch: 'b', merged_at: 10, merged_to: 'c1', removed_at: null });
  assert.equal(w.merged_at, null, 'a new object: the old one is not changed');
  assert.deepEqual(applyWorktreeEvent(merged, { type: 'thread.worktree_removed', at: 20, payload: {} }).removed_at, 20);
  assert.equal(applyWorktreeEvent(w, { type: 'thread.state', at: 1, payload: {} }), w);
  assert.equal(applyWorktreeEvent(null, { type: 'thread.worktree_removed', at: 1, payload: {} }), null);
});

test('threads.list says each worktree thread\'s branch', () => {
  assert.deepEqual(branchesOf([{ thread: 'a', branch: 'vyre/a' }, { thread: 'b', branch: null }, { thread: 'c' }]), { a: 'vyre/a' });
});

test('the panel says where the worktree is, its filters, and offers Merge and Remove until it is removed', async () => {
  const { worktreePanel } = await import('../.test-build/ssr/entry.js');
  const html = (s) => s.replace(/<!--[\s\S]*?-->/g, '');
  const w = {
    repo: '/home/a/src/app',
    path: '/home/a/src/.vyre-worktrees/app/vyre-fix-1a2b',
    branch: 'vyre/fix-1a2b',
    base: '0123456789abcdef0123',
    filters_off: ['lfs'],
    created_at: 1,
    merged_at: null,
    merged_to: null,
    removed_at: null,
  };
  const open = html(worktreePanel({ worktree: w }));
  assert.match(open, /data-testid="worktree-panel" data-state="open"/);
  assert.match(open, /data-testid="worktree-branch"[^>]*>vyre\/fix-1a2b</);
  assert.match(open, /data-testid="worktree-path"[^>]*>\/home\/a\/src\/\.vyre-worktrees\/app\/vyre-fix-1a2b</);
  assert.match(open, />0123456</);
  assert.match(open, /data-testid="worktree-state"[^>]*>not merged</);
  assert.match(open, /LFS files are as stored; run <code>git lfs pull<\/code> in the session/);
  assert.match(open, /data-testid="worktree-merge"/);
  assert.match(open, /data-testid="worktree-remove"/);
  assert.doesNotMatch(open, /worktree-merge-commit/, 'a merge commit only after a fast-forward was refused');

  const merged = html(worktreePanel({ worktree: { ...w, filters_off: [], merged_at: Date.now(), merged_to: 'fedcba9876' } }));
  assert.match(merged, /data-testid="worktree-state"[^>]*>merged</);
  assert.match(merged, /data-testid="worktree-merged"[^>]*>just now, at <span[^>]*>fedcba9</);
  assert.doesNotMatch(merged, /worktree-filters/);

  const removed = html(worktreePanel({ worktree: { ...w, removed_at: Date.now() } }));
  assert.match(removed, /data-testid="worktree-state"[^>]*>removed</);
  assert.doesNotMatch(removed, /worktree-merge|worktree-remove"/, 'nothing left to do');

  // A box whose link does not allow them: said, not offered.
  assert.doesNotMatch(html(worktreePanel({ worktree: w, can: false })), /worktree-merge|worktree-remove"/);
});

test('a thread whose worktree was removed cannot go on: the chat says so, and New session starts in the repository', () => {
  assert.equal(worktreeGone(null), false, 'no worktree: it goes on');
  assert.equal(worktreeGone(undefined), false);
  assert.equal(worktreeGone({ removed_at: null }), false);
  assert.equal(worktreeGone({ removed_at: 5 }), true);
  // Removed by an event: gone from then on.
  const w = { repo: '/r/app', branch: 'b', merged_at: null, merged_to: null, removed_at: null };
  assert.equal(worktreeGone(applyWorktreeEvent(w, { type: 'thread.worktree_removed', at: 9, payload: {} })), true);
  assert.equal(goneWords(), 'The worktree was removed, so this session cannot go on.');
  assert.equal(goneWords('lab box'), 'The worktree was removed, so this session cannot go on: start a new one on lab box.');
  assert.deepEqual(takeOver(w, 'news'), { cwd: '/r/app', project: 'news' });
  assert.deepEqual(takeOver(w, null), { cwd: '/r/app', project: null });
  assert.deepEqual(takeOver(w, ''), { cwd: '/r/app', project: null });
});

test('the composer of a thread that cannot go on takes no words, and offers no steering', async () => {
  const { composer } = await import('../.test-build/ssr/entry.js');
  const html = (s) => s.replace(/<!--[\s\S]*?-->/g, '');
  const open = html(composer({ running: true }));
  assert.doesNotMatch(open, /<textarea[^>]*disabled/);
  assert.match(open, /data-testid="interrupt"/);
  assert.match(open, /data-testid="after-turn"/);
  assert.match(open, /data-testid="send"[^>]*>\s*Steer\s*</);
  const closed = html(composer({ running: true, closed: true, placeholder: 'This session cannot go on' }));
  assert.match(closed, /<textarea[^>]*placeholder="This session cannot go on"[^>]*disabled/);
  assert.match(closed, /<button class="primary send[^"]*" disabled="" data-testid="send">\s*Send\s*</, 'not "Steer": nothing is steered');
  assert.doesNotMatch(closed, /data-testid="interrupt"|data-testid="after-turn"/);
  // A box out of reach: the words may be written, not sent.
  const away = html(composer({ disabled: true }));
  assert.doesNotMatch(away, /<textarea[^>]*disabled/);
  assert.match(away, /<button class="primary send[^"]*" disabled/);
});
