import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  charWords,
  checkWords,
  countsLine,
  foldLesson,
  foldNotice,
  keptWords,
  kindLabel,
  learnedNotices,
  levelMeaning,
  mergeNotices,
  noticeLine,
  placeNotices,
  putLesson,
  scopeChoices,
  scopeKey,
  scopeOfKey,
  scopeWords,
  shownLessons,
  sourceLabel,
} from '../.test-build/lessons.js';
import { lessonLevel, lessonNotice } from '../.test-build/ssr/entry.js';

const DASHES = { type: 'banned', chars: ['\u2014'], words: [] };
const TOUCH = { type: 'command', words: ['touch'], flags: [] };

/** A lesson as `learn.lessons` lists it. */
function lesson(id, over = {}) {
  return {
    lesson: id,
    scope: 'all',
    target: null,
    when: 'every answer',
    rule: "don't use em dashes",
    check: DASHES,
    level: 'remind',
    source: { kind: 'correction', thread: 't1', turn: null, text: "don't use em dashes" },
    applied: 0,
    broken: 0,
    retired: false,
    pending: false,
    created_at: 1000 * id,
    updated_at: 1000 * id,
    ...over,
  };
}

const event = (type, payload, over = {}) => ({ id: 10, at: 5000, type, source: 'learn', project: null, thread: 't1', payload, ...over });

test('a lesson is checked in code, or a reminder in every prompt', () => {
  assert.equal(kindLabel(lesson(1)), 'Checked in code');
  assert.equal(kindLabel(lesson(1, { check: null })), 'A reminder in every prompt');
});

test('where a lesson came from: a correction links to its session, the person\'s own, /vyre remember, anything else', () => {
  assert.deepEqual(sourceLabel(lesson(1)), { kind: 'correction', words: 'A correction you made in', thread: 't1', quote: null });
  const said = sourceLabel(lesson(1, { rule: 'never force push', source: { kind: 'correction', thread: 't2', text: 'please never force push.' } }));
  assert.equal(said.quote, 'please never force push.', 'the person\'s words, when the rule is not all of them');
  assert.deepEqual(sourceLabel(lesson(1, { source: { kind: 'person', text: 'x' } })), { kind: 'person', words: 'You added it', thread: null, quote: null });
  const remember = sourceLabel(lesson(1, { rule: 'the staging host is blue', source: { kind: 'remember', thread: null, text: '/vyre remember the staging host is blue' } }));
  assert.equal(remember.words, '/vyre remember');
  assert.equal(remember.thread, null);
  assert.equal(sourceLabel(lesson(1, { source: { kind: 'remember', thread: 't3', text: 'x' } })).words, '/vyre remember, in');
  assert.equal(sourceLabel(lesson(1, { source: { kind: 'denied', thread: 't3', text: 'no' } })).words, 'A call you denied in');
  assert.equal(sourceLabel(lesson(1, { source: { kind: 'correction', thread: null, text: 'x' } })).words, 'A correction you made');
  assert.deepEqual(sourceLabel(lesson(1, { source: { kind: 'something-new' } })), { kind: 'something-new', words: 'Learned', thread: null, quote: null });
  for (const odd of [null, 'text', 42, { kind: 7, thread: 3 }]) {
    const s = sourceLabel(lesson(1, { source: odd }));
    assert.equal(s.thread, null, JSON.stringify(odd));
    assert.equal(s.words, 'Learned');
  }
});

