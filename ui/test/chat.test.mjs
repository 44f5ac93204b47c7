import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newChat, apply, loadHistory, applyDetail, addAsk, addSending, openAsks, chip, loadQueued, askView } from '../.test-build/chat.js';

let n = 0;
const ev = (type, payload, thread = 't1') => ({ id: ++n, at: Date.now(), type, source: 'threads', project: null, thread, payload });

test('a streamed turn: the prompt, reasoning, text deltas and a tool row keyed by call', () => {
  const s = newChat('t1');
  apply(s, ev('thread.started', { provider: 'claude', model: 'claude-sonnet', auth: 'api-key', cwd: '/w' }));
  apply(s, ev('thread.turn', { uuid: 'u1', text: 'hello', turn: 't1:1' }));
  apply(s, ev('thread.state', { state: 'running' }));
  apply(s, ev('thread.text', { message: 'm1', block: 0, delta: 'hmm', kind: 'reasoning' }));
  apply(s, ev('thread.text', { message: 'm1', block: 1, delta: 'reply ' }));
  apply(s, ev('thread.text', { message: 'm1', block: 1, delta: 'to [hello]' }));
  apply(s, ev('thread.tool', { id: 'c1', call: 'c1', name: 'Bash', phase: 'started', status: 'running', summary: 'ls' }));
  apply(s, ev('thread.tool', { id: 'c1', call: 'c1', name: 'Bash', phase: 'done', status: 'completed' }));
  apply(s, ev('thread.text', { message: 'm1', block: 1, done: true }));
  assert.equal(s.running, true);
  apply(s, ev('thread.finished', { ok: true, total_cost_usd: 0.01 }));
  assert.equal(s.running, false);
  assert.deepEqual(s.items.map((i) => i.kind), ['user', 'reasoning', 'assistant', 'tool']);
  assert.equal(s.items[2].text, 'reply to [hello]');
  assert.equal(s.items[2].done, true);
  assert.equal(s.items[3].status, 'completed');
  assert.equal(s.items[3].summary, 'ls');
  assert.equal(chip(s), 'Claude · claude-sonnet · api-key');
  assert.equal(s.cost, 0.01);
});

test('events already applied are ignored (replay after a reconnect)', () => {
  const s = newChat('t1');
  const e = ev('thread.text', { message: 'm9', block: 0, delta: 'once' });
  apply(s, e);
  apply(s, e);
  assert.equal(s.items[0].text, 'once');
});

test('history first, then the events: nothing shows twice, live turns come from events', () => {
  const s = newChat('t1');
  loadHistory(s, {
    thread: 't1', title: 'A title', cwd: '/w',
    turns: [
      { key: 'u1', uuid: 'u1', role: 'user', text: 'hello', at: 1, live: false },
      { key: 'm1', uuid: null, role: 'assistant', text: 'reply to [hello]', at: 2, live: false },
      { key: 'u2', uuid: 'u2', role: 'user', text: 'more', at: 3, live: true },
    ],
  });
  apply(s, ev('thread.turn', { uuid: 'u1', text: 'hello' }));
  apply(s, ev('thread.text', { message: 'm1', block: 0, delta: 'reply to [hello]' }));
  apply(s, ev('thread.turn', { uuid: 'u2', text: 'more' }));
  apply(s, ev('thread.text', { message: 'm2', block: 0, delta: 'reply to [more]' }));
  assert.deepEqual(s.items.map((i) => [i.kind, i.text]), [
    ['user', 'hello'], ['assistant', 'reply to [hello]'], ['user', 'more'], ['assistant', 'reply to [more]'],
  ]);
  assert.equal(s.title, 'A title');
});

test('a message sent here is shown at once and confirmed by its event; a steer is marked', () => {
  const s = newChat('t1');
  addSending(s, 'u5', 'first');
  apply(s, ev('thread.turn', { uuid: 'u5', text: 'first' }));
  assert.equal(s.items.length, 1);
  assert.equal(s.items[0].status, undefined);
  addSending(s, 'u6', 'steer me');
  apply(s, ev('thread.sent', { uuid: 'u6', text: 'steer me', via: 'steer' }));
  assert.equal(s.items[1].status, 'steer');
  apply(s, ev('thread.steered', { uuid: 'u6' }));
  assert.equal(s.items[1].status, 'taken');
});

test('asks: raised inline, answered, and open ones from threads.get not doubled', () => {
  const s = newChat('t1');
  applyDetail(s, { provider: 'claude', model: null, auth: 'setup-token', mode: 'plan', state: 'waiting', cwd: '/w', total_cost_usd: 0, asks: [] });
  assert.equal(s.mode, 'plan');
  assert.equal(s.running, true);
  apply(s, ev('ask.raised', { ask: 'a1', kind: 'permission', tool: 'Bash', summary: 'rm -rf build', call: 'c1' }));
  addAsk(s, { ask: 'a1', kind: 'permission', tool: 'Bash', summary: 'rm -rf build', status: 'open' });
  assert.equal(openAsks(s).length, 1);
  apply(s, ev('ask.answered', { ask: 'a1', decision: 'allow' }));
  assert.equal(openAsks(s).length, 0);
  assert.equal(s.items[0].status, 'allow');
  apply(s, ev('ask.raised', { ask: 'a2', kind: 'question', tool: 'AskUserQuestion', summary: 'q', input: { questions: [{ question: 'Which?', options: [{ label: 'Blue' }, 'Red'] }] } }));
  assert.deepEqual(openAsks(s)[0].questions[0].options.map((o) => o.label), ['Blue', 'Red']);
  assert.equal(chip(s), 'Claude · default model · setup-token');
});

