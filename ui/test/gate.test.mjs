import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decide, editable, foldGate, holdsMask, isOpen, kindLabel, mergeItem, ofThread, openHeld, outcomeLine, placeHeld } from '../.test-build/gate.js';

/** An item as `gate.held` lists it. */
function item(id, over = {}) {
  return {
    item: id,
    thread: 't1',
    call: `toolu_${id}`,
    tool: 'Bash',
    input: { command: 'git push origin main', description: 'Push' },
    kind: 'send',
    rule: 'git-push',
    what: 'git push',
    destination: 'origin (/tmp/remote.git) · main',
    content: 'git push origin main\n\nWhat it pushes:\n...',
    truncated: false,
    field: 'command',
    state: 'held',
    edited: null,
    why: null,
    by: null,
    at: 1000,
    decided_at: null,
    ...over,
  };
}

const event = (type, payload, over = {}) => ({ id: 1, at: 5000, type, source: 'gate', project: null, thread: 't1', payload, ...over });

test('each kind says what it does to the person', () => {
  assert.equal(kindLabel('send'), 'Sends as you');
  assert.equal(kindLabel('spend'), 'Spends money');
  assert.equal(kindLabel('delete'), 'Deletes outside the folder');
  assert.equal(kindLabel('something-new'), 'Held', 'a kind added later still reads as held');
});

test('held and being decided are open; decided and withdrawn are not', () => {
  assert.ok(isOpen({ state: 'held' }));
  assert.ok(isOpen({ state: 'deciding' }));
  for (const s of ['approved', 'rejected', 'withdrawn']) assert.ok(!isOpen({ state: s }), s);
});

test('a decided item folds to one line: approved, with an edit, rejected and withdrawn with their why', () => {
  assert.equal(outcomeLine(item('a')), null);
  assert.equal(outcomeLine(item('a', { state: 'approved' })), 'Approved');
  assert.equal(outcomeLine(item('a', { state: 'approved', edited: 'git push origin main:reviewed' })), 'Approved with your edit');
  assert.equal(outcomeLine(item('a', { state: 'approved', edited: '' })), 'Approved with your edit', 'edited elsewhere: the words are not known here');
  assert.equal(outcomeLine(item('a', { state: 'rejected', why: '  not before Friday ' })), 'Rejected: not before Friday');
  assert.equal(outcomeLine(item('a', { state: 'rejected' })), 'Rejected');
  assert.equal(outcomeLine(item('a', { state: 'rejected', why: '   ' })), 'Rejected');
  assert.equal(outcomeLine(item('a', { state: 'withdrawn', why: 'the turn ended' })), 'Withdrawn: the turn ended');
});

test('the held items come oldest first, ties by id; decided ones leave the list; a thread keeps them all', () => {
  const items = {
    c: item('c', { at: 3000 }),
    b: item('b', { at: 1000 }),
    a: item('a', { at: 1000, thread: 't2' }),
    d: item('d', { at: 500, state: 'approved' }),
  };
  assert.deepEqual(openHeld(items).map((i) => i.item), ['a', 'b', 'c']);
  assert.deepEqual(ofThread(items, 't1').map((i) => i.item), ['d', 'b', 'c']);
  assert.deepEqual(ofThread(items, 't2').map((i) => i.item), ['a']);
});

test('gate.held asks for its thread to be listed (it carries no content), once', () => {
  const items = {};
  assert.deepEqual(foldGate(items, event('gate.held', { item: 'a', call: 'toolu_a', what: 'git push' })), { load: 't1' });
  assert.deepEqual(items, {}, 'nothing half-known is shown');
  items.a = item('a');
  assert.deepEqual(foldGate(items, event('gate.held', { item: 'a' })), { load: null }, 'already known');
  assert.deepEqual(foldGate(items, event('gate.held', {})), { load: null });
});

