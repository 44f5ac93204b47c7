import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tilde, headerFolder } from '../.test-build/paths.js';

test('a folder under the home is shown from ~', () => {
  assert.equal(tilde('/home/ada/src/app', '/home/ada'), '~/src/app');
  assert.equal(tilde('/home/ada', '/home/ada/'), '~');
  assert.equal(tilde('/home/adam/x', '/home/ada'), '/home/adam/x');
  assert.equal(tilde('/srv/x', null), '/srv/x');
  assert.equal(tilde('/srv/x', '/'), '/srv/x');
});

test('an agent\'s own folder is Vyre\'s, not shown in a header', () => {
  assert.equal(headerFolder('/home/ada/.vyre/agents/juno', '/home/ada', 'juno'), null);
  assert.equal(headerFolder('/var/lib/vyre/agents/juno/', '/home/ada', 'juno'), null);
  assert.equal(headerFolder('/home/ada/src/app', '/home/ada', 'juno'), '~/src/app', 'an agent working in a project folder shows it');
  assert.equal(headerFolder('/home/ada/agents/juno', '/home/ada', null), '~/agents/juno', 'not an agent\'s thread');
  assert.equal(headerFolder(null, '/home/ada', null), null);
});
