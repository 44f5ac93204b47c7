// What came from memory (issue 22): harness.remembered events read into cards, the cards placed
// in the timeline, snippets' matched words, the words of answers that quote memory, and those
// words marked in gold by the real Markdown component (SSR build of test/render/entry.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cardOf, factLine, memoryWords, placeCards, quotedWords, snippetParts } from '../.test-build/memory.js';
import { markdown } from '../.test-build/ssr/entry.js';

const krill = { fact: 2, kind: 'term', subject: 'Krill', relation: 'is', object: 'our inventory robot', pinned: false };
const event = (id, at, payload) => ({ id, at, type: 'harness.remembered', thread: 't', payload });
const card = (id, at, hook, facts = [krill], quotes = []) => ({ id, at, hook, facts, quotes });

test('an event is a card; what is not one, or gave nothing, is none', () => {
  const c = cardOf(event(7, 100, { hook: 'SessionStart', facts: [krill, { fact: 'x' }, null], quotes: [] }));
  assert.deepEqual(c, { id: 7, at: 100, hook: 'SessionStart', facts: [krill], quotes: [] });
  const q = cardOf(event(8, 101, { hook: 'UserPromptSubmit', quotes: [{ thread: 'earlier-1', turn: 'u', role: 'user', title: null, snippet: 'the [zebrafish] budget', at: 5 }] }));
  assert.deepEqual(q.quotes, [{ thread: 'earlier-1', turn: 'u', role: 'user', title: null, snippet: 'the [zebrafish] budget', at: 5 }]);
  assert.equal(cardOf(event(9, 1, { hook: 'Stop', facts: [krill] })), null);
  assert.equal(cardOf(event(9, 1, { hook: 'SessionStart', facts: [], quotes: [] })), null);
  assert.equal(cardOf({ id: 9, at: 1, type: 'thread.item', payload: { hook: 'SessionStart', facts: [krill] } }), null);
  assert.equal(cardOf(event(9, 1, null)), null);
});

test('facts read as sentences', () => {
  assert.equal(factLine(krill), 'Krill is our inventory robot');
  assert.equal(factLine({ kind: 'term', subject: 'LGTM', relation: 'means', object: 'looks good to me' }), 'LGTM means looks good to me');
  assert.equal(factLine({ kind: 'term', subject: 'the box', relation: 'names', object: 'the Hetzner server' }), '"the box" is what you call the Hetzner server');
  assert.equal(factLine({ kind: 'url', subject: 'https://example.com/docs', relation: 'mentioned', object: '' }), 'https://example.com/docs (url)');
});

test('a snippet\'s matched words are marked; a stray bracket stays a bracket', () => {
  assert.deepEqual(snippetParts('Krill is our inventory robot. the [zebrafish] inventory [budget] is 42 crates'), [
    { text: 'Krill is our inventory robot. the ', hit: false },
    { text: 'zebrafish', hit: true },
    { text: ' inventory ', hit: false },
    { text: 'budget', hit: true },
    { text: ' is 42 crates', hit: false },
  ]);
  assert.deepEqual(snippetParts('a [ b ] c ] d [e'), [
    { text: 'a ', hit: false },
    { text: ' b ', hit: true },
    { text: ' c ] d [e', hit: false },
  ]);
  assert.deepEqual(snippetParts('<img src=x onerror=alert(1)>'), [{ text: '<img src=x onerror=alert(1)>', hit: false }]);
  assert.deepEqual(snippetParts(''), []);
});

test('the words memory gave: subjects and objects of three characters or more, once, longest first', () => {
  const words = memoryWords([
    card(1, 1, 'SessionStart', [krill, { fact: 3, kind: 'term', subject: 'QA', relation: 'means', object: 'quality' }]),
    card(2, 2, 'SessionStart', [{ ...krill, fact: 9, subject: 'krill' }]),
  ]);
  assert.deepEqual(words, [
    { word: 'our inventory robot', fact: 2 },
    { word: 'quality', fact: 3 },
    { word: 'Krill', fact: 2 },
  ]);
});

