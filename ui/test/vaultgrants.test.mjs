// Who may use a vault item (lib/vaultgrants.ts): grantees in words, what "Grant to…" offers, and
// the question before a grant, which says the grantee uses it without seeing it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { grantChoices, grantQuestion, granteeLabel, sameGrantee } from '../.test-build/vaultgrants.js';

test('grantees in words', () => {
  assert.equal(granteeLabel('module:sessions'), 'Sessions');
  assert.equal(granteeLabel('sessions'), 'Sessions');
  assert.equal(granteeLabel('agent:mail'), 'Agent mail');
  assert.equal(granteeLabel('watcher:news'), 'Watcher news');
  assert.equal(granteeLabel('module:gate'), 'gate');
  assert.equal(granteeLabel('gate'), 'gate');
  assert.equal(sameGrantee('sessions', 'module:sessions'), true);
  assert.equal(sameGrantee('agent:a', 'agent:b'), false);
});

test('Grant to offers sessions, the agents, the watchers, by name, less those granted already', () => {
  const agents = [{ name: 'zed' }, { name: 'assistant' }];
  const watchers = [{ name: 'news' }];
  assert.deepEqual(grantChoices(agents, watchers, []).map((c) => c.to), ['sessions', 'agent:assistant', 'agent:zed', 'watcher:news']);
  assert.deepEqual(grantChoices(agents, watchers, ['module:sessions', 'agent:zed']).map((c) => c.label), ['Agent assistant', 'Watcher news']);
  assert.deepEqual(grantChoices([], [], []), [{ to: 'sessions', label: 'Sessions' }], 'just sessions when the lists failed');
  assert.deepEqual(grantChoices([], [], ['module:sessions']), []);
});

test('the question before a grant says the grantee will use it without seeing it', () => {
  const s = grantQuestion({ name: 'github', kind: 'login' }, 'sessions');
  assert.equal(s.title, 'Grant “github” to sessions?');
  assert.match(s.body, /^Claude Code sessions on this machine will be able to use it without seeing it/);
  const a = grantQuestion({ name: 'github', kind: 'login' }, 'agent:mail');
  assert.equal(a.title, 'Grant “github” to the agent “mail”?');
  assert.match(a.body, /^The agent “mail” will be able to use it without seeing it/);
  assert.doesNotMatch(a.body, /environment/);
  assert.match(a.body, /Its sessions, and no others, can name it as \{\{vault:github\}\} in a request the Gate sends once you approve it\./);
  const e = grantQuestion({ name: 'deploy', kind: 'env' }, 'agent:mail');
  assert.match(e.body, /can name a variable as \{\{vault:deploy\/VAR\}\} in a request the Gate sends/);
  const w = grantQuestion({ name: 'news-env', kind: 'env' }, 'watcher:news');
  assert.equal(w.title, 'Grant “news-env” to the watcher “news”?');
  assert.match(w.body, /without seeing it.*gets the variables as its environment variables when it runs\. You can revoke it here at any time\.$/);
  assert.match(grantQuestion({ name: 'k', kind: 'secret' }, 'watcher:news').body, /Its program is handed it when it runs\./);
});

test('a pass another Vyre gave is offered to the Gate only, and the question says the giver puts the value in', () => {
  assert.deepEqual(grantChoices([{ name: 'mail' }], [{ name: 'news' }], [], 'pass'), [{ to: 'gate', label: 'The Gate' }]);
  assert.deepEqual(grantChoices([], [], ['module:gate'], 'pass'), [], 'not offered twice');
  assert.deepEqual(grantChoices([], [], [], 'login').map((c) => c.to), ['sessions'], 'other kinds as before');
  const q = grantQuestion({ name: 'sams-github', kind: 'pass' }, 'gate');
  assert.equal(q.title, 'Grant “sams-github” to the Gate?');
  assert.match(q.body, /^Requests you approve that name \{\{vault:sams-github\}\} will go through the giver’s Vyre, which puts the value in/);
});
