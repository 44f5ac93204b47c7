import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  LUMEN_PATH, PLACE_ITEM, PROVIDER_ITEM, START_KEY, exchange, isLumen, lumenThread, placeChoices, prune, rememberPlace, rememberProvider, rememberedPlace,
  rememberedProvider, settleStart, startProvider,
} from '../.test-build/lumen.js';
import { linkDown, outOfReach } from '../.test-build/boxes.js';
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

test('on a box, the conversation\'s page and then its own stream\'s events, with the box\'s ids', () => {
  const s = newChat('');
  addSending(s, START_KEY + 'x', 'hi box');
  s.thread = 'b-1';
  // The box's page right after threads.start: its message may not be in it yet.
  let page = { items: [], before: null, last_event: 4 };
  settleStart(s, page);
  loadPage(s, page);
  assert.equal(exchange(s.items).sending, true, 'not confirmed yet');
  // The box's stream from after the page, word by word, its ids the box's.
  let id = 4;
  const boxEv = (type, payload) => ({ id: ++id, at: id, type, source: 'threads', project: null, thread: 'b-1', payload });
  apply(s, boxEv('thread.item', { item: { kind: 'user', key: 'u-box', at: 1, uuid: 'u-box', text: 'hi box', via: 'person' } }));
  apply(s, boxEv('thread.state', { state: 'running' }));
  apply(s, boxEv('thread.item', { item: { kind: 'assistant', key: 'm:m1:0', at: 2, message: 'm1', text: 'reply ', done: false } }));
  apply(s, boxEv('thread.text', { message: 'm1', block: 0, delta: 'to [hi box]' }));
  assert.equal(s.running, true);
  assert.equal(exchange(s.items).asked, 'hi box');
  assert.deepEqual(exchange(s.items).texts.map((t) => t.text), ['reply to [hi box]']);
  apply(s, boxEv('thread.finished', {}));
  assert.equal(s.running, false);
  // Opened again (Lumen shown again): the page holds the message, the start gives way.
  const again = newChat('');
  addSending(again, START_KEY + 'y', 'hi box');
  page = { items: [{ kind: 'user', key: 'u-box', at: 1, uuid: 'u-box', text: 'hi box', via: 'person' }], before: null, last_event: 9 };
  settleStart(again, page);
  loadPage(again, page);
  assert.deepEqual(again.items.map((i) => i.key), ['u-box'], 'the starting message gave way to the box\'s');
  // What the stream replays from before the page changes nothing.
  apply(again, { id: 7, at: 7, type: 'thread.item', source: 'threads', project: null, thread: 'b-1', payload: { item: { kind: 'user', key: 'old', at: 0, uuid: 'old', text: 'older', via: 'person' } } });
  assert.deepEqual(again.items.map((i) => i.key), ['u-box']);
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

test('a new conversation runs on the provider chosen in Lumen while its Vyre offers it, else as Settings say', () => {
  const offered = [{ name: 'claude' }, { name: 'codex' }];
  assert.equal(startProvider('codex', offered), 'codex');
  assert.equal(startProvider('', offered), undefined, 'no choice: Settings\' provider for Lumen');
  assert.equal(startProvider('acp-gone', offered), undefined, 'a provider that Vyre no longer runs is not asked for');
  assert.equal(startProvider('codex', []), undefined, 'the list not known yet');
  const kept = new Map();
  const store = { getItem: (k) => kept.get(k) ?? null, setItem: (k, v) => kept.set(k, v), removeItem: (k) => kept.delete(k) };
  assert.equal(rememberedProvider(store), '');
  rememberProvider('codex', store);
  assert.equal(kept.get(PROVIDER_ITEM), 'codex');
  assert.equal(rememberedProvider(store), 'codex');
  rememberProvider('', store);
  assert.equal(kept.has(PROVIDER_ITEM), false);
});
