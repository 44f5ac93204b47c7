import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_PROVIDER, PURPOSES, modelChoices, providerChoices, providerLabel, purposeChoice } from '../.test-build/providers.js';

test('a provider as a person reads it: Claude, an ACP agent by its name', () => {
  assert.equal(providerLabel('claude'), 'Claude');
  assert.equal(providerLabel('acp-gemini'), 'gemini (ACP)');
  assert.equal(providerLabel('acp-claude'), 'claude (ACP)');
  assert.equal(providerLabel('acp-my-agent'), 'my-agent (ACP)');
  // Nothing said is Claude, the default; another provider is capitalised, as the chip always did.
  assert.equal(providerLabel(''), 'Claude');
  assert.equal(providerLabel(null), 'Claude');
  assert.equal(providerLabel(undefined), 'Claude');
  assert.equal(providerLabel('codex'), 'Codex');
  assert.equal(providerLabel('acp-'), 'Acp-', 'no agent name: not "(ACP)" alone');
});

test('the "Runs on" choices: Claude Code first and the default, then the others in vyred\'s order', () => {
  assert.equal(DEFAULT_PROVIDER, 'claude');
  const caps = { streaming: true, resume: true, interrupt: true, modes: false, questions: false, transcripts: false };
  const list = [
    { name: 'acp-gemini', driver: 'acp', capabilities: caps },
    { name: 'acp-claude', driver: 'acp', capabilities: caps },
    { name: 'claude', driver: 'claude-cli-stream-json', capabilities: caps },
  ];
  assert.deepEqual(providerChoices(list), [
    { name: 'claude', label: 'Claude Code' },
    { name: 'acp-gemini', label: 'gemini (ACP)' },
    { name: 'acp-claude', label: 'claude (ACP)' },
  ]);
  assert.deepEqual(providerChoices([{ name: 'claude' }]), [{ name: 'claude', label: 'Claude Code' }]);
  assert.deepEqual(providerChoices([]), []);
  // Each once, and a nameless one left out.
  assert.deepEqual(providerChoices([{ name: 'claude' }, { name: 'claude' }, { name: '' }]).map((c) => c.name), ['claude']);
});

test('the model menu names Claude Code\'s models only on its threads', () => {
  assert.deepEqual(modelChoices('claude'), ['opus', 'sonnet', 'haiku']);
  assert.deepEqual(modelChoices(null), ['opus', 'sonnet', 'haiku'], 'nothing said is Claude');
  assert.deepEqual(modelChoices('codex'), []);
  assert.deepEqual(modelChoices('acp-gemini'), []);
});

test('a purpose\'s provider and model as sessions.models.set takes them', () => {
  // Claude Code and no model: the choice is cleared, back to the config's or the default.
  assert.deepEqual(purposeChoice('chat', 'claude', '  '), { purpose: 'chat' });
  assert.deepEqual(purposeChoice('chat', 'claude', ' opus '), { purpose: 'chat', model: 'opus' });
  // Another provider with no model runs on its own default.
  assert.deepEqual(purposeChoice('capsule', 'codex', ''), { purpose: 'capsule', provider: 'codex' });
  assert.deepEqual(purposeChoice('job', 'codex', 'gpt-x'), { purpose: 'job', provider: 'codex', model: 'gpt-x' });
  // Every purpose vyred knows is named once, Lumen's as Lumen.
  assert.deepEqual(PURPOSES.map((p) => p.purpose).sort(), ['agent', 'capsule', 'chat', 'job', 'learn', 'memory', 'planner', 'project']);
  assert.equal(PURPOSES.find((p) => p.purpose === 'capsule').label, 'Lumen');
});
