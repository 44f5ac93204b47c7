import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  newChat, apply, applyDetail, addSending, answersOf, markFailed, openAsks, chip, loadQueued, askView, loadPage, loadOlder, visible, lastMessage, firstWords, questionsOf, toolView,
} from '../.test-build/chat.js';

let n = 0;
const ev = (type, payload, thread = 't1') => ({ id: ++n, at: Date.now(), type, source: 'threads', project: null, thread, payload });
const item = (it) => ev('thread.item', { item: it });
const user = (uuid, text, via = 'person') => ({ kind: 'user', key: uuid, at: 1, uuid, text, via, images: 0 });
const words = (message, block, text, done = false) => ({ kind: 'assistant', key: `m:${message}:${block}`, at: 2, message, text, done });
const tool = (call, over = {}) => ({ kind: 'tool', key: `tool:${call}`, at: 3, call, name: 'Bash', input: { command: 'ls', description: 'List files' }, summary: 'ls', status: 'running', auto: true, ...over });

test('a streamed turn: items by thread.item, words by thread.text deltas into their item', () => {
  const s = newChat('t1');
  apply(s, ev('thread.started', { provider: 'claude', model: 'claude-sonnet', auth: 'api-key', cwd: '/w' }));
  apply(s, item(user('u1', 'hello')));
  apply(s, ev('thread.turn', { uuid: 'u1', text: 'hello', turn: 't1:1' }));
  assert.equal(s.running, true);
  apply(s, ev('thread.text', { message: 'm1', block: 0, delta: 'reply ' }));
  apply(s, item(words('m1', 0, 'reply ')));
  apply(s, ev('thread.text', { message: 'm1', block: 0, delta: 'to [hello]' }));
  apply(s, item(tool('c1')));
  apply(s, item(tool('c1', { status: 'completed', output: 'a\nb', output_bytes: 3, exit: 0, duration_ms: 12 })));
  apply(s, item(words('m1', 0, 'reply to [hello]', true)));
  apply(s, ev('thread.finished', { ok: true, total_cost_usd: 0.01 }));
  assert.equal(s.running, false);
  assert.deepEqual(s.items.map((i) => i.key), ['u1', 'm:m1:0', 'tool:c1']);
  assert.equal(s.items[1].text, 'reply to [hello]');
  assert.equal(s.items[1].done, true);
  assert.equal(s.items[2].status, 'completed');
  assert.equal(s.items[2].output, 'a\nb');
  assert.equal(chip(s), 'Claude · claude-sonnet · api-key');
  assert.equal(s.cost, 0.01);
});

test('the page and the events after it: older events are ignored, the rest upserts', () => {
  const s = newChat('t1');
  n = 100;
  loadPage(s, { items: [user('u1', 'hello'), words('m1', 0, 'reply ', false)], before: null, last_event: 100 });
  // An event the page already holds, replayed from the stream's buffer.
  apply(s, { ...ev('thread.text', { message: 'm1', block: 0, delta: 'reply ' }), id: 99 });
  assert.equal(s.items[1].text, 'reply ');
  apply(s, ev('thread.text', { message: 'm1', block: 0, delta: 'to [hello]' }));
  const e = ev('thread.text', { message: 'm1', block: 0, delta: '!' });
  apply(s, e);
  apply(s, e);
  assert.equal(s.items[1].text, 'reply to [hello]!', 'each delta once');
  // A very long text's event carries its start only: the whole one here stays.
  apply(s, item({ ...words('m1', 0, 'reply', true), truncated: true }));
  assert.equal(s.items[1].text, 'reply to [hello]!');
  assert.equal(s.items[1].done, true);
});

test('older pages go above, without doubles; the cursor follows', () => {
  const s = newChat('t1');
  loadPage(s, { items: [user('u3', 'three'), words('m3', 0, 'c', true)], before: 3, last_event: 10 });
  loadOlder(s, { items: [user('u1', 'one'), words('m1', 0, 'a', true), user('u3', 'three')], before: null, last_event: 10 });
  assert.deepEqual(s.items.map((i) => i.key), ['u1', 'm:m1:0', 'u3', 'm:m3:0']);
  assert.equal(s.before, null);
});

test('a message sent here is shown at once and replaced by its item; a failed one says so', () => {
  const s = newChat('t1');
  addSending(s, 'u5', 'first');
  assert.equal(s.items[0].status, 'sending');
  // A page read before vyred had it keeps the message being sent at the end.
  loadPage(s, { items: [user('u0', 'before')], before: null, last_event: 0 });
  assert.deepEqual(s.items.map((i) => i.key), ['u0', 'u5']);
  apply(s, item(user('u5', 'first')));
  assert.equal(s.items[1].status, undefined);
  addSending(s, 'u6', 'steer me');
  apply(s, item(user('u6', 'steer me', 'steer')));
  assert.equal(s.items[2].via, 'steer');
  addSending(s, 'u7', 'lost');
  markFailed(s, 'u7');
  assert.equal(s.items[3].status, 'failed');
});

test('Vyre\'s own instructions are hidden and never the title nor what Retry sends', () => {
  const items = [user('g1', 'Greet them as Juno', 'internal'), words('m1', 0, 'Hello Sam!', true)];
  assert.deepEqual(visible(items).map((i) => i.key), ['m:m1:0']);
  assert.equal(visible(items, true).length, 2);
  assert.equal(firstWords(items), '');
  assert.equal(lastMessage(items), null);
  items.push(user('u2', 'FAIL500 now'), { kind: 'notice', key: 'n:9', at: 4, level: 'error', code: 'api_error', text: 'Claude\'s API failed.', retryable: true });
  assert.equal(firstWords(items), 'FAIL500 now');
  assert.equal(lastMessage(items), 'FAIL500 now');
});