test('a check in words, its characters by name, never the characters themselves', () => {
  assert.equal(charWords('\u2014'), 'em dash (U+2014)');
  assert.equal(charWords(';'), 'semicolon (U+003B)');
  assert.equal(charWords('#'), '"#"');
  assert.equal(charWords('\u{1F600}'), 'U+1F600');
  const dashes = checkWords(DASHES);
  assert.equal(dashes, 'No em dash (U+2014) in an answer');
  assert.ok(!dashes.includes('\u2014'));
  assert.equal(checkWords({ type: 'banned', chars: [], words: ['delve', 'tapestry'] }), 'No "delve" or "tapestry" in an answer');
  assert.equal(checkWords(TOUCH), 'No command `touch`');
  assert.equal(checkWords({ type: 'command', words: ['git', 'push'], flags: ['--force', '-f'] }), 'No command `git push` with `--force` or `-f`');
  assert.equal(
    checkWords({ type: 'requires', before: ['git', 'commit'], ran: [['cargo', 'test'], ['npm', 'test'], ['pytest'], ['go', 'test'], ['make', 'test']] }),
    '`git commit` only after `cargo test`, `npm test`, `pytest` or 2 more ran in the same turn',
  );
  assert.equal(checkWords({ type: 'touches', path: 'CHANGELOG.md' }), 'A turn that changes files changes CHANGELOG.md too');
  assert.equal(checkWords(null), null);
});

test('each level says what it does for what the lesson checks', () => {
  assert.match(levelMeaning('remind', DASHES), /sent back to Claude once/);
  assert.match(levelMeaning('block', DASHES), /until it keeps it/);
  assert.match(levelMeaning('ask', TOUCH), /You are asked/);
  assert.match(levelMeaning('block', TOUCH), /refused/);
  assert.match(levelMeaning('block', null), /reminder/);
});

test('counts and the order of the list', () => {
  assert.equal(countsLine(lesson(1, { applied: 4, broken: 1 })), 'applied 4 · broken 1');
  const list = [lesson(3), lesson(1, { retired: true }), lesson(2), lesson(4, { pending: true })];
  assert.deepEqual(shownLessons(list, false).map((l) => l.lesson), [4, 2, 3], 'waiting for the person first, then oldest first; no retired');
  assert.deepEqual(shownLessons(list, true).map((l) => l.lesson), [4, 2, 3, 1], 'retired last when asked for');
  assert.deepEqual(list.map((l) => l.lesson), [3, 1, 2, 4], 'the list itself is left as it was');
});

test('an answer goes into the list: in place, or added', () => {
  const list = [lesson(1), lesson(2)];
  assert.deepEqual(putLesson(list, lesson(2, { level: 'block' })).map((l) => l.level), ['remind', 'block']);
  assert.deepEqual(putLesson(list, lesson(3)).map((l) => l.lesson), [1, 2, 3]);
});

test('events fold into the list at once; what they do not say asks for a read', () => {
  const list = [lesson(1, { applied: 2 }), lesson(2)];
  let r = foldLesson(list, event('lesson.broken', { lesson: 1, rule: 'x', what: 'the answer has U+2014 (EM DASH)', level: 'remind' }));
  assert.equal(r.load, false);
  assert.deepEqual([r.list[0].broken, r.list[0].applied], [1, 3], 'a break counts as applied too, as vyred counts it');
  assert.equal(r.list[1], list[1], 'the others are untouched');
  r = foldLesson(r.list, event('lesson.escalated', { lesson: 1, rule: 'x', from: 'remind', to: 'ask' }));
  assert.equal(r.list[0].level, 'ask');
  r = foldLesson(r.list, event('lesson.escalated', { lesson: 1, rule: 'x', from: 'ask', to: 'never-heard-of' }));
  assert.equal(r.list[0].level, 'ask', 'a level it does not know is not taken');
  assert.equal(r.load, true);
  r = foldLesson(r.list, event('lesson.changed', { lesson: 2, change: 'retired' }));
  assert.deepEqual([r.list[1].retired, r.load], [true, false]);
  assert.equal(foldLesson(list, event('lesson.changed', { lesson: 1, change: 'edited' })).load, true, 'an edit says not what changed');
  assert.equal(foldLesson(list, event('lesson.learned', { lesson: 9, rule: 'new' })).load, true);
  assert.equal(foldLesson(list, event('lesson.learned', { lesson: 1, rule: 'known' })).load, false);
  assert.equal(foldLesson(list, event('lesson.broken', { lesson: 9 })).load, true, 'a break of one not known: read');
  const same = foldLesson(list, event('lesson.something', { lesson: 1 }));
  assert.deepEqual([same.list, same.load], [list, false]);
});

