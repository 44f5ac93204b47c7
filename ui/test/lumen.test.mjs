import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  LUMEN_PATH, PLACE_ITEM, START_KEY, asksAgain, eventAt, exchange, isLumen, linkDown, lumenThread, outOfReach, placeChoices, prune, rememberPlace, rememberedPlace, settleStart,
} from '../.test-build/lumen.js';
import { addSending, apply, loadPage, newChat } from '../.test-build/chat.js';

let n = 0;
const ev = (type, payload, thread = 't1') => ({ id: ++n, at: Date.now(), type, source: 'threads', project: null, thread, payload });
// The timeline's items as vyred announces them (thread.item).
const item = (it) => ev('thread.item', { item: it });
const turn = (uuid, text) => item({ kind: 'user', key: uuid, at: 1, uuid, text, via: 'person' });
const words = (message, block, text, done = false, kind = 'assistant') => item({ kind, key: `m:${message}:${block}`, at: 2, message, text, done });
const toolItem = (call, name, summary) => item({ kind: 'tool', key: `tool:${call}`, at: 3, call, name, input: {}, summary, status: 'running', auto: true });

test('Lumen has its own path under /app/, and only that path', () => {
  assert.equal(LUMEN_PATH, '/app/lumen');
  assert.equal(isLumen('/app/lumen'), true);
  assert.equal(isLumen('/app/lumen/'), true);
  for (const p of ['/app/', '/app', '/app/t/lumen', '/app/lumenx', '/lumen', '/onboard']) assert.equal(isLumen(p), false, p);
});

test('the Lumen conversation is the assistant\'s newest capsule thread', () => {
  assert.equal(lumenThread([]), null);
  const threads = [
    { thread: 'a', purpose: 'agent', created_at: 5 },
    { thread: 'old', purpose: 'capsule', created_at: 1 },
    { thread: 'new', purpose: 'capsule', created_at: 3 },
  ];
  assert.equal(lumenThread(threads), 'new');
  assert.equal(lumenThread([{ thread: 'a', purpose: 'agent', created_at: 5 }]), null);
});

test('the exchange is the last message and what came back since, streaming', () => {
  const s = newChat('t1');
  assert.deepEqual(exchange(s.items).asked, null);
  apply(s, turn('u1', 'first'));
  apply(s, words('m1', 0, 'reply to [first]', true));
  apply(s, ev('thread.finished', {}));
  addSending(s, 'u2', 'second');
  let x = exchange(s.items);
  assert.equal(x.asked, 'second');
  assert.equal(x.sending, true);
  assert.deepEqual(x.texts, []);
  apply(s, turn('u2', 'second'));
  apply(s, words('m2', 0, 'thinking', false, 'reasoning'));
  apply(s, words('m2', 1, 'reply '));
  apply(s, toolItem('c1', 'Bash', 'ls'));
  apply(s, toolItem('c2', 'Read', 'a.md'));
  x = exchange(s.items);
  assert.equal(x.sending, false);
  assert.deepEqual(x.texts.map((t) => [t.text, t.done]), [['reply ', false]]);
  assert.equal(x.tool.name, 'Read', 'the latest tool call');
  assert.deepEqual(x.rows.map((r) => r.kind + ':' + (r.name ?? r.text)), ['assistant:reply ', 'tool:Read'], 'only the latest tool call, where it came');
  apply(s, ev('thread.text', { message: 'm2', block: 1, delta: 'to [second]' }));
  apply(s, words('m2', 1, 'reply to [second]', true));
  apply(s, item({ kind: 'notice', key: 'n:x', at: 4, level: 'error', code: 'turn_failed', text: 'it broke' }));
  apply(s, ev('thread.finished', { error: 'it broke' }));
  x = exchange(s.items);
  assert.deepEqual(x.texts.map((t) => [t.text, t.done]), [['reply to [second]', true]]);
  assert.deepEqual(x.notices.map((i) => i.text), ['it broke']);
  assert.deepEqual(x.rows.map((r) => r.kind), ['assistant', 'tool', 'notice']);
});