test('an answer quotes memory in whole words, any case; a phrase wins over a word in it', () => {
  const words = memoryWords([card(1, 1, 'SessionStart', [krill, { fact: 4, kind: 'term', subject: 'robot', relation: 'is', object: '' }])]);
  assert.deepEqual(quotedWords('KRILL is our  inventory robot, and Krillian is not krill.', words), [
    { text: 'KRILL', fact: 2 },
    { text: ' is ', fact: null },
    { text: 'our  inventory robot', fact: 2 },
    { text: ', and Krillian is not ', fact: null },
    { text: 'krill', fact: 2 },
    { text: '.', fact: null },
  ]);
  assert.deepEqual(quotedWords('the robot_arm and a robot', words), [
    { text: 'the robot_arm and a ', fact: null },
    { text: 'robot', fact: 4 },
  ]);
  assert.equal(quotedWords('nothing here', words), null);
  assert.equal(quotedWords('Krill', []), null);
  // A word with characters a pattern would read is read as itself.
  const odd = memoryWords([card(1, 1, 'SessionStart', [{ fact: 5, kind: 'term', subject: 'C++ (old)', relation: 'is', object: '' }])]);
  assert.deepEqual(quotedWords('we used C++ (old) then', odd), [
    { text: 'we used ', fact: null },
    { text: 'C++ (old)', fact: 5 },
    { text: ' then', fact: null },
  ]);
});

const user = (key, at) => ({ key, kind: 'user', at });
const said = (key, at) => ({ key, kind: 'assistant', at });
const where = (items, cards, older = false) => {
  const { before, end } = placeCards(items, cards, older);
  const out = {};
  for (const [k, cs] of before) out[k] = cs.map((c) => c.id);
  if (end.length) out.end = end.map((c) => c.id);
  return out;
};

test('SessionStart goes before the message that started the session, even stamped before it', () => {
  const items = [user('p1', 10), said('a1', 30), user('p2', 40), said('a2', 50)];
  assert.deepEqual(where(items, [card(1, 20, 'SessionStart')]), { p1: [1] });
  assert.deepEqual(where(items, [card(1, 5, 'SessionStart')]), { p1: [1] });
  // A session started again later (after it stopped), by the message p2.
  assert.deepEqual(where(items, [card(1, 45, 'SessionStart')]), { p2: [1] });
});

test('UserPromptSubmit goes right after the message it came with, whichever clock stamped it first', () => {
  const items = [user('p1', 10), said('a1', 30), user('p2', 40), said('a2', 50)];
  assert.deepEqual(where(items, [card(2, 20, 'UserPromptSubmit')]), { a1: [2] });
  // The message read from the transcript, stamped after the hook ran.
  assert.deepEqual(where(items, [card(2, 38, 'UserPromptSubmit')]), { a2: [2] });
  // Live: the answer not here yet, the card last; a message still sending (no stamp) after it.
  assert.deepEqual(where([user('p1', 10)], [card(2, 20, 'UserPromptSubmit')]), { end: [2] });
  assert.deepEqual(where([user('p1', 10), { key: 's', kind: 'user' }], [card(2, 20, 'UserPromptSubmit')]), { s: [2] });
});

test('cards keep their order; one from before what an older page holds waits for that page', () => {
  const items = [user('p1', 10), said('a1', 30)];
  assert.deepEqual(where(items, [card(2, 20, 'UserPromptSubmit'), card(1, 9, 'SessionStart')]), { p1: [1], a1: [2] });
  assert.deepEqual(where(items, [card(2, 20, 'UserPromptSubmit'), card(1, 9, 'SessionStart')], true), { a1: [2] });
  assert.deepEqual(where([], [card(1, 9, 'SessionStart')]), { end: [1] });
});

test('Markdown marks the quoted words in gold, never in code or links, and hostile words stay text', () => {
  const words = memoryWords([
    card(1, 1, 'SessionStart', [krill, { fact: 6, kind: 'term', subject: '<img src=x onerror=alert(1)>', relation: 'is', object: '' }]),
  ]);
  const html = markdown(
    'Krill is our inventory robot.\n\n`Krill` and [Krill](https://example.com) and \\<img src=x onerror=alert(1)> and <img src=x onerror=alert(1)>\n\n```\nKrill\n```\n',
    false,
    null,
    { words, open: () => {} },
  ).replace(/<!--[\s\S]*?-->/g, '');
  const marks = [...html.matchAll(/<mark class="memory[^"]*" title="from memory">([^<]*)<\/mark>/g)].map((m) => m[1]);
  assert.deepEqual(marks, ['Krill', 'our inventory robot', '&lt;img src=x onerror=alert(1)>']);
  assert.match(html, /<code[^>]*>Krill<\/code>/);
  assert.match(html, /<a [^>]*>Krill<\/a>/);
  assert.doesNotMatch(html, /<img/);
  // Raw HTML in the source stays the characters it is, unmarked.
  assert.match(html, /<span class="raw[^"]*">&lt;img src=x onerror=alert\(1\)><\/span>/);
  // Without memory, nothing is marked.
  assert.doesNotMatch(markdown('Krill is our inventory robot.'), /<mark/);
});
