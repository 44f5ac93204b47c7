import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keyAction, typing, changeOf, outcomeLabel, takeKeys, hasKeys } from '../.test-build/asks.js';

const permission = { asking: false, always: true, options: 0, ready: true };
const question = { asking: true, always: false, options: 3, ready: false };

test('a permission card: y allows, n denies, r asks for a reason, a is always only when offered', () => {
  assert.deepEqual(keyAction('y', permission), { action: 'allow' });
  assert.deepEqual(keyAction('Y', permission), { action: 'allow' });
  assert.deepEqual(keyAction('n', permission), { action: 'deny' });
  assert.deepEqual(keyAction('r', permission), { action: 'reason' });
  assert.deepEqual(keyAction('a', permission), { action: 'always' });
  assert.equal(keyAction('a', { ...permission, always: false }), null, 'always writes nothing: not offered');
  assert.equal(keyAction('1', permission), null);
  assert.equal(keyAction('Enter', permission), null, 'Enter never allows by accident');
  assert.equal(keyAction('x', permission), null);
});

test('a question card: 1-9 pick its options, y or Enter send once every question has an answer', () => {
  assert.deepEqual(keyAction('1', question), { action: 'pick', option: 0 });
  assert.deepEqual(keyAction('3', question), { action: 'pick', option: 2 });
  assert.equal(keyAction('4', question), null, 'no fourth option');
  assert.equal(keyAction('0', question), null);
  assert.equal(keyAction('y', question), null, 'nothing picked yet');
  assert.deepEqual(keyAction('y', { ...question, ready: true }), { action: 'answer' });
  assert.deepEqual(keyAction('Enter', { ...question, ready: true }), { action: 'answer' });
  assert.deepEqual(keyAction('n', question), { action: 'deny' });
  assert.equal(keyAction('a', question), null);
});

test('keys typed in a field are the field\'s', () => {
  assert.equal(typing({ tagName: 'TEXTAREA' }), true);
  assert.equal(typing({ tagName: 'input' }), true);
  assert.equal(typing({ tagName: 'DIV', isContentEditable: true }), true);
  assert.equal(typing({ tagName: 'BUTTON' }), false);
  assert.equal(typing(null), false);
});

test('an edit shows as old and new text; a write as all new; a multi-edit as its edits', () => {
  assert.deepEqual(changeOf('Edit', { file_path: '/w/a.rs', old_string: 'a', new_string: 'b' }), { path: '/w/a.rs', old: 'a', new: 'b', edits: null });
  assert.deepEqual(changeOf('Write', { file_path: '/w/n.md', content: 'hi\n' }), { path: '/w/n.md', old: '', new: 'hi\n', edits: null });
  assert.deepEqual(
    changeOf('MultiEdit', { file_path: '/w/m', edits: [{ old_string: '1', new_string: '2' }, { old_string: '3', new_string: '4' }] }),
    { path: '/w/m', old: '', new: '', edits: [{ old_string: '1', new_string: '2' }, { old_string: '3', new_string: '4' }] },
  );
  assert.equal(changeOf('MultiEdit', { file_path: '/w/m', edits: [] }), null);
  assert.equal(changeOf('Bash', { command: 'ls' }), null);
  assert.equal(changeOf('Edit', null), null);
});

test('an answered card says what was decided in a few words', () => {
  assert.equal(outcomeLabel('allow', false), 'Allowed');
  assert.equal(outcomeLabel('always', false), 'Always allowed in this project');
  assert.equal(outcomeLabel('deny', false), 'Denied');
  assert.equal(outcomeLabel('cancelled', false), 'Withdrawn');
  assert.equal(outcomeLabel('allow', true), 'Answered');
  assert.equal(outcomeLabel('deny', true), 'Dismissed');
});

test('the oldest open card has the keys; when it is answered the next one does', () => {
  const a = takeKeys(() => true);
  const b = takeKeys(() => true);
  assert.equal(hasKeys(a.id), true);
  assert.equal(hasKeys(b.id), false);
  a.release();
  assert.equal(hasKeys(b.id), true);
  b.release();
  assert.equal(hasKeys(b.id), false);
});