test('queued messages: listed, edited, taken back', () => {
  const s = newChat('t1');
  apply(s, ev('thread.queued', { queued: 7, uuid: 'q1', text: 'later' }));
  apply(s, ev('thread.queued', { queued: 8, uuid: 'q2', text: 'also' }));
  apply(s, ev('thread.queued', { queued: 7, uuid: 'q1', text: 'later, edited', edited: true }));
  assert.deepEqual(s.queued.map((q) => q.text), ['later, edited', 'also']);
  apply(s, ev('thread.unqueued', { queued: 8, uuid: 'q2', reason: 'unqueued' }));
  assert.deepEqual(s.queued.map((q) => q.queued), [7]);
  // One held for a terminal says why.
  apply(s, ev('thread.queued', { queued: 9, uuid: 'q3', text: 'held', reason: 'live in a terminal' }));
  assert.deepEqual(s.queued.map((q) => q.status), ['queued', 'held']);
});

test('the queue comes from threads.get, whatever the replayed events held', () => {
  const s = newChat('t1');
  apply(s, ev('thread.queued', { queued: 3, uuid: 'old', text: 'ran long ago' }));
  loadQueued(s, { queued: [
    { queued: 4, uuid: 'q4', text: 'next', status: 'queued', created_at: 1 },
    { queued: 5, uuid: 'q5', text: 'for the terminal', status: 'held', created_at: 2 },
  ] });
  assert.deepEqual(s.queued.map((q) => [q.queued, q.status]), [[4, 'queued'], [5, 'held']]);
  apply(s, ev('thread.unqueued', { queued: 4, reason: 'taken' }));
  assert.deepEqual(s.queued.map((q) => q.queued), [5]);
  // An older vyred without `queued` leaves the events' queue alone.
  loadQueued(s, {});
  assert.deepEqual(s.queued.map((q) => q.queued), [5]);
});

test('thread.model changes the chip; null is the default model', () => {
  const s = newChat('t1');
  apply(s, ev('thread.started', { provider: 'claude', model: 'opus', auth: 'api-key' }));
  apply(s, ev('thread.model', { model: 'haiku' }));
  assert.equal(chip(s), 'Claude · haiku · api-key');
  apply(s, ev('thread.model', { model: null }));
  assert.equal(chip(s), 'Claude · default model · api-key');
});

test('an ask shows what the tool would do: a command, a file, an MCP tool\'s input', () => {
  const s = newChat('t1');
  apply(s, ev('ask.raised', { ask: 'b1', kind: 'permission', tool: 'Bash', summary: 'run it', input: { command: 'touch x', description: 'run it' } }));
  assert.deepEqual(openAsks(s)[0].input, { command: 'touch x', description: 'run it' });
  assert.deepEqual(askView('Bash', { command: 'touch x', description: 'run it' }, 'run it'), { name: 'Bash', server: null, code: 'touch x', note: 'run it' });
  assert.deepEqual(askView('Bash', { command: 'ls' }, 'Bash'), { name: 'Bash', server: null, code: 'ls', note: null });
  assert.equal(askView('Write', { file_path: '/w/a.txt', content: 'hi' }, 'Write').code, '/w/a.txt');
  assert.equal(askView('Edit', { file_path: '/w/b.rs', old_string: 'a', new_string: 'b' }, 'Edit').code, '/w/b.rs');
  assert.deepEqual(askView('mcp__plugin_vyre_vyre__threads_send', { thread: 't2', text: 'hi' }, 'mcp__plugin_vyre_vyre__threads_send'), {
    name: 'threads_send',
    server: 'vyre',
    code: '{"thread":"t2","text":"hi"}',
    note: null,
  });
  assert.equal(askView('mcp__github__search', {}, 'x').code, null);
  assert.equal(askView('mcp__github__search', {}, 'x').server, 'github');
  assert.equal(askView('AskUserQuestion', { questions: [] }, 'AskUserQuestion').code, null);
  assert.equal(askView('Bash', null, 'run it').code, null);
});

test('an interrupt ends the turn with a notice; a rewind drops what came after', () => {
  const s = newChat('t1');
  apply(s, ev('thread.turn', { uuid: 'u1', text: 'one' }));
  apply(s, ev('thread.text', { message: 'm1', block: 0, delta: 'a' }));
  apply(s, ev('thread.turn', { uuid: 'u2', text: 'two' }));
  apply(s, ev('thread.text', { message: 'm2', block: 0, delta: 'slow0 ' }));
  apply(s, ev('thread.finished', { ok: false, canceled: true, reason: 'interrupt' }));
  assert.equal(s.running, false);
  assert.equal(s.items.at(-1).text, 'Interrupted.');
  assert.equal(s.items.find((i) => i.key === 't:m2:0').done, true);
  apply(s, ev('thread.rewound', { uuid: 'u1', at: 'u1' }));
  assert.deepEqual(s.items.map((i) => i.kind), ['user', 'notice']);
});

test('mode changes and notices', () => {
  const s = newChat('t1');
  apply(s, ev('mode.changed', { mode: 'acceptEdits' }));
  assert.equal(s.mode, 'acceptEdits');
  apply(s, ev('thread.notice', { level: 'warn', text: 'fell back' }));
  apply(s, ev('thread.denied', { tool: 'Bash', reason: 'the floor', by: 'floor' }));
  assert.deepEqual(s.items.map((i) => i.level), ['warn', 'warn']);
});