test('a thread\'s notices: learned once, each break once, a move up on the break it followed', () => {
  let n = [];
  const learned = event('lesson.learned', { lesson: 1, rule: "don't use em dashes", checked: true, level: 'remind', source: 'correction', pending: false }, { id: 5, at: 1000 });
  n = foldNotice(n, learned);
  assert.equal(foldNotice(n, learned), n, 'the same event read twice changes nothing');
  assert.equal(foldNotice(n, { ...learned, id: 6 }), n, 'a lesson is learned once');
  const broken = event('lesson.broken', { lesson: 1, rule: "don't use em dashes", what: 'the answer has U+2014 (EM DASH)', level: 'remind' }, { id: 7, at: 2000 });
  n = foldNotice(n, broken);
  n = foldNotice(n, broken);
  n = foldNotice(n, { ...broken, id: 9, at: 3000 });
  assert.deepEqual(n.map((x) => x.key), ['learned-1', 'broken-7', 'broken-9']);
  n = foldNotice(n, event('lesson.escalated', { lesson: 1, rule: 'x', from: 'remind', to: 'ask' }, { id: 10, at: 3000 }));
  assert.deepEqual(n.map((x) => x.to ?? null), [null, null, 'ask'], 'on the newest break before it');
  assert.equal(foldNotice(n, event('lesson.escalated', { lesson: 2, to: 'ask' })), n, 'no break of that lesson: nothing');
  assert.equal(foldNotice(n, event('lesson.broken', { rule: 'no id' })), n);
  assert.equal(foldNotice(n, event('thread.item', { lesson: 1 })), n);
});

test('learned notices from the list: only this thread\'s, not the person\'s own; merged with the events once each', () => {
  const list = [
    lesson(1),
    lesson(2, { source: { kind: 'correction', thread: 'other', text: 'x' } }),
    lesson(3, { source: { kind: 'person', text: 'x' } }),
    lesson(4, { retired: true, source: { kind: 'remember', thread: 't1', text: 'x' }, pending: true }),
  ];
  const fromList = learnedNotices(list, 't1');
  assert.deepEqual(fromList.map((x) => [x.key, x.at, x.pending]), [['learned-1', 1000, false], ['learned-4', 4000, true]]);
  const fromEvents = foldNotice([], event('lesson.learned', { lesson: 1, rule: 'r' }, { at: 1005 }));
  const both = mergeNotices(fromList, foldNotice(fromEvents, event('lesson.broken', { lesson: 1, rule: 'r', what: 'w' }, { id: 11, at: 2500 })));
  assert.deepEqual(both.map((x) => x.key), ['learned-1', 'broken-11', 'learned-4']);
});

test('a notice\'s line says what happened, with no em dash', () => {
  const learned = { key: 'learned-1', kind: 'learned', lesson: 1, rule: "don't use em dashes", at: 1 };
  assert.equal(noticeLine(learned), "Learned: don't use em dashes");
  assert.equal(noticeLine({ ...learned, pending: true }), "Learned, once you confirm it: don't use em dashes");
  const kept = { key: 'broken-2', kind: 'broken', lesson: 1, rule: "don't use em dashes", at: 2, what: 'the answer has U+2014 (EM DASH)', level: 'remind', to: null };
  assert.equal(noticeLine(kept, DASHES), "Lesson kept: don't use em dashes · sent back to Claude");
  assert.equal(noticeLine({ ...kept, to: 'ask' }, DASHES), "Lesson kept: don't use em dashes · sent back to Claude · now at Ask");
  const cmd = { ...kept, rule: 'never run `touch`', what: 'the command `touch x`' };
  assert.equal(keptWords({ ...cmd, level: 'remind' }, TOUCH), 'Claude was reminded');
  assert.equal(keptWords({ ...cmd, level: 'ask' }, TOUCH), 'you were asked first');
  assert.equal(keptWords({ ...cmd, level: 'block' }, TOUCH), 'the command was refused');
  // A lesson not in the list: what vyred said was wrong tells the stage.
  assert.equal(keptWords({ ...cmd, level: 'block' }, undefined), 'the command was refused');
  assert.equal(keptWords({ what: '`git commit` before any of the commands it needs ran in this turn', level: 'ask' }, undefined), 'you were asked first');
  assert.equal(keptWords({ what: 'files changed in this turn, and CHANGELOG.md is not one of them', level: 'block' }, undefined), 'sent back to Claude');
  for (const line of [noticeLine(learned), noticeLine(kept, DASHES), noticeLine({ ...cmd, to: 'block' }, TOUCH)]) assert.ok(!line.includes('\u2014'), line);
});

