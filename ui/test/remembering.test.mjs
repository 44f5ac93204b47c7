// Following what memory gave a thread (issue 22 on a paired box): the events so far, those that
// come, and, for a box whose thread stream carries only thread.* and ask.*, reading again as
// its turns move; a box that refuses is not asked again, one out of reach is once it is back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { followRemembered } from '../.test-build/remembering.js';

const krill = { fact: 2, kind: 'term', subject: 'Krill', relation: 'is', object: 'our inventory robot', pinned: false };
const remembered = (id, hook = 'SessionStart') => ({ id, at: id, type: 'harness.remembered', thread: 't', payload: { hook, facts: [krill], quotes: [] } });
const ev = (id, type, payload = {}) => ({ id, at: id, type, thread: 't', payload });
const settle = () => new Promise((ok) => setTimeout(ok, 0));

/** A place to read from: what `read` answers next (an array, or an error to throw), the
 * events' subscribers, and how many reads were made. */
function place(reread, answers = []) {
  const subs = new Set();
  const at = {
    reads: 0,
    answers,
    reread,
    read() {
      at.reads++;
      const a = at.answers.length ? at.answers.shift() : [];
      return a instanceof Error ? Promise.reject(a) : Promise.resolve(a);
    },
    events(f, types) {
      const s = { f, types };
      subs.add(s);
      return () => subs.delete(s);
    },
    emit(e) {
      for (const s of [...subs]) if (s.types.includes(e.type)) s.f(e);
    },
    get subscribers() {
      return subs.size;
    },
  };
  return at;
}

test('a thread here: the events so far and those that come, each card once; no reading again', async () => {
  const at = place(false, [[remembered(1), ev(2, 'thread.state')]]);
  const cards = [];
  const f = followRemembered(at, (c) => cards.push(c.id), () => true);
  await settle();
  assert.deepEqual(cards, [1]);
  at.emit(remembered(1));
  at.emit(remembered(5, 'UserPromptSubmit'));
  at.emit(ev(6, 'thread.state', { state: 'idle' }));
  await settle();
  assert.deepEqual(cards, [1, 5]);
  assert.equal(at.reads, 1, 'the app\'s stream carries them: read once');
  f.stop();
  assert.equal(at.subscribers, 0);
  at.emit(remembered(9));
  assert.deepEqual(cards, [1, 5]);
});

test('a box: read again as its turns move (a start, a state, a turn\'s first answer), until its stream carries them', async () => {
  const at = place(true, [[], [remembered(3)], [remembered(3), remembered(7, 'UserPromptSubmit')]]);
  const cards = [];
  followRemembered(at, (c) => cards.push(c.id), () => true);
  await settle();
  assert.equal(at.reads, 1);
  at.emit(ev(4, 'thread.started'));
  await settle();
  assert.deepEqual(cards, [3]);
  // A turn: running, the person's message (not a move), its answer's items (the first only).
  at.emit(ev(5, 'thread.state', { state: 'running' }));
  await settle();
  const before = at.reads;
  at.emit(ev(6, 'thread.item', { item: { kind: 'user' } }));
  at.emit(ev(8, 'thread.item', { item: { kind: 'assistant' } }));
  at.emit(ev(9, 'thread.item', { item: { kind: 'assistant' } }));
  await settle();
  assert.equal(at.reads, before + 1, 'once, as the answer began');
  assert.deepEqual(cards, [3, 7], 'each card once, however often read');
  // Its stream brings one itself: no more reading.
  at.emit(remembered(12, 'UserPromptSubmit'));
  const reads = at.reads;
  at.emit(ev(13, 'thread.state', { state: 'idle' }));
  await settle();
  assert.equal(at.reads, reads);
  assert.deepEqual(cards, [3, 7, 12]);
});

test('moves while a read is out make one more read after it, not one each', async () => {
  let answer;
  const at = place(true);
  at.read = () => {
    at.reads++;
    return new Promise((ok) => (answer = ok));
  };
  followRemembered(at, () => {}, () => true);
  for (const s of ['running', 'waiting', 'running', 'idle']) at.emit(ev(1, 'thread.state', { state: s }));
  assert.equal(at.reads, 1);
  answer([]);
  await settle();
  await settle();
  assert.equal(at.reads, 2);
});

test('a box that refuses is not asked again; one out of reach is, as it moves or comes back', async () => {
  const refused = Object.assign(new Error('not allowed'), { code: 'not_federated' });
  const away = Object.assign(new Error('gone'), { code: 'box_unreachable' });
  const told = [];
  const keepGoing = (e) => (told.push(e.code), e.code !== 'not_federated');

  const no = place(true, [refused]);
  const f = followRemembered(no, () => assert.fail('no card'), keepGoing);
  await settle();
  no.emit(ev(1, 'thread.state', { state: 'idle' }));
  f.again();
  await settle();
  assert.equal(no.reads, 1);

  const gone = place(true, [away, away, [remembered(4)]]);
  const cards = [];
  const g = followRemembered(gone, (c) => cards.push(c.id), keepGoing);
  await settle();
  gone.emit(ev(2, 'thread.state', { state: 'running' }));
  await settle();
  g.again();
  await settle();
  assert.deepEqual(cards, [4]);
  g.again();
  await settle();
  assert.equal(gone.reads, 3, 'read again only while what was read is out of date');
  assert.deepEqual(told, ['not_federated', 'box_unreachable', 'box_unreachable']);
});
