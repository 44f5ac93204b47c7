import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LUMEN_PATH, exchange, isLumen, lumenThread, prune } from '../.test-build/lumen.js';
import { addSending, apply, newChat } from '../.test-build/chat.js';

let n = 0;
const ev = (type, payload, thread = 't1') => ({ id: ++n, at: Date.now(), type, source: 'threads', project: null, thread, payload });

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
  apply(s, ev('thread.turn', { uuid: 'u1', text: 'first' }));
  apply(s, ev('thread.text', { message: 'm1', block: 0, delta: 'reply to [first]', done: true }));
  apply(s, ev('thread.finished', {}));
  addSending(s, 'u2', 'second');
  let x = exchange(s.items);
  assert.equal(x.asked, 'second');
  assert.equal(x.sending, true);
  assert.deepEqual(x.texts, []);
  apply(s, ev('thread.turn', { uuid: 'u2', text: 'second' }));
  apply(s, ev('thread.text', { message: 'm2', block: 0, delta: 'thinking', kind: 'reasoning' }));
  apply(s, ev('thread.text', { message: 'm2', block: 1, delta: 'reply ' }));
  apply(s, ev('thread.tool', { call: 'c1', name: 'Bash', phase: 'started', status: 'running', summary: 'ls' }));
  apply(s, ev('thread.tool', { call: 'c2', name: 'Read', phase: 'started', status: 'running', summary: 'a.md' }));
  x = exchange(s.items);
  assert.equal(x.sending, false);
  assert.deepEqual(x.texts.map((t) => [t.text, t.done]), [['reply ', false]]);
  assert.equal(x.tool.name, 'Read', 'the latest tool call');
  assert.deepEqual(x.rows.map((r) => r.kind + ':' + (r.name ?? r.text)), ['assistant:reply ', 'tool:Read'], 'only the latest tool call, where it came');
  apply(s, ev('thread.text', { message: 'm2', block: 1, delta: 'to [second]' }));
  apply(s, ev('thread.finished', { error: 'it broke' }));
  x = exchange(s.items);
  assert.deepEqual(x.texts.map((t) => [t.text, t.done]), [['reply to [second]', true]]);
  assert.deepEqual(x.notices.map((i) => i.text), ['it broke']);
  assert.deepEqual(x.rows.map((r) => r.kind), ['assistant', 'tool', 'notice']);
});

test('pruning keeps the last exchange, and a long turn keeps its texts and newest rows', () => {
  const s = newChat('t1');
  for (let i = 0; i < 30; i++) {
    apply(s, ev('thread.turn', { uuid: 'u' + i, text: 'q' + i }));
    apply(s, ev('thread.text', { message: 'm' + i, block: 0, delta: 'a' + i, done: true }));
  }
  prune(s, 40);
  assert.equal(s.items.length, 2);
  assert.deepEqual(s.items.map((i) => i.text), ['q29', 'a29']);
  for (let i = 0; i < 60; i++) apply(s, ev('thread.tool', { call: 'c' + i, name: 'Bash', phase: 'started', status: 'running', summary: String(i) }));
  apply(s, ev('thread.text', { message: 'm99', block: 0, delta: 'after the tools' }));
  prune(s, 40);
  assert.equal(s.items.length, 40);
  assert.equal(s.items[0].text, 'q29');
  assert.deepEqual(s.items.filter((i) => i.kind === 'assistant').map((i) => i.text), ['a29', 'after the tools']);
  assert.equal(exchange(s.items).tool.summary, '59');
  const small = newChat('t1');
  apply(small, ev('thread.turn', { uuid: 'x', text: 'x' }));
  prune(small, 40);
  assert.equal(small.items.length, 1, 'a short list is left alone');
});
