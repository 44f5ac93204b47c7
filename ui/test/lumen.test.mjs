import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LUMEN_PATH, exchange, isLumen, lumenThread, prune } from '../.test-build/lumen.js';
import { addSending, apply, newChat } from '../.test-build/chat.js';

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
