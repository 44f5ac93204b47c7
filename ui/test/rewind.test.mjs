import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FILES_REFUSED, filesRefused, filesSince, rewindQuestion } from '../.test-build/rewind.js';

const turn = (n, at, paths, files = paths.length) => ({
  turn: `t:${n}`,
  at,
  files,
  added: 0,
  modified: files,
  deleted: 0,
  unannounced: 0,
  paths: paths.map((path) => ({ path, status: 'modified', announced: true })),
  note: null,
});

test('the files changed from a message on: its turn and those after, each file once', () => {
  const log = { turns: [turn(1, 100, ['a.txt']), turn(2, 200, ['b.txt', 'a.txt']), turn(3, 300, ['c.txt', 'b.txt']), turn(4, 400, [], 0)], reverted: {} };
  assert.equal(filesSince(log, 50), 3);
  assert.equal(filesSince(log, 150), 3, 'a.txt, b.txt, c.txt from turn 2 on');
  assert.equal(filesSince(log, 250), 2);
  assert.equal(filesSince(log, 350), 0, 'a turn that changed nothing offers nothing');
  assert.equal(filesSince(log, undefined), 0, 'a message not confirmed yet has no time');
  // More files than the event named (it names the first 100): counted all the same.
  assert.equal(filesSince({ turns: [turn(1, 100, ['a'], 130)], reverted: {} }, 10), 130);
});

test('the question offers the files only when some changed since', () => {
  const plain = rewindQuestion(0);
  assert.equal(plain.title, 'Rewind to this message?');
  assert.equal(plain.ok, 'Rewind');
  assert.equal(plain.danger, true);
  assert.equal(plain.check, undefined);
  const files = rewindQuestion(1);
  assert.equal(files.check, 'Also put back the files changed since (1 file)');
  assert.match(files.checkNote, /nothing is done/);
  assert.equal(rewindQuestion(3).check, 'Also put back the files changed since (3 files)');
});

test('a refusal says vyred\'s words, which name the files, and offers the rewind alone', () => {
  assert.ok(FILES_REFUSED.includes('changed_since'));
  const q = filesRefused("nothing was rewound: a.txt changed again after the session's last change to it, and putting it back would lose that");
  assert.equal(q.title, 'The files were not put back');
  assert.equal(q.warning, "Nothing was rewound: a.txt changed again after the session's last change to it, and putting it back would lose that.");
  assert.equal(q.ok, 'Rewind the conversation');
  assert.equal(filesRefused('done.').warning, 'Done.');
  assert.equal(filesRefused('').warning, undefined);
});
