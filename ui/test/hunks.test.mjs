import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseUnified } from '../.test-build/hunks.js';
import { lineDiff } from '../.test-build/diff.js';

// What git writes for `sed -i s/old/new/ notes.txt` on "the old plan\nline two\n".
const SED = `diff --git a/notes.txt b/notes.txt
index 3b18e51..4f2c2d0 100644
--- a/notes.txt
+++ b/notes.txt
@@ -1,2 +1,2 @@
-the old plan
+the new plan
 line two
`;

test('a one-hunk diff gives its old and new text and where each starts', () => {
  const { hunks, binary } = parseUnified(SED);
  assert.equal(binary, false);
  assert.deepEqual(hunks, [{ oldStart: 1, newStart: 1, old: 'the old plan\nline two\n', new: 'the new plan\nline two\n', section: '' }]);
  // Drawn, the removed line is the old file's line 1 and the added one the new file's line 1.
  const lines = lineDiff(hunks[0].old, hunks[0].new, hunks[0].oldStart, hunks[0].newStart);
  assert.deepEqual(
    lines.map((l) => [l.kind, l.oldNo, l.newNo, l.text]),
    [
      ['del', 1, null, 'the old plan'],
      ['ins', null, 1, 'the new plan'],
      ['eq', 2, 2, 'line two'],
    ],
  );
});

test('several hunks keep their own starts and the function git names', () => {
  const text = [
    'diff --git a/src/app.js b/src/app.js',
    'index 1111111..2222222 100644',
    '--- a/src/app.js',
    '+++ b/src/app.js',
    '@@ -3,4 +3,5 @@ function start() {',
    '   const a = 1;',
    '-  const b = 2;',
    '+  const b = 3;',
    '+  const c = 4;',
    '   return a + b;',
    ' }',
    '@@ -40,3 +41,2 @@ function end() {',
    '   one();',
    '-  two();',
    '   three();',
    '',
  ].join('\n');
  const { hunks } = parseUnified(text);
  assert.equal(hunks.length, 2);
  assert.deepEqual(
    hunks.map((h) => [h.oldStart, h.newStart, h.section]),
    [
      [3, 3, 'function start() {'],
      [40, 41, 'function end() {'],
    ],
  );
  assert.equal(hunks[0].old, '  const a = 1;\n  const b = 2;\n  return a + b;\n}\n');
  assert.equal(hunks[0].new, '  const a = 1;\n  const b = 3;\n  const c = 4;\n  return a + b;\n}\n');
  assert.equal(hunks[1].old, '  one();\n  two();\n  three();\n');
  assert.equal(hunks[1].new, '  one();\n  three();\n');
  const second = lineDiff(hunks[1].old, hunks[1].new, hunks[1].oldStart, hunks[1].newStart);
  assert.deepEqual(
    second.map((l) => [l.kind, l.oldNo, l.newNo]),
    [
      ['eq', 40, 41],
      ['del', 41, null],
      ['eq', 42, 42],
    ],
  );
});

test('a new file, a deleted file and an empty new file', () => {
  const added = parseUnified('diff --git a/made.txt b/made.txt\nnew file mode 100644\nindex 0000000..ce01362\n--- /dev/null\n+++ b/made.txt\n@@ -0,0 +1,2 @@\n+hello\n+there\n');
  assert.deepEqual(added.hunks, [{ oldStart: 0, newStart: 1, old: '', new: 'hello\nthere\n', section: '' }]);
  const deleted = parseUnified('diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n');
  assert.deepEqual(deleted.hunks, [{ oldStart: 1, newStart: 0, old: 'bye\n', new: '', section: '' }]);
  // `touch made.txt`: git writes the header and no hunk.
  const empty = parseUnified('diff --git a/made.txt b/made.txt\nnew file mode 100644\nindex 0000000..e69de29\n');
  assert.deepEqual(empty, { hunks: [], binary: false });
});

test('counts left out mean one line, and "\\ No newline at end of file" is no line', () => {
  const { hunks } = parseUnified('--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n\\ No newline at end of file\n+new\n\\ No newline at end of file\n');
  assert.deepEqual(hunks, [{ oldStart: 1, newStart: 1, old: 'old\n', new: 'new\n', section: '' }]);
});

test('a line of the file that looks like a header is read by the counts as a line', () => {
  const { hunks } = parseUnified('@@ -1,2 +1,2 @@\n---- a/x\n++++ b/x\n diff --git a/y b/y\n');
  assert.deepEqual(hunks, [{ oldStart: 1, newStart: 1, old: '--- a/x\ndiff --git a/y b/y\n', new: '+++ b/x\ndiff --git a/y b/y\n', section: '' }]);
});

test('a context line whose space was trimmed is still context', () => {
  const { hunks } = parseUnified('@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n');
  assert.deepEqual(hunks, [{ oldStart: 1, newStart: 1, old: 'a\n\nb\n', new: 'a\n\nc\n', section: '' }]);
});

test('a binary file says so and has no hunks', () => {
  assert.deepEqual(parseUnified('diff --git a/logo.png b/logo.png\nindex 1..2 100644\nBinary files a/logo.png and b/logo.png differ\n'), { hunks: [], binary: true });
  assert.equal(parseUnified('diff --git a/x b/x\nGIT binary patch\nliteral 5\n').binary, true);
});

test('a diff cut short gives the lines it has', () => {
  const { hunks } = parseUnified('@@ -1,3 +1,3 @@\n-a\n+b\n c');
  assert.deepEqual(hunks, [{ oldStart: 1, newStart: 1, old: 'a\nc\n', new: 'b\nc\n', section: '' }]);
});

test('nothing, null and CRLF text', () => {
  assert.deepEqual(parseUnified(null), { hunks: [], binary: false });
  assert.deepEqual(parseUnified(''), { hunks: [], binary: false });
  const { hunks } = parseUnified('@@ -1 +1 @@\r\n-a\r\n+b\r\n');
  assert.equal(hunks.length, 1);
  assert.deepEqual(lineDiff(hunks[0].old, hunks[0].new).map((l) => l.text), ['a', 'b']);
});
