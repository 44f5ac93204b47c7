import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LINK_ALLOW, downloadBase, linkAllows } from '../.test-build/boxes.js';

test('a box\'s thread offers what its link lets this machine call there, and nothing else', () => {
  // What reads the thread (its whole tool output, its slash commands, its folder's files) is
  // offered as for a thread here.
  for (const t of ['threads.timeline', 'threads.get', 'threads.send', 'threads.interrupt', 'threads.answer', 'threads.output', 'threads.commands', 'threads.files', 'files.preview', 'files.fetch']) assert.equal(linkAllows(t), true, t);
  // Renaming, the model, the mode, forking, ending, rewinding and the queue's edits are refused
  // on the box by default (`not_federated`): not offered.
  for (const t of ['threads.rename', 'threads.model', 'threads.mode', 'threads.fork', 'threads.stop', 'threads.rewind', 'threads.edit', 'threads.unqueue', 'threads.send_now', 'vault.list']) {
    assert.equal(linkAllows(t), false, t);
  }
  assert.equal(linkAllows('filesx.preview'), false, '`files.*` is that module only');
  assert.equal(linkAllows('threads.rename', [...LINK_ALLOW, 'threads.rename']), true, 'a box that allows more');
  assert.equal(linkAllows('threads.get', []), false, '`[]` allows nothing');
});

test('a download from the box is followed at the box\'s own address', () => {
  assert.equal(downloadBase('127.0.0.1:4477'), 'http://127.0.0.1:4477');
  assert.equal(downloadBase('http://10.0.0.2:4477/'), 'http://10.0.0.2:4477');
  for (const a of ['', '  ', null, undefined]) assert.equal(downloadBase(a), '', String(a));
});
