// What the watchers filed, found by its words (recall.filed, issue 23): which words are asked for,
// each item once, a title that matched shown once with its words marked, and the real FiledHits
// component (SSR build of test/render/entry.ts): links only to http(s), the matched words marked,
// a script's markup kept as text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DECK_FILED, filedQuery, snippetIsTitle, uniqueFiled } from '../.test-build/filed.js';
import { whenWords } from '../.test-build/planner.js';
import { filedHits } from '../.test-build/ssr/entry.js';

const html = (s) => s.replace(/<!--[\s\S]*?-->/g, '');
/** Thursday 24 December 2026, 10:00 UTC. */
const NOW = Date.parse('2026-12-24T10:00:00Z');

/** A hit as recall.filed gives one, unless `fields` say. */
const hit = (item, fields = {}) => ({
  watcher: 'hello-news',
  item,
  project: 'news',
  title: 'hello',
  snippet: '[hello]',
  url: null,
  at: NOW - 60_000,
  ...fields,
});

test('the words asked for: trimmed, and none without a letter or a digit', () => {
  assert.equal(filedQuery('  walrus harbour '), 'walrus harbour');
  assert.equal(filedQuery('Zürich'), 'Zürich');
  assert.equal(filedQuery('東京'), '東京', 'a letter of any script');
  assert.equal(filedQuery('4.2'), '4.2');
  assert.equal(filedQuery(''), null);
  assert.equal(filedQuery('   '), null);
  assert.equal(filedQuery('!? -- …'), null, 'vyred refuses a query with no word in it');
  assert.ok(DECK_FILED >= 1 && DECK_FILED <= 5, 'the Deck shows a few');
});

test('each item once, the first (best) kept, in the order found', () => {
  const a = hit(1, { snippet: 'a' });
  const b = hit(2);
  const again = hit(1, { snippet: 'again' });
  const other = hit(1, { watcher: 'other' });
  assert.deepEqual(uniqueFiled([a, b, again, other]), [a, b, other]);
  assert.deepEqual(uniqueFiled([]), []);
});

test('a snippet that is only the title again, marked, stands for the title', () => {
  assert.equal(snippetIsTitle({ title: 'Release 4.2 is out', snippet: 'Release [4].[2] is out' }), true);
  assert.equal(snippetIsTitle({ title: 'hello', snippet: '[hello]' }), true);
  assert.equal(snippetIsTitle({ title: 'hello', snippet: 'first [line]' }), false, 'words of its body');
  assert.equal(snippetIsTitle({ title: 'a very long title that goes on', snippet: '…[long] title that…' }), false, 'a part of a long title');
  assert.equal(snippetIsTitle({ title: '', snippet: '' }), false);
});

test('a hit: its title a link in a new tab, its matched words marked, its watcher, its project a link to its page', () => {
  const out = html(
    filedHits({
      now: NOW,
      onproject: () => {},
      hits: [hit(7, { title: 'Walrus seen', snippet: 'a [walrus] in the harbour', url: 'https://example.com/w' })],
    }),
  );
  assert.match(out, /<a class="list-title title[^"]*" href="https:\/\/example\.com\/w" target="_blank" rel="noopener noreferrer" data-testid="filed-hit-title">Walrus seen<\/a>/);
  assert.match(out, /data-testid="filed-hit-snippet">a <mark[^>]*>walrus<\/mark> in the harbour<\/span>/);
  assert.match(out, /data-testid="filed-hit-watcher">hello-news<\/span>/);
  assert.match(out, /<a class="badge accent project[^"]*" href="\/app\/p\/news"[^>]*data-testid="project-link"[^>]*>news<\/a>/);
  assert.ok(out.includes(`>${whenWords(NOW - 60_000, NOW)}</span>`), 'when, in the machine\'s time zone');
  assert.match(out, /data-item="7"/);
});

test('a title that matched is shown once, marked; with no project on its own page', () => {
  const out = html(filedHits({ now: NOW, showProject: false, hits: [hit(1, { title: 'hello world', snippet: '[hello] world' })] }));
  assert.match(out, /data-testid="filed-hit-title"><mark[^>]*>hello<\/mark> world<\/span>/, 'no address: the title is text');
  assert.doesNotMatch(out, /filed-hit-snippet/, 'not said twice');
  assert.doesNotMatch(out, /project-link|>news</);
});

test('a script\'s markup is text, and only an http(s) address is a link', () => {
  const out = html(
    filedHits({
      now: NOW,
      hits: [
        hit(1, { title: '<img src=x onerror=alert(1)>', snippet: '<img src=x onerror=alert(1)> [news]', url: 'javascript:alert(3)' }),
        hit(2, { title: '<b>bold</b>', snippet: '<script>alert(2)</script> [<b>news</b>]', url: 'data:text/html,<script>alert(4)</script>' }),
        hit(3, { title: '<img src=y onerror=alert(5)>', snippet: '[<img src=y onerror=alert(5)>]', url: 'https://example.com/ok' }),
      ],
    }),
  );
  assert.equal((out.match(/<a /g) ?? []).length, 1, 'only the https address is a link');
  assert.doesNotMatch(out, /javascript:|data:text/);
  assert.doesNotMatch(out, /<img|<script|<b>/, 'no tag from a script reaches the page');
  assert.match(out, /&lt;img src=x onerror=alert\(1\)>/);
  assert.match(out, /<mark[^>]*>&lt;b>news&lt;\/b><\/mark>/);
  assert.match(out, /<mark[^>]*>&lt;img src=y onerror=alert\(5\)><\/mark>/, 'a marked title is text too');
});
