import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  emptyLog,
  foldChange,
  filesChanged,
  markOf,
  markWords,
  mergeTurns,
  placeMarks,
  sideOf,
  commentKey,
  commentWhere,
  commentLine,
  commentsMessage,
  putComment,
  revertQuestion,
  statusWord,
  turnNo,
  changesFor,
  turnAt,
} from '../.test-build/changes.js';
import { commentsItem, keepComments, readComments } from '../.test-build/commentstore.js';
import { afterHint, queues, sendWord } from '../.test-build/sendmode.js';

const T = 't-1';
const changed = (id, n, at, paths, extra = {}) => ({
  id,
  at,
  type: 'thread.changed',
  thread: T,
  payload: {
    turn: `${T}:${n}`,
    files: paths.length,
    added: paths.filter((p) => p.status === 'added').length,
    modified: paths.filter((p) => p.status === 'modified').length,
    deleted: 0,
    unannounced: paths.filter((p) => !p.announced).length,
    paths,
    ...extra,
  },
});
const SED = [
  { path: 'notes.txt', status: 'modified', announced: false },
  { path: 'made.txt', status: 'added', announced: false },
];

test('a turn number is read from its id', () => {
  assert.equal(turnNo('t-1:3'), 3);
  assert.equal(turnNo('a:b:12'), 12);
  assert.equal(turnNo('nonsense'), null);
});

test('thread.changed marks its turn once, the latest wins, oldest turn first', () => {
  let log = emptyLog();
  log = foldChange(log, changed(9, 2, 2000, SED));
  log = foldChange(log, changed(5, 1, 1000, [{ path: 'a.txt', status: 'modified', announced: true }]));
  assert.deepEqual(
    log.turns.map((t) => [t.turn, t.files, t.unannounced]),
    [
      ['t-1:1', 1, 0],
      ['t-1:2', 2, 2],
    ],
  );
  // Read again (the event log read back after the stream brought it): the same mark.
  const again = foldChange(log, changed(9, 2, 2000, SED));
  assert.equal(again.turns.length, 2);
  assert.deepEqual(again.turns[1], log.turns[1]);
  // Events of other kinds, or without a turn, change nothing.
  assert.equal(foldChange(log, { id: 1, at: 1, type: 'thread.text', payload: { turn: 't-1:1' } }), log);
  assert.equal(foldChange(log, { id: 1, at: 1, type: 'thread.changed', payload: {} }), log);
});

test('a note without files is kept, and said in the row', () => {
  const log = foldChange(emptyLog(), changed(3, 1, 10, [], { note: 'the home folder is not followed whole' }));
  assert.equal(log.turns[0].note, 'the home folder is not followed whole');
  assert.equal(markWords(log.turns[0]), "This turn's file changes are not known: the home folder is not followed whole");
});

test('thread.reverted adds the paths put back to its turn, once each', () => {
  let log = foldChange(emptyLog(), changed(9, 2, 2000, SED));
  const rev = (paths) => ({ id: 11, at: 3000, type: 'thread.reverted', payload: { turn: 't-1:2', paths, by: 'device:x' } });
  log = foldChange(log, rev(['made.txt']));
  assert.deepEqual(log.reverted, { 't-1:2': ['made.txt'] });
  const same = foldChange(log, rev(['made.txt']));
  assert.equal(same, log, 'nothing new: the same log');
  log = foldChange(log, rev(['notes.txt', 'made.txt']));
  assert.deepEqual(log.reverted, { 't-1:2': ['made.txt', 'notes.txt'] });
});

test('the count of files changed: each path once, and those past the events\' first 100 too', () => {
  let log = foldChange(emptyLog(), changed(1, 1, 1, SED));
  log = foldChange(log, changed(2, 2, 2, [{ path: 'notes.txt', status: 'modified', announced: true }]));
  assert.equal(filesChanged(log), 2);
  log = foldChange(log, changed(3, 3, 3, [{ path: 'x', status: 'added', announced: true }], { files: 150 }));
  assert.equal(filesChanged(log), 2 + 1 + 149);
});