test('asks come as items, open and then answered with their decision', () => {
  const s = newChat('t1');
  applyDetail(s, { provider: 'claude', model: null, auth: 'setup-token', mode: 'plan', state: 'waiting', cwd: '/w', total_cost_usd: 0, asks: [] });
  assert.equal(s.mode, 'plan');
  assert.equal(s.running, true);
  const ask = { kind: 'ask', key: 'ask:a1', at: 5, ask: 'a1', ask_kind: 'tool', tool: 'Bash', call: 'c1', summary: 'rm -rf build', input: { command: 'rm -rf build' }, questions: [], status: 'open' };
  apply(s, item(ask));
  assert.equal(openAsks(s).length, 1);
  apply(s, item({ ...ask, status: 'answered', decision: 'deny', message: 'not that' }));
  assert.equal(openAsks(s).length, 0);
  assert.equal(s.items[0].decision, 'deny');
  assert.deepEqual(answersOf({ answers: { 'Which?': 'Red', 'Both?': ['A', 'B'], odd: 3 } }), [['Which?', 'Red'], ['Both?', 'A, B']]);
  assert.deepEqual(answersOf({}), []);
  const q = { input: { questions: [{ question: 'Which?', options: [{ label: 'Blue' }, 'Red'] }] } };
  assert.deepEqual(questionsOf(q)[0].options.map((o) => o.label), ['Blue', 'Red']);
  assert.equal(chip(s), 'Claude · default model · setup-token');
});

test('a tool row shows the command, not its description, with counts, duration and size', () => {
  const bash = toolView(tool('c1', { input: { command: 'cargo test --all', description: 'Run the tests' }, summary: 'Run the tests', status: 'completed', exit: 0, duration_ms: 2400, output: 'ok', output_bytes: 20480, output_truncated: true }));
  assert.equal(bash.what, 'cargo test --all');
  assert.equal(bash.description, 'Run the tests');
  assert.equal(bash.duration, '2.4 s');
  assert.equal(bash.size, '20.0 KB');
  assert.equal(bash.input, null, 'a short command is the row itself');
  const grep = toolView(tool('c2', { name: 'Grep', input: { pattern: 'fn main', path: 'src' }, summary: 'fn main', status: 'completed', output: 'src/a.rs\nsrc/b.rs\n', duration_ms: 40 }));
  assert.equal(grep.what, 'fn main in src');
  assert.equal(grep.count, '2 files');
  assert.equal(grep.duration, '40 ms');
  const read = toolView(tool('c3', { name: 'Read', input: { file_path: '/w/a.md' }, summary: 'a.md', status: 'completed', output: '1\n2\n3' }));
  assert.deepEqual([read.what, read.count], ['/w/a.md', '3 lines']);
  const mcp = toolView(tool('c4', { name: 'mcp__github__search', input: { q: 'x' }, summary: 'search' }));
  assert.equal(mcp.name, 'search');
  assert.equal(toolView(tool('c5', { name: 'AskUserQuestion', input: { questions: [{ question: 'Which?', options: [] }] }, summary: '' })).what, 'Which?');
  assert.equal(toolView(tool('c6', { name: 'Task', input: { description: 'Find the bug', prompt: 'long words' }, summary: 'Task' })).what, 'Find the bug');
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

test('a thread\'s effort is said in the chip once chosen: at the start, changed, back to the default', () => {
  const s = newChat('t1');
  apply(s, ev('thread.started', { provider: 'codex', model: null, effort: 'high', auth: 'api-key' }));
  assert.equal(chip(s), 'Codex · default model · high effort · api-key');
  apply(s, ev('thread.effort', { effort: 'max' }));
  assert.equal(s.effort, 'max');
  apply(s, ev('thread.effort', { effort: null }));
  assert.equal(chip(s), 'Codex · default model · api-key');
  // A resumed session started without one says so too.
  apply(s, ev('thread.effort', { effort: 'low' }));
  apply(s, ev('thread.started', { provider: 'codex', model: null, auth: 'api-key' }));
  assert.equal(s.effort, null);
});

test('the chip names an ACP agent readably, and Claude as before', () => {
  const s = newChat('t1');
  apply(s, ev('thread.started', { provider: 'acp-gemini', model: null, auth: 'own' }));
  assert.equal(chip(s), 'gemini (ACP) · default model', 'an agent signing in its own way says nothing of it');
  assert.equal(chip({ provider: 'acp-claude', model: 'sonnet', auth: 'api-key' }), 'claude (ACP) · sonnet · api-key');
  assert.equal(chip({ provider: 'claude', model: null, auth: '' }), 'Claude · default model');
  assert.equal(chip({ provider: '', model: null, auth: '' }), 'Claude · default model');
});

test('an ask shows what the tool would do: a command, a file, an MCP tool\'s input', () => {
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
  // Codex's questions are choices too, not JSON.
  assert.equal(askView('request_user_input', { questions: [{ question: 'Which?', options: [] }] }, 'request_user_input').code, null);
  assert.equal(askView('Bash', null, 'run it').code, null);
});

test('a rewind drops what came after the message', () => {
  const s = newChat('t1');
  apply(s, item(user('u1', 'one')));
  apply(s, item(words('m1', 0, 'a', true)));
  apply(s, item(user('u2', 'two')));
  apply(s, item({ kind: 'notice', key: 'n:5', at: 5, level: 'info', code: 'interrupted', text: 'Interrupted.' }));
  apply(s, ev('thread.rewound', { uuid: 'u1', at: 'u1' }));
  assert.deepEqual(s.items.map((i) => i.key), ['u1']);
});

test('mode changes', () => {
  const s = newChat('t1');
  apply(s, ev('mode.changed', { mode: 'acceptEdits' }));
  assert.equal(s.mode, 'acceptEdits');
});
