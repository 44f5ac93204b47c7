import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blocks, parse, safeHref } from '../.test-build/markdown.js';
import { fenceLanguage, fileLanguage, languageLabel } from '../.test-build/languages.js';

const MESSAGE = `# Plan

Here is what I found in \`src/lib\`:

1. The parser
2. The *renderer*, which is **slow**

   with a second paragraph

- [x] done
- [ ] not yet

Title underlined
----------------

| file | lines |
|:-----|------:|
| a.rs | 10 |
| b.rs | 200 |

\`\`\`rust
fn main() {
    println!("hi");
}
\`\`\`

> A quote
continued lazily

---

Final words with a [link](https://example.com) and ~~old~~ text.
`;

/** Cut a text into `n` deltas of uneven sizes, as a stream would. */
function deltas(text, n) {
  const cuts = new Set([text.length]);
  let seed = 11;
  while (cuts.size < n) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    cuts.add(1 + (seed % (text.length - 1)));
  }
  return [...cuts].sort((a, b) => a - b);
}

const shape = (doc) => doc.blocks.map((b) => `${b.start}-${b.end}:${b.node.type}`);

test('a 200-delta stream re-makes at most the last block: every finished block is the same object', () => {
  let prev = null;
  let remade = 0;
  for (const end of deltas(MESSAGE, 200)) {
    const text = MESSAGE.slice(0, end);
    const doc = blocks(prev, text, true);
    if (prev) {
      // Every block before the previous render's last one comes back as the very same object.
      for (let i = 0; i < prev.blocks.length - 1; i++) assert.equal(doc.blocks[i], prev.blocks[i], `block ${i} at ${end}`);
      const changed = doc.blocks.filter((b, i) => b !== prev.blocks[i]);
      // What changed starts at the previous last block: it, and blocks it split into.
      for (const b of changed) assert.ok(b.start >= prev.blocks[prev.blocks.length - 1].start);
      remade += changed.length;
    }
    // Parsing only the tail gives what parsing everything gives.
    assert.deepEqual(shape(doc), shape(blocks(null, text, true)), `at ${end}: ${JSON.stringify(text.slice(-30))}`);
    assert.equal(doc.blocks.filter((b) => b.open).length, doc.blocks.length ? 1 : 0);
    prev = doc;
  }
  assert.ok(remade < 200 + 20, `${remade} blocks re-made over 200 deltas`);
  // The end of the stream: a full parse, the blocks closed, the finished ones still the same.
  const done = blocks(prev, MESSAGE, false);
  assert.ok(done.blocks.every((b) => !b.open));
  for (let i = 0; i < prev.blocks.length - 1; i++) assert.equal(done.blocks[i], prev.blocks[i]);
  assert.deepEqual(
    done.blocks.map((b) => b.node.type),
    ['heading', 'paragraph', 'list', 'list', 'heading', 'table', 'code', 'blockquote', 'thematicBreak', 'paragraph'],
  );
});

test('a paragraph that becomes a setext heading is re-made; the block before it is not', () => {
  const a = blocks(null, 'intro\n\nTitle\n', true);
  const b = blocks(a, 'intro\n\nTitle\n===', true);
  assert.equal(b.blocks[0], a.blocks[0]);
  assert.equal(a.blocks[1].node.type, 'paragraph');
  assert.equal(b.blocks[1].node.type, 'heading');
});

test('a list that goes on after a blank line stays one list', () => {
  const a = blocks(null, '- one\n\n', true);
  const b = blocks(a, '- one\n\n- two\n', true);
  assert.equal(b.blocks.length, 1);
  assert.equal(b.blocks[0].node.children.length, 2);
  assert.equal(b.blocks[0].node.spread, true);
});

test('an unclosed code fence is one open block until it closes', () => {
  const a = blocks(null, 'text\n\n```js\nlet a = 1;\n', true);
  assert.equal(a.blocks[1].node.type, 'code');
  assert.equal(a.blocks[1].open, true);
  const b = blocks(a, 'text\n\n```js\nlet a = 1;\n```\n\nafter', true);
  assert.equal(b.blocks[0], a.blocks[0]);
  assert.equal(b.blocks[1].node.value, 'let a = 1;');
  assert.equal(b.blocks[1].open, false);
  assert.equal(b.blocks[2].open, true);
});

