import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diff, lineDiff, fold, sideBySide, stats, words, paint, splitLines } from '../.test-build/diff.js';

/** Apply an edit script to `a`: it must give `b`. */
function apply(a, b, ops) {
  const out = [];
  for (const op of ops) {
    if (op.kind === 'eq') {
      assert.equal(a[op.a], b[op.b]);
      out.push(a[op.a]);
    } else if (op.kind === 'ins') out.push(b[op.b]);
  }
  return out;
}
const cost = (ops) => ops.filter((o) => o.kind !== 'eq').length;

// A small seeded generator, so a failure can be replayed.
function rng(seed) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

/** The edit distance (insertions and deletions only), by dynamic programming: the reference. */
function lcsCost(a, b) {
  const dp = Array.from({ length: a.length + 1 }, () => new Array(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--) dp[i][j] = a[i] === b[j] ? dp[i + 1][j + 1] + 1 : Math.max(dp[i + 1][j], dp[i][j + 1]);
  return a.length + b.length - 2 * dp[0][0];
}

test('the edit script turns old into new, and is the shortest (against a brute-force reference)', () => {
  const r = rng(7);
  for (let round = 0; round < 400; round++) {
    const a = Array.from({ length: Math.floor(r() * 14) }, () => 'abcd'[Math.floor(r() * 4)]);
    const b = Array.from({ length: Math.floor(r() * 14) }, () => 'abcd'[Math.floor(r() * 4)]);
    const ops = diff(a, b);
    assert.deepEqual(apply(a, b, ops), b, `${a.join('')} → ${b.join('')}`);
    assert.deepEqual(ops.filter((o) => o.kind !== 'ins').map((o) => a[o.a]), a);
    assert.equal(cost(ops), lcsCost(a, b), `${a.join('')} → ${b.join('')}`);
  }
});

test('edge cases: empty sides, equal sides, all different', () => {
  assert.deepEqual(diff([], []), []);
  assert.deepEqual(diff([], ['x']).map((o) => o.kind), ['ins']);
  assert.deepEqual(diff(['x'], []).map((o) => o.kind), ['del']);
  assert.deepEqual(diff(['a', 'b'], ['a', 'b']).map((o) => o.kind), ['eq', 'eq']);
  assert.deepEqual(diff(['a'], ['b']).map((o) => o.kind).sort(), ['del', 'ins']);
});

test('past the edit budget the diff is still correct (all deleted, all inserted) and fast', () => {
  const a = Array.from({ length: 20000 }, (_, i) => `old ${i}`);
  const b = Array.from({ length: 20000 }, (_, i) => `new ${i}`);
  const t0 = Date.now();
  const ops = diff(['same', ...a, 'end'], ['same', ...b, 'end'], 100);
  assert.ok(Date.now() - t0 < 2000);
  assert.deepEqual(apply(['same', ...a, 'end'], ['same', ...b, 'end'], ops), ['same', ...b, 'end']);
  assert.equal(ops[0].kind, 'eq');
  assert.equal(ops[ops.length - 1].kind, 'eq');
  assert.equal(cost(ops), 40000);
});

test('lines: numbered from where the snippet starts, a final newline is not an extra line', () => {
  assert.deepEqual(splitLines('a\nb\n'), ['a', 'b']);
  assert.deepEqual(splitLines('a\r\nb'), ['a', 'b']);
  assert.deepEqual(splitLines(''), []);
  const lines = lineDiff('one\ntwo\nthree\n', 'one\n2\nthree\nfour\n', 10, 10);
  assert.deepEqual(lines.map((l) => [l.kind, l.text, l.oldNo, l.newNo]), [
    ['eq', 'one', 10, 10],
    ['del', 'two', 11, null],
    ['ins', '2', null, 11],
    ['eq', 'three', 12, 12],
    ['ins', 'four', null, 13],
  ]);
  assert.deepEqual(stats(lines), { added: 2, removed: 1 });
});

test('a Write (nothing before) is all new lines', () => {
  const lines = lineDiff('', 'fn main() {}\n// done\n');
  assert.deepEqual(lines.map((l) => [l.kind, l.newNo, l.oldNo]), [['ins', 1, null], ['ins', 2, null]]);
});

test('changed words inside a changed line are marked, in both the old and the new line', () => {
  const [del, ins] = lineDiff('let total = price * count;', 'let total = price * quantity;');
  assert.equal(del.kind, 'del');
  assert.deepEqual(del.emph.map(([f, t]) => del.text.slice(f, t)), ['count']);
  assert.deepEqual(ins.emph.map(([f, t]) => ins.text.slice(f, t)), ['quantity']);
  assert.deepEqual(words('a  b_c, d'), ['a', '  ', 'b_c', ',', ' ', 'd']);
});

test('lines that share too little are not marked word by word', () => {
  const lines = lineDiff('import x from "y";', 'console.log(42)');
  assert.ok(lines.every((l) => l.emph.length === 0));
});

test('unchanged runs fold to three lines of context; a fold of one line shows the line', () => {
  const old = Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n');
  const next = old.replace('line 15', 'line fifteen');
  const rows = fold(lineDiff(old, next));
  const shape = rows.map((r) => (r.type === 'gap' ? `gap ${r.lines.length}` : `${r.line.kind} ${r.line.text}`));
  assert.deepEqual(shape, [
    'gap 12', 'eq line 12', 'eq line 13', 'eq line 14', 'del line 15', 'ins line fifteen', 'eq line 16', 'eq line 17', 'eq line 18', 'gap 11',
  ]);
  const small = fold(lineDiff('a\nb\nc\nd\ne\nf\ng\nh\ni', 'a\nb\nc\nd\nE\nf\ng\nh\ni'), 3);
  assert.ok(small.every((r) => r.type === 'line'), 'a one-line fold shows the line');
});

test('side by side pairs a change\'s deletions with its insertions', () => {
  const pairs = sideBySide(fold(lineDiff('a\nb\nc\nz', 'a\nB\nC\nD\nz')));
  assert.deepEqual(pairs.map((p) => [p.left?.text ?? null, p.right?.text ?? null]), [
    ['a', 'a'], ['b', 'B'], ['c', 'C'], [null, 'D'], ['z', 'z'],
  ]);
});

test('paint cuts highlight segments at the changed words', () => {
  const pieces = paint('let x = 1;', [
    { text: 'let', classes: ['hljs-keyword'] },
    { text: ' x = ', classes: [] },
    { text: '1', classes: ['hljs-number'] },
    { text: ';', classes: [] },
  ], [[4, 5], [8, 9]]);
  assert.deepEqual(pieces.map((p) => [p.text, p.cls, p.em]), [
    ['let', 'hljs-keyword', false], [' ', '', false], ['x', '', true], [' = ', '', false], ['1', 'hljs-number', true], [';', '', false],
  ]);
  assert.deepEqual(paint('abc', null, []), [{ text: 'abc', cls: '', em: false }]);
  // Segments that do not cover the text are ignored rather than trusted.
  assert.deepEqual(paint('abc', [{ text: 'xyz', classes: ['hljs-string'] }], []), [{ text: 'abc', cls: '', em: false }]);
});