test('notices go where they happened: after the message that taught, between an answer and the one sent back', () => {
  const items = [
    { key: 'u1', kind: 'user', at: 1000 },
    { key: 'a1', kind: 'assistant', at: 1100 },
    { key: 'u2', kind: 'user', at: 2000 },
    { key: 'a2', kind: 'assistant', at: 2100 },
    { key: 'a3', kind: 'assistant', at: 2300 },
  ];
  const learned = { key: 'learned-1', kind: 'learned', lesson: 1, rule: 'r', at: 1050 };
  const kept = { key: 'broken-9', kind: 'broken', lesson: 1, rule: 'r', at: 2200 };
  let p = placeNotices(items, [kept, learned]);
  assert.deepEqual([...p.before.entries()].map(([k, v]) => [k, v.map((n) => n.key)]), [['a1', ['learned-1']], ['a3', ['broken-9']]]);
  assert.deepEqual(p.end, []);
  // The message read from the transcript, stamped after vyred learned from it: still after it.
  p = placeNotices([{ key: 'u1', kind: 'user', at: 1100 }, { key: 'a1', kind: 'assistant', at: 1200 }], [learned]);
  assert.deepEqual(p.before.get('a1')?.map((n) => n.key), ['learned-1']);
  // Newer than everything, or with only an answer still streaming after it.
  p = placeNotices([{ key: 'u1', kind: 'user', at: 1000 }], [learned]);
  assert.deepEqual(p.end.map((n) => n.key), ['learned-1']);
  p = placeNotices([{ key: 'u1', kind: 'user', at: 1000 }, { key: 's', kind: 'assistant' }], [learned]);
  assert.deepEqual(p.before.get('s')?.map((n) => n.key), ['learned-1']);
  // Older pages not loaded: one from before what is loaded is left out.
  p = placeNotices(items.slice(2), [learned, kept], true);
  assert.deepEqual([...p.before.values()].flat().map((n) => n.key), ['broken-9']);
});

test('the chat\'s notice is one quiet line with a link to the lessons; its rule is text', () => {
  const html = lessonNotice({ notice: { key: 'broken-2', kind: 'broken', lesson: 3, rule: '<b>no</b> em dashes', at: 2, what: 'w', level: 'remind', to: null }, check: DASHES });
  assert.match(html, /data-testid="lesson-notice"/);
  assert.match(html, /data-kind="broken"/);
  assert.match(html, /data-lesson="3"/);
  assert.match(html, /Lesson kept: &lt;b>no&lt;\/b> em dashes · sent back to Claude/);
  assert.match(html, /href="\/app\/lessons"/);
  assert.ok(!html.includes('\u2014'));
});

test('the level control marks the lesson\'s level and says what each does', () => {
  const html = lessonLevel({ level: 'ask', check: TOUCH });
  assert.match(html, /data-testid="lesson-level-remind"[^>]*>Remind</);
  assert.match(html, /aria-checked="true"[^>]*title="You are asked before the command runs\."[^>]*data-testid="lesson-level-ask"/);
  assert.equal((html.match(/aria-checked="true"/g) ?? []).length, 1);
});