test('a reference defined late resolves when the message is complete', () => {
  let d = blocks(null, 'see [the docs]\n\n', true);
  d = blocks(d, 'see [the docs]\n\n[the docs]: https://example.com/docs\n', true);
  const done = blocks(d, 'see [the docs]\n\n[the docs]: https://example.com/docs\n', false);
  const para = done.blocks[0].node;
  assert.equal(para.children[1].type, 'linkReference');
  assert.equal(done.blocks[0].refs.links.get('the docs').url, 'https://example.com/docs');
});

test('the same text parsed again hands back the same blocks; a different text does not', () => {
  const a = blocks(null, 'one\n\ntwo', false);
  assert.equal(blocks(a, 'one\n\ntwo', false), a, 'nothing new: the same parse');
  const b = blocks({ ...a, source: 'one\n\ntwo', streaming: true }, 'one\n\ntwo', false);
  assert.equal(b.blocks[0], a.blocks[0]);
  assert.equal(b.blocks[1], a.blocks[1]);
  const c = blocks(b, 'one\n\nthree', false);
  assert.equal(c.blocks[0], a.blocks[0]);
  assert.notEqual(c.blocks[1], a.blocks[1]);
});

test('GFM: tables, ~~strikethrough~~ (not ~single~ tildes), task lists, autolinks; entities decoded', () => {
  const t = parse('| a |\n|---|\n| 1 |\n\n~~gone~~ about ~5 min or ~10\n\n- [x] ok\n\nsee www.example.com &copy; &amp;\n');
  assert.equal(t.children[0].type, 'table');
  const p = t.children[1];
  assert.equal(p.children[0].type, 'delete');
  assert.equal(p.children[1].value, ' about ~5 min or ~10');
  assert.equal(t.children[2].children[0].checked, true);
  const last = t.children[3].children;
  assert.equal(last[1].type, 'link');
  assert.equal(last[1].url, 'http://www.example.com');
  assert.equal(last[2].value, ' © &');
});

test('raw HTML stays raw HTML in the tree (the templates show it as text)', () => {
  const t = parse('<script>alert(1)</script>\n\nx <img src=x onerror=alert(1)> y\n');
  assert.equal(t.children[0].type, 'html');
  assert.equal(t.children[1].children[1].type, 'html');
});

test('links: only http(s) and mailto, read the way the browser reads them', () => {
  for (const ok of ['https://example.com/a?b#c', 'http://127.0.0.1:8080/', 'mailto:someone@example.com', 'HTTPS://EXAMPLE.COM']) {
    assert.ok(safeHref(ok), ok);
  }
  assert.equal(safeHref('https://example.com/a b'), 'https://example.com/a%20b');
  const refused = [
    'javascript:alert(1)', 'JavaScript:alert(1)', ' javascript:alert(1)', 'java\tscript:alert(1)', 'java\nscript:alert(1)',
    'javascript&colon;alert(1)', 'vbscript:msgbox(1)', 'data:text/html,<script>alert(1)</script>',
    'data:image/svg+xml;base64,PHN2Zz4=', 'file:///etc/passwd', 'blob:https://example.com/x', 'about:blank',
    '//evil.example.com/x', '/v1/tools/devices.revoke', '../app', '#frag', 'src/main.rs', '', null, undefined,
    'http:', 'https://', 'ws://example.com', 'ftp://example.com', 'chrome://settings', 'x-vyre:open',
  ];
  for (const bad of refused) assert.equal(safeHref(bad), null, String(bad));
});

test('languages by fence tag and by file name', () => {
  assert.equal(fenceLanguage('ts'), 'typescript');
  assert.equal(fenceLanguage('Rust ignore'), 'rust');
  assert.equal(fenceLanguage('sh'), 'bash');
  assert.equal(fenceLanguage('toml'), 'ini');
  assert.equal(fenceLanguage('brainfuck'), null);
  assert.equal(fenceLanguage(null), null);
  assert.equal(languageLabel('toml'), 'TOML');
  assert.equal(languageLabel('py'), 'Python');
  assert.equal(languageLabel('brainfuck'), 'brainfuck');
  assert.equal(languageLabel(''), 'text');
  assert.equal(fileLanguage('/w/src/main.rs'), 'rust');
  assert.equal(fileLanguage('ui/src/App.svelte'), 'xml');
  assert.equal(fileLanguage('Cargo.toml'), 'ini');
  assert.equal(fileLanguage('Makefile'), null);
});