test('pruning keeps the last exchange, and a long turn keeps its texts and newest rows', () => {
  const s = newChat('t1');
  for (let i = 0; i < 30; i++) {
    apply(s, turn('u' + i, 'q' + i));
    apply(s, words('m' + i, 0, 'a' + i, true));
  }
  prune(s, 40);
  assert.equal(s.items.length, 2);
  assert.deepEqual(s.items.map((i) => i.text), ['q29', 'a29']);
  for (let i = 0; i < 60; i++) apply(s, toolItem('c' + i, 'Bash', String(i)));
  apply(s, words('m99', 0, 'after the tools'));
  prune(s, 40);
  assert.equal(s.items.length, 40);
  assert.equal(s.items[0].text, 'q29');
  assert.deepEqual(s.items.filter((i) => i.kind === 'assistant').map((i) => i.text), ['a29', 'after the tools']);
  assert.equal(exchange(s.items).tool.summary, '59');
  const small = newChat('t1');
  apply(small, turn('x', 'x'));
  prune(small, 40);
  assert.equal(small.items.length, 1, 'a short list is left alone');
});

// ---- The assistant on a paired box ----

function memory() {
  const m = new Map();
  return { getItem: (k) => m.get(k) ?? null, setItem: (k, v) => m.set(k, String(v)), removeItem: (k) => m.delete(k), m };
}

/** A box's event as the Mac republishes it: its own id on the Mac, the box's inside. */
let macId = 1000;
const fromBox = (box, inner) => ({ id: ++macId, at: inner.at, type: 'pairing.box_event', source: 'pairing', project: null, thread: null, payload: { box, ...inner } });

test('where the assistant is, remembered across openings; here when nothing is', () => {
  const store = memory();
  assert.equal(rememberedPlace(store), null);
  rememberPlace('box-1', store);
  assert.equal(store.m.get(PLACE_ITEM), 'box-1');
  assert.equal(rememberedPlace(store), 'box-1');
  rememberPlace(null, store);
  assert.equal(rememberedPlace(store), null);
  assert.equal(store.m.has(PLACE_ITEM), false, 'here is the default: nothing kept');
  assert.equal(rememberedPlace(null), null, 'no storage: here, no throw');
  rememberPlace('box-1', null);
});

test('the choice is here first, then each paired box by its name', () => {
  assert.deepEqual(placeChoices({}), [{ place: null, label: 'Here' }]);
  assert.deepEqual(placeChoices({ 'box-1': { name: 'atlas', link: 'up' }, 'box-2': { name: '10.0.0.2:7878', link: 'down' } }), [
    { place: null, label: 'Here' },
    { place: 'box-1', label: 'On atlas' },
    { place: 'box-2', label: 'On 10.0.0.2:7878' },
  ]);
});

test('here, the conversation takes this machine\'s events and never a box\'s', () => {
  const local = ev('thread.state', { state: 'running' }, 'here-1');
  assert.equal(eventAt(local, null), local);
  const ask = ev('ask.raised', { ask: 'a1' }, 'here-1');
  assert.equal(eventAt(ask, null), ask);
  assert.equal(eventAt(fromBox('box-1', { id: 7, type: 'thread.state', at: 1, thread: 'here-1', project: null, payload: { state: 'idle' } }), null), null);
  assert.equal(eventAt(ev('pairing.link', { box: 'box-1', state: 'down' }, null), null), null);
});

test('on a box, the conversation takes that box\'s own events, unwrapped with the box\'s ids', () => {
  const e = fromBox('box-1', { id: 7, type: 'thread.state', at: 123, thread: 'b-1', project: 'acme', payload: { state: 'running' } });
  assert.deepEqual(eventAt(e, 'box-1'), { id: 7, at: 123, type: 'thread.state', source: 'pairing', project: 'acme', thread: 'b-1', payload: { state: 'running' } });
  assert.equal(eventAt(e, 'box-2'), null, 'another box\'s');
  assert.equal(eventAt(ev('thread.state', { state: 'idle' }, 'b-1'), 'box-1'), null, 'this machine\'s');
  assert.equal(eventAt(fromBox('box-1', { id: 8, type: 'thread.state', withheld: true }), 'box-1'), null, 'withheld by this machine\'s store');
  assert.equal(eventAt({ ...e, payload: { box: 'box-1', type: 'thread.state' } }, 'box-1'), null, 'no id of the box\'s');
  assert.deepEqual(eventAt(fromBox('box-1', { id: 9, type: 'thread.titled', thread: 'b-1' }), 'box-1').payload, {}, 'no payload: an empty one');
});