test('the chat row says how many files changed and how many no tool said', () => {
  const log = foldChange(emptyLog(), changed(1, 1, 1, SED));
  assert.equal(markWords(log.turns[0]), 'Changed 2 files · 2 without a tool saying so');
  const three = foldChange(emptyLog(), changed(1, 1, 1, [...SED, { path: 'w.txt', status: 'added', announced: true }])).turns[0];
  assert.equal(markWords(three), 'Changed 3 files · 2 without a tool saying so');
  const one = foldChange(emptyLog(), changed(1, 1, 1, [{ path: 'w.txt', status: 'added', announced: true }])).turns[0];
  assert.equal(markWords(one), 'Changed w.txt');
  const oneLoud = foldChange(emptyLog(), changed(1, 1, 1, [SED[0]])).turns[0];
  assert.equal(markWords(oneLoud), 'Changed notes.txt · without a tool saying so');
});

test('a turn of threads.changes marks as its event would', () => {
  const t = {
    turn: 't-1:4',
    folder: '/w',
    at: 55,
    note: null,
    files: [
      { path: 'a', status: 'added', announced: true, diff: '', cut: false },
      { path: 'b', status: 'type', announced: false, diff: '', cut: false },
      { path: 'c', status: 'deleted', announced: false, diff: '', cut: false },
    ],
  };
  assert.deepEqual(markOf(t), {
    turn: 't-1:4',
    at: 55,
    files: 3,
    added: 1,
    modified: 1,
    deleted: 1,
    unannounced: 2,
    paths: [
      { path: 'a', status: 'added', announced: true },
      { path: 'b', status: 'type', announced: false },
      { path: 'c', status: 'deleted', announced: false },
    ],
    note: null,
  });
});

test('turns read again replace the ones before, in the thread\'s order (10 after 9)', () => {
  const t = (n, at, files = []) => ({ turn: `t-1:${n}`, folder: '/w', at, note: null, files });
  const have = [t(9, 90), t(2, 20)];
  const got = mergeTurns(have, [t(10, 100), t(2, 21, [{ path: 'x' }])]);
  assert.deepEqual(
    got.map((x) => [x.turn, x.at]),
    [
      ['t-1:2', 21],
      ['t-1:9', 90],
      ['t-1:10', 100],
    ],
  );
});

test('a turn\'s row goes after its turn: before the first item later than it, else at the end', () => {
  const log = foldChange(foldChange(emptyLog(), changed(1, 1, 150, SED)), changed(2, 2, 400, SED));
  const items = [
    { key: 'u1', at: 100 },
    { key: 'a1', at: 140 },
    { key: 'u2', at: 200 },
    { key: 'sending' },
  ];
  const placed = placeMarks(items, log.turns);
  assert.deepEqual([...placed.before.keys()], ['u2', 'sending']);
  assert.equal(placed.before.get('u2')[0].turn, 't-1:1');
  assert.equal(placed.end.length, 0);
  const done = placeMarks(items.slice(0, 3), log.turns);
  assert.deepEqual(
    done.end.map((m) => m.turn),
    ['t-1:2'],
  );
  // With older pages not loaded, a mark from before what is shown is not put at its top.
  const early = foldChange(emptyLog(), changed(1, 1, 50, SED));
  assert.deepEqual(placeMarks(items, early.turns, true), { before: new Map(), end: [] });
  assert.equal(placeMarks(items, early.turns, false).before.get('u1').length, 1);
});

