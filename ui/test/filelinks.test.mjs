// File paths in an answer's inline code, through the real Markdown component (rendered by
// svelte/server from the SSR build of test/render/entry.ts): buttons that open the file when the
// chat gives a way to, and plain code everywhere else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { markdown as render } from '../.test-build/ssr/entry.js';

const open = () => {};
const markdown = (source, onfile = open) => render(source, false, onfile).replace(/<!--[\s\S]*?-->/g, '');
const links = (html) => [...html.matchAll(/<button class="file[^"]*"[^>]*><code[^>]*>([^<]*)<\/code><\/button>/g)].map((m) => m[1]);

test('inline code naming a file is a button that says what it opens', () => {
  const html = markdown('See `src/main.rs:42`, `./README.md` and `~/work/b.png`.');
  assert.deepEqual(links(html), ['src/main.rs:42', './README.md', '~/work/b.png']);
  assert.match(html, /<button class="file[^"]*" aria-label="Preview src\/main.rs:42" title="Preview the file" data-testid="file-link" data-path="src\/main.rs">/);
});

test('other code stays code: commands, addresses, code blocks, code inside a link', () => {
  const html = markdown(
    'Run `cargo build --release`, read `https://example.com/a.txt` and [`docs/a.md`](https://example.com/docs), call `console.log`.\n\n```\nsrc/main.rs\n```\n\n| file |\n|---|\n| `lib/x.ts` |\n',
  );
  assert.deepEqual(links(html), ['lib/x.ts']);
  assert.match(html, /<a href="https:\/\/example.com\/docs"[^>]*><code[^>]*>docs\/a.md<\/code><\/a>/);
  assert.match(html, /<code[^>]*>cargo build --release<\/code>/);
  assert.match(html, /<pre[^>]*><code[^>]*>src\/main.rs<\/code>/, 'a code block is not linked');
});

test('without a way to open files (the default), no code is a button', () => {
  assert.deepEqual(links(markdown('See `src/main.rs`.', null)), []);
  assert.match(markdown('See `src/main.rs`.', null), /<code[^>]*>src\/main.rs<\/code>/);
});