test('where a lesson applies, in words', () => {
  assert.equal(scopeWords(lesson(1)), 'Everywhere');
  assert.equal(scopeWords(lesson(1, { target: 'news' })), 'Everywhere', 'a target left over does not narrow it');
  assert.equal(scopeWords(lesson(1, { scope: 'project', target: 'news' })), 'In project news');
  assert.equal(scopeWords(lesson(1, { scope: 'project', target: 'Garden shed' })), 'In project Garden shed', 'a project keeps its name as written');
  assert.equal(scopeWords(lesson(1, { scope: 'agent', target: 'juno' })), 'For agent Juno', 'an agent as the app writes it');
  assert.equal(scopeWords(lesson(1, { scope: 'project', target: null })), 'Nowhere (no project named)');
  assert.equal(scopeWords(lesson(1, { scope: 'agent', target: null })), 'Nowhere (no agent named)');
});

test('where a lesson applies, as a choice and back as learn.edit fields', () => {
  assert.equal(scopeKey(lesson(1)), 'all');
  assert.equal(scopeKey(lesson(1, { target: 'news' })), 'all');
  assert.equal(scopeKey(lesson(1, { scope: 'project', target: 'news' })), 'project:news');
  assert.equal(scopeKey(lesson(1, { scope: 'agent', target: 'juno' })), 'agent:juno');
  assert.deepEqual(scopeOfKey('all'), { scope: 'all' }, 'everywhere names nothing');
  assert.deepEqual(scopeOfKey('project:news'), { scope: 'project', target: 'news' });
  assert.deepEqual(scopeOfKey('project:a: b'), { scope: 'project', target: 'a: b' }, 'a name with a colon in it');
  assert.deepEqual(scopeOfKey('agent:juno'), { scope: 'agent', target: 'juno' });
  for (const bad of ['', 'project:', 'agent:', 'thread:x', ':news', 'news']) assert.equal(scopeOfKey(bad), null, bad);
  // Round trips.
  for (const l of [lesson(1), lesson(1, { scope: 'project', target: 'a: b' }), lesson(1, { scope: 'agent', target: 'juno' })]) {
    const back = scopeOfKey(scopeKey(l));
    assert.equal(back.scope, l.scope);
    assert.equal(back.target ?? null, l.scope === 'all' ? null : l.target);
  }
});

test('what a lesson can be narrowed to', () => {
  const c = scopeChoices(lesson(1), ['news', 'Garden', 'atlas'], ['scout', 'juno']);
  assert.deepEqual(c.everywhere, { key: 'all', label: 'Everywhere' });
  assert.deepEqual(c.projects.map((x) => x.key), ['project:atlas', 'project:Garden', 'project:news'], 'sorted, whatever the case');
  assert.deepEqual(c.agents, [
    { key: 'agent:juno', label: 'Juno' },
    { key: 'agent:scout', label: 'Scout' },
  ]);
  // Where it applies now is a choice even when that project or agent is gone from the lists.
  const gone = scopeChoices(lesson(1, { scope: 'project', target: 'old' }), ['news'], []);
  assert.deepEqual(gone.projects.map((x) => x.label), ['news', 'old']);
  assert.deepEqual(gone.agents, []);
  assert.deepEqual(scopeChoices(lesson(1, { scope: 'agent', target: 'juno' }), [], ['juno']).agents.map((x) => x.key), ['agent:juno'], 'once');
  // A project and an agent may share a name: each is its own choice.
  const both = scopeChoices(lesson(1), ['news'], ['news']);
  assert.deepEqual([...both.projects, ...both.agents].map((x) => x.key), ['project:news', 'agent:news']);
  assert.deepEqual(scopeChoices(lesson(1), ['', '  '], []).projects, [], 'no blank names');
  assert.deepEqual(scopeChoices(lesson(1), [], []), { everywhere: { key: 'all', label: 'Everywhere' }, projects: [], agents: [] });
});