test('a comment names the new file\'s line, or the removed line by its old number', () => {
  assert.deepEqual(sideOf({ kind: 'ins', oldNo: null, newNo: 1 }), { side: 'new', line: 1 });
  assert.deepEqual(sideOf({ kind: 'eq', oldNo: 7, newNo: 9 }), { side: 'new', line: 9 });
  assert.deepEqual(sideOf({ kind: 'del', oldNo: 3, newNo: null }), { side: 'old', line: 3 });
  assert.equal(sideOf({ kind: 'del', oldNo: null, newNo: null }), null);
  assert.equal(commentWhere({ path: 'notes.txt', side: 'new', line: 1 }), 'On `notes.txt:1`');
  assert.equal(commentWhere({ path: 'notes.txt', side: 'old', line: 2 }), 'On `notes.txt`, the removed line 2');
  assert.equal(commentLine({ path: 'src/a.js', side: 'new', line: 12, text: '  use a const here \n' }), 'On `src/a.js:12`: use a const here');
  // A backtick in a path does not end the code early.
  assert.equal(commentWhere({ path: 'odd`name', side: 'new', line: 1 }), 'On ``odd`name:1``');
});

test('comments gathered make one message, a blank line between two, in the order written', () => {
  let list = [];
  const c = (turn, path, side, line, text) => ({ key: commentKey(turn, path, { side, line }), turn, path, side, line, text });
  list = putComment(list, c('t:1', 'notes.txt', 'new', 1, 'say "newer" here'));
  list = putComment(list, c('t:1', 'notes.txt', 'old', 1, 'why was this dropped?'));
  list = putComment(list, c('t:1', 'notes.txt', 'new', 1, 'say "newest" here'));
  assert.equal(list.length, 2, 'the same line again replaces its comment');
  assert.equal(commentsMessage(list), 'On `notes.txt:1`: say "newest" here\n\nOn `notes.txt`, the removed line 1: why was this dropped?');
  assert.equal(commentsMessage([c('t:1', 'a', 'new', 1, '   ')]), '', 'an empty comment says nothing');
  assert.notEqual(commentKey('t:1', 'a', { side: 'new', line: 1 }), commentKey('t:1', 'a', { side: 'old', line: 1 }));
  assert.notEqual(commentKey('t:1', 'a', { side: 'new', line: 1 }), commentKey('t:2', 'a', { side: 'new', line: 1 }));
});

test('the revert question says what happens to the file, or to the turn\'s files', () => {
  const added = revertQuestion('t-1:2', [{ path: 'made.txt', status: 'added' }], true);
  assert.equal(added.title, 'Put back made.txt?');
  assert.match(added.body, /made in turn 2: putting it back removes it/);
  assert.match(added.body, /Nothing is written if the file changed again since/);
  assert.match(revertQuestion('t-1:2', [{ path: 'n', status: 'modified' }], true).body, /goes back to how it was before turn 2/);
  assert.match(revertQuestion('t-1:2', [{ path: 'n', status: 'deleted' }], true).body, /writes it again/);
  const all = revertQuestion('t-1:2', [{ path: 'made.txt', status: 'added' }, { path: 'notes.txt', status: 'modified' }], false);
  assert.equal(all.title, 'Put back what turn 2 changed?');
  assert.equal(all.ok, 'Put back all');
  assert.match(all.body, /^Its 2 files go back to how they were before turn 2 \(the file it made is removed\)\./);
});

test('a status in a word', () => {
  assert.deepEqual(['added', 'modified', 'deleted', 'type', 'other'].map(statusWord), ['added', 'modified', 'deleted', 'type changed', 'modified']);
});

// ---- As drawn (svelte/server, the SSR build of test/render/entry.ts) ----

import { changeRow, diff } from '../.test-build/ssr/entry.js';
import { parseUnified } from '../.test-build/hunks.js';

const html = (s) => s.replace(/<!--[\s\S]*?-->/g, '');
/** The rows of a drawn unified diff: [kind, old number, new number, text]. */
function rows(h) {
  const out = [];
  const re = /<tr class="(eq|del|ins)[^"]*" data-kind="\w+"[^>]*>([\s\S]*?)<\/tr>/g;
  let m;
  while ((m = re.exec(h))) {
    const cells = [...m[2].matchAll(/<td class="(no|s|c)[^"]*">([\s\S]*?)<\/td>/g)].map((c) => c[2].replace(/<[^>]+>/g, ''));
    out.push([m[1], ...cells.filter((_, i) => i !== cells.length - 2)]);
  }
  return out;
}