test('a box\'s events apply to the conversation as this machine\'s do, and its timeline is asked again as its state changes', () => {
  const s = newChat('');
  addSending(s, START_KEY + 'x', 'hi box');
  s.thread = 'b-1';
  const inner = (id, type, payload) => eventAt(fromBox('box-1', { id, type, at: id, thread: 'b-1', project: null, payload }), 'box-1');
  // The Mac's ids run far ahead of the box's: the box's count, as its timeline's last_event does.
  for (const e of [inner(3, 'thread.started', { cwd: '/box/agents/atlas' }), inner(4, 'thread.state', { state: 'running' })]) apply(s, e);
  assert.equal(s.running, true);
  assert.equal(s.lastId, 4);
  assert.equal(s.cwd, '/box/agents/atlas');
  assert.equal(exchange(s.items).sending, true, 'not confirmed: the box passed on no item');
  // The box's page, asked again: the started message has its own key there.
  const page = { items: [{ kind: 'user', key: 'u-box', at: 1, uuid: 'u-box', text: 'hi box', via: 'person' }], before: null, last_event: 5 };
  settleStart(s, page);
  loadPage(s, page);
  assert.deepEqual(s.items.map((i) => i.key), ['u-box'], 'the starting message gave way to the box\'s');
  apply(s, inner(9, 'thread.finished', {}));
  assert.equal(s.running, false);
  loadPage(s, { items: [...page.items, { kind: 'assistant', key: 'm:m1:0', at: 2, message: 'm1', text: 'reply to [hi box]', done: true }], before: null, last_event: 10 });
  const x = exchange(s.items);
  assert.equal(x.asked, 'hi box');
  assert.deepEqual(x.texts.map((t) => t.text), ['reply to [hi box]']);
  // Were the box to pass its words on, they would stream in as here.
  apply(s, inner(11, 'thread.item', { item: { kind: 'assistant', key: 'm:m2:0', at: 3, message: 'm2', text: 'more ', done: false } }));
  apply(s, inner(12, 'thread.text', { message: 'm2', block: 0, delta: 'words' }));
  assert.equal(exchange(s.items).texts.at(-1).text, 'more words');

  assert.deepEqual(['thread.state', 'thread.finished', 'thread.stopped'].filter((type) => asksAgain({ type })), ['thread.state', 'thread.finished', 'thread.stopped']);
  assert.deepEqual(['thread.titled', 'thread.started', 'ask.raised', 'thread.item'].filter((type) => asksAgain({ type })), []);
});

test('the starting message stays until the box\'s page holds a message of the person\'s', () => {
  const s = newChat('b-1');
  addSending(s, START_KEY + 'x', 'hi');
  settleStart(s, { items: [] });
  settleStart(s, { items: [{ kind: 'user', key: 'g', at: 1, uuid: 'g', text: 'greet them', via: 'internal' }] });
  assert.equal(s.items.length, 1, 'Vyre\'s own instruction is not the person\'s message');
  addSending(s, 'u2', 'a send with its own uuid');
  settleStart(s, { items: [{ kind: 'user', key: 'u1', at: 1, uuid: 'u1', text: 'hi', via: 'person' }] });
  assert.deepEqual(s.items.map((i) => i.key), ['u2'], 'a send keeps its uuid: loadPage matches it by key');
  const failed = newChat('');
  addSending(failed, START_KEY + 'y', 'not sent');
  failed.items[0].status = 'failed';
  settleStart(failed, { items: [{ kind: 'user', key: 'u1', at: 1, uuid: 'u1', text: 'hi', via: 'person' }] });
  assert.equal(failed.items.length, 1, 'a failed start stays, marked');
});

test('a box is out of reach when the pairing could not reach it or its link is down', () => {
  for (const code of ['box_unreachable', 'unknown_pairing', 'not_paired', 'no_credential', 'no_device_key', 'invalid_credential']) assert.equal(outOfReach(code), true, code);
  // The box's own answers about the conversation are not.
  for (const code of ['unknown_thread', 'no_history', 'invalid_input', 'busy', undefined, '']) assert.equal(outOfReach(code), false, String(code));
  assert.equal(linkDown('down'), true);
  assert.equal(linkDown('revoked'), true);
  for (const l of ['up', null, undefined]) assert.equal(linkDown(l), false, String(l));
});
