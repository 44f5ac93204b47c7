import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tree, lines, render, MAX_HIGHLIGHT } from '../.test-build/highlighter.js';
import { LANGUAGES } from '../.test-build/languages.js';

/** Just enough of a DOM document to see what render() makes. */
function fakeDocument() {
  const made = [];
  const node = (kind, props) => ({ kind, ...props, children: [], appendChild(c) { this.children.push(c); return c; } });
  return {
    made,
    createDocumentFragment: () => node('fragment'),
    createTextNode: (data) => node('text', { data }),
    createElement: (name) => {
      made.push(name);
      return node('element', { name, className: '' });
    },
  };
}
const textOf = (n) => (n.kind === 'text' ? n.data : n.children.map(textOf).join(''));

test('every language the app names is registered and highlights', () => {
  const samples = {
    bash: 'echo "$HOME" | grep -v x', console: '$ ls -la\ntotal 0', javascript: 'const a = 1;', typescript: 'let a: number = 1;',
    rust: 'fn main() { let x = 1; }', python: 'def f(x):\n    return x', json: '{"a": 1}', diff: '-a\n+b', xml: '<p class="x">hi</p>',
    css: 'a { color: red; }', go: 'func main() {}', sql: 'SELECT * FROM t WHERE id = 1', yaml: 'a: 1\nb: [x]', ini: '[package]\nname = "x"',
  };
  for (const id of Object.keys(LANGUAGES)) {
    const t = tree(samples[id], id);
    assert.ok(t, id);
    const classes = JSON.stringify(t).match(/hljs-[\w-]+/g) ?? [];
    assert.ok(classes.length > 0, `${id} has highlight classes`);
  }
  assert.equal(tree('x', null), null);
  assert.equal(tree('x', 'cobol'), null);
  assert.equal(tree('x'.repeat(MAX_HIGHLIGHT + 1), 'rust'), null);
});

test('render makes only classed spans and text nodes, and keeps the code exactly', () => {
  const code = 'fn main() {\n    println!("<script>alert(1)</script>");\n}\n';
  const doc = fakeDocument();
  const frag = render(tree(code, 'rust'), doc);
  assert.equal(textOf(frag), code);
  assert.ok(doc.made.length > 0);
  assert.ok(doc.made.every((n) => n === 'span'));
});

test('a tree that carried anything but hljs classes would lose it', () => {
  const hostile = {
    type: 'root',
    children: [
      { type: 'element', tagName: 'img', properties: { className: ['hljs-keyword', 'x" onerror="alert(1)'], src: 'x', onerror: 'alert(1)' }, children: [{ type: 'text', value: 'a' }] },
      { type: 'comment', value: 'ignored' },
    ],
  };
  const doc = fakeDocument();
  const frag = render(hostile, doc);
  assert.deepEqual(doc.made, ['span']);
  assert.equal(frag.children[0].className, 'hljs-keyword');
  assert.deepEqual(Object.keys(frag.children[0]).filter((k) => k === 'src' || k === 'onerror'), []);
});

test('lines: the highlighted tree split at newlines, classes carried across (a multi-line comment)', () => {
  const code = 'let a = 1; /* one\ntwo */ let b = "x";';
  const ls = lines(tree(code, 'javascript'), code);
  assert.equal(ls.length, 2);
  assert.deepEqual(ls.map((l) => l.map((s) => s.text).join('')), code.split('\n'));
  const second = ls[1];
  assert.ok(second[0].classes.includes('hljs-comment'), JSON.stringify(second));
  assert.ok(second.some((s) => s.classes.includes('hljs-string')));
  // Without a tree: plain lines.
  assert.deepEqual(lines(null, 'a\n\nb'), [[{ text: 'a', classes: [] }], [], [{ text: 'b', classes: [] }]]);
});