test('a unified diff is drawn hunk by hunk, each numbered where it is in its file', () => {
  const parsed = parseUnified('@@ -3,2 +3,2 @@ f\n a\n-b\n+B\n@@ -40,2 +40,1 @@\n c\n-d\n');
  const h = html(diff({ path: 'x.txt', hunks: parsed.hunks, named: false }));
  assert.deepEqual(rows(h), [
    ['eq', '3', '3', 'a'],
    ['del', '4', '', 'b'],
    ['ins', '', '4', 'B'],
    ['eq', '40', '40', 'c'],
    ['del', '41', '', 'd'],
  ]);
  assert.match(h, /class="sep\b/, 'a mark between two hunks');
  assert.doesNotMatch(h, /new file/, 'a hunk that adds lines is not a new file');
  assert.doesNotMatch(h, /class="path/, 'the path is said by what holds it');
  assert.doesNotMatch(h, /tabindex|pickable|data-old/, 'no lines to pick without onpick');
});

test('a new file is numbered from 1 and says so; pickable lines carry their numbers', () => {
  const parsed = parseUnified('@@ -0,0 +1,2 @@\n+one\n+two\n');
  const h = html(diff({ path: 'made.txt', hunks: parsed.hunks, created: true, onpick: () => {}, picked: (l) => l.newNo === 2 }));
  assert.match(h, /new file/);
  assert.match(h, /class="path[^"]*"[^>]*>made\.txt</);
  const trs = [...h.matchAll(/<tr [^>]*>/g)].map((m) => m[0]);
  assert.equal(trs.length, 2);
  assert.match(trs[0], /tabindex="0"/);
  assert.match(trs[0], /data-new="1"/);
  assert.match(trs[0], /\bpickable\b/);
  assert.doesNotMatch(trs[0], /\bpicked\b/);
  assert.match(trs[1], /\bpicked\b/, 'the line with a comment is marked');
});

test('the chat row: its words, its paths with the unannounced ones marked, and Review when it opens', () => {
  const log = foldChange(emptyLog(), changed(1, 1, 1, [...SED, { path: 'w.txt', status: 'added', announced: true }]));
  const h = html(changeRow({ mark: log.turns[0], onopen: () => {} }));
  assert.match(h, /data-testid="change-row"/);
  assert.match(h, /data-files="3"/);
  assert.match(h, /data-unannounced="2"/);
  assert.match(h, /class="change-row[^"]*\bloud\b/);
  assert.match(h, /data-testid="change-row-text">Changed 3 files · 2 without a tool saying so</);
  const paths = [...h.matchAll(/data-testid="change-row-path" data-announced="(yes|no)"[^>]*>([\s\S]*?)<\/span>(?=<span class="faint"|<\/span>|<span class="path)/g)].map((m) => m[1]);
  assert.deepEqual(paths, ['no', 'no', 'yes']);
  assert.match(h, /<button[^>]*data-testid="change-row-open"/);
  assert.match(h, />Review</);
  // A box's thread (no onopen): the row says, and is no button.
  const quiet = html(changeRow({ mark: log.turns[0], reverted: 1 }));
  assert.doesNotMatch(quiet, /<button|Review/);
  assert.match(quiet, /data-testid="change-row-reverted">1 put back</);
  // A path is text, never markup.
  const odd = foldChange(emptyLog(), changed(1, 1, 1, [{ path: '<img src=x>.txt', status: 'added', announced: false }])).turns[0];
  assert.doesNotMatch(html(changeRow({ mark: odd })), /<img/);
});

test('the chat shows every turn that changed files, and a turn not followed only once, the newest', async () => {
  const { chatMarks } = await import('../.test-build/changes.js');
  let log = emptyLog();
  log = foldChange(log, changed(1, 1, 10, [], { note: 'the home folder is not followed whole' }));
  log = foldChange(log, changed(2, 2, 20, SED));
  log = foldChange(log, changed(3, 3, 30, [], { note: 'the home folder is not followed whole' }));
  assert.deepEqual(
    chatMarks(log.turns).map((t) => t.turn),
    ['t-1:2', 't-1:3'],
  );
  assert.deepEqual(chatMarks([]), []);
});

test('the Changes view\'s address names a turn by its number, and finds it again', () => {
  assert.equal(changesFor(null), 'all');
  assert.equal(changesFor(`${T}:12`), '12');
  assert.equal(changesFor('odd-turn'), 'odd-turn', 'no number: the id as it is');
  const turns = [{ turn: `${T}:1` }, { turn: `${T}:2` }, { turn: 'odd-turn' }];
  assert.equal(turnAt(turns, '2'), `${T}:2`);
  assert.equal(turnAt(turns, `${T}:1`), `${T}:1`, 'the whole id too');
  assert.equal(turnAt(turns, 'odd-turn'), 'odd-turn');
  assert.equal(turnAt(turns, 'all'), null, 'all: the newest, as the view picks it');
  assert.equal(turnAt(turns, null), null);
  assert.equal(turnAt(turns, '9'), null, 'a turn not (or no longer) there: the newest');
  assert.equal(turnAt([], '1'), null);
});

/** A Storage of its own, in memory. */
function memoryStore() {
  const m = new Map();
  return {
    m,
    getItem: (k) => (m.has(k) ? m.get(k) : null),
    setItem: (k, v) => m.set(k, String(v)),
    removeItem: (k) => m.delete(k),
  };
}

test('unsent comments are kept per thread across a reload, and their item goes once none is left', () => {
  const store = memoryStore();
  const a = { key: commentKey(`${T}:1`, 'notes.txt', { side: 'new', line: 1 }), turn: `${T}:1`, path: 'notes.txt', side: 'new', line: 1, text: 'keep it' };
  const b = { key: commentKey(`${T}:1`, 'notes.txt', { side: 'old', line: 2 }), turn: `${T}:1`, path: 'notes.txt', side: 'old', line: 2, text: 'why?' };
  assert.deepEqual(readComments(T, store), [], 'nothing kept: none');
  keepComments(T, [a, b], store);
  assert.deepEqual(readComments(T, store), [a, b], 'in the order written');
  assert.deepEqual(readComments('t-2', store), [], 'another thread has its own');
  assert.ok(store.m.has(commentsItem(T)));
  assert.equal(commentsItem(T), 'vyre_comments:t-1');
  // Sent (or thrown away): no item left behind.
  keepComments(T, [], store);
  assert.equal(store.m.has(commentsItem(T)), false);
  assert.deepEqual(readComments(T, store), []);
  // What is not a comment any more (written by hand, or spoiled) is left out, not an error.
  store.setItem(commentsItem(T), 'not json');
  assert.deepEqual(readComments(T, store), []);
  store.setItem(commentsItem(T), JSON.stringify({ a: 1 }));
  assert.deepEqual(readComments(T, store), []);
  store.setItem(commentsItem(T), JSON.stringify([a, { ...b, side: 'left' }, { ...b, line: 0 }, { ...b, text: 3 }, null, { ...b, extra: 'x' }]));
  assert.deepEqual(readComments(T, store), [a, b], 'the good ones, with only their fields');
  // No storage (disabled), or one that refuses: nothing kept, nothing thrown.
  assert.deepEqual(readComments(T, null), []);
  keepComments(T, [a], null);
  const full = { getItem: () => { throw new Error('denied'); }, setItem: () => { throw new Error('full'); }, removeItem: () => {} };
  assert.doesNotThrow(() => keepComments(T, [a], full));
  assert.deepEqual(readComments(T, full), []);
});

test('while a turn runs, words join it or wait for its end, said as the composer says it', () => {
  assert.equal(queues(false, true), false, 'no turn running: a new turn, whatever was ticked');
  assert.equal(queues(true, false), false);
  assert.equal(queues(true, true), true);
  assert.equal(sendWord(false, true), 'Send');
  assert.equal(sendWord(true, false), 'Steer');
  assert.equal(sendWord(true, true), 'Queue');
  assert.equal(afterHint(true), '— waits for the turn to end');
  assert.equal(afterHint(false), '— joins the running turn');
});