test('decisions fold into the known item: approved (edited or not), rejected with why, withdrawn', () => {
  const items = { a: item('a'), b: item('b'), c: item('c'), d: item('d') };
  foldGate(items, event('gate.approved', { item: 'a', call: 'toolu_a', by: 'device:x', edited: false }));
  assert.equal(items.a.state, 'approved');
  assert.equal(items.a.edited, null);
  assert.equal(items.a.decided_at, 5000);
  foldGate(items, event('gate.approved', { item: 'b', edited: true }));
  assert.equal(outcomeLine(items.b), 'Approved with your edit');
  foldGate(items, event('gate.rejected', { item: 'c', why: 'not before Friday' }));
  assert.equal(outcomeLine(items.c), 'Rejected: not before Friday');
  foldGate(items, event('gate.withdrawn', { item: 'd', why: 'the turn was interrupted' }));
  assert.equal(outcomeLine(items.d), 'Withdrawn: the turn was interrupted');
  // An unknown item's decision adds nothing (Needs only ever lists held ones).
  foldGate(items, event('gate.rejected', { item: 'zz', why: 'x' }));
  assert.equal(items.zz, undefined);
  // A decided item stays as decided: a late withdrawal does not rewrite an approval.
  foldGate(items, event('gate.withdrawn', { item: 'a', why: 'vyred restarted' }));
  assert.equal(items.a.state, 'approved');
});

test('an edit made here keeps its words when the event (which says only "edited") follows', () => {
  const items = { a: item('a') };
  decide(items, 'a', 'approved', { edited: 'git push origin main:reviewed' });
  assert.equal(items.a.edited, 'git push origin main:reviewed');
  foldGate(items, event('gate.approved', { item: 'a', edited: true }));
  assert.equal(items.a.edited, 'git push origin main:reviewed');
  assert.equal(items.a.state, 'approved');
});

test('a list read before a decision never undoes it; a newer list replaces what is known', () => {
  const items = { a: item('a', { state: 'rejected', why: 'no' }) };
  mergeItem(items, item('a'));
  assert.equal(items.a.state, 'rejected', 'the list was asked while it was held');
  mergeItem(items, item('a', { state: 'rejected', why: 'no', by: 'device:x' }));
  assert.equal(items.a.by, 'device:x');
  mergeItem(items, item('b'));
  assert.equal(items.b.state, 'held');
  const mine = { c: item('c', { state: 'approved', edited: 'git push origin main:x' }) };
  mergeItem(mine, item('c', { state: 'approved', edited: null }));
  assert.equal(mine.c.edited, 'git push origin main:x', 'the words edited here stay');
});

test('an edit starts from the field it replaces; a masked secret is caught before it is sent', () => {
  assert.equal(editable(item('a')), 'git push origin main');
  assert.equal(editable(item('a', { field: null })), '');
  assert.equal(editable(item('a', { tool: 'mcp__mail__send', field: 'text', input: { to: 'x@y', text: 'Hello' } })), 'Hello');
  assert.equal(editable(item('a', { field: 'body', input: { body: { a: 1 } } })), '{\n  "a": 1\n}');
  assert.equal(editable(item('a', { field: 'text', input: {} })), '');
  assert.ok(holdsMask('curl -H "Authorization: Bearer …[redacted]" https://x'));
  assert.ok(!holdsMask('git push origin main'));
});

test('each item shows after its tool row; one whose row is not there goes to the end', () => {
  const rows = [
    { key: 'u1', kind: 'user' },
    { key: 'k1', kind: 'tool', call: 'toolu_a' },
    { key: 'x1', kind: 'assistant' },
    { key: 'k2', kind: 'tool', call: 'toolu_b' },
  ];
  const a = item('a');
  const b = item('b', { state: 'approved' });
  const c = item('c');
  const placed = placeHeld(rows, [a, b, c]);
  assert.deepEqual([...placed.after.entries()].map(([k, v]) => [k, v.map((i) => i.item)]), [
    ['k1', ['a']],
    ['k2', ['b']],
  ]);
  assert.deepEqual(placed.end.map((i) => i.item), ['c']);
  // Older pages not loaded: a decided item whose row is up there stays there; a held one shows.
  const d = item('d', { state: 'rejected' });
  const older = placeHeld(rows, [c, d], true);
  assert.deepEqual(older.end.map((i) => i.item), ['c']);
  assert.deepEqual(placeHeld(rows, [c, d], false).end.map((i) => i.item), ['c', 'd']);
});
