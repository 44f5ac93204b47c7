// Passes in the Vault screen (lib/vaultpasses.ts): what Share… and Add a pass send (or what is
// missing, said before anything is sent), and passes, keys, revokes and offboardings in words.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  SHARE_DEFAULTS,
  acceptProblem,
  acceptedWords,
  codeKind,
  durationWords,
  fromWords,
  holders,
  keyWords,
  offboardWords,
  passKindLabel,
  passStateWords,
  passUseWords,
  passesOf,
  revokeQuestion,
  shareInput,
  useWords,
} from '../.test-build/vaultpasses.js';

const now = Date.UTC(2026, 11, 4, 12, 0);
const pass = (over = {}) => ({ id: 'p1', item: 'github', to: 'Sam', kind: 'relayed', created_at: now - 3600_000, created_by: 'browser:x', revoked_at: null, uses: 0, last_used_at: null, ...over });

test('Share… sends who and how: relayed with or without an address, sealed with the key', () => {
  assert.deepEqual(shareInput('github', { ...SHARE_DEFAULTS, to: '  Sam ' }), { input: { name: 'github', to: 'Sam' } }, 'relayed by default, no address');
  assert.deepEqual(shareInput('github', { ...SHARE_DEFAULTS, to: 'Sam', url: ' https://vyre.example.com ' }), { input: { name: 'github', to: 'Sam', url: 'https://vyre.example.com' } });
  assert.deepEqual(shareInput('github', { ...SHARE_DEFAULTS, to: 'Sam', how: 'sealed', key: ' vyre-key-1.abc\n', url: 'https://ignored.example' }), {
    input: { name: 'github', to: 'Sam', sealed_for: 'vyre-key-1.abc' },
  });
});

test('Share… says what is missing before anything is sent', () => {
  assert.match(shareInput('github', { ...SHARE_DEFAULTS, to: '  ' }).problem, /^Say who it is for/);
  assert.match(shareInput('github', { ...SHARE_DEFAULTS, to: 'Sam', how: 'sealed' }).problem, /^Paste the key their Vyre made/);
  assert.match(shareInput('github', { ...SHARE_DEFAULTS, to: 'Sam', how: 'sealed', key: 'vyre-pass-1.xyz' }).problem, /a pass’s code, not a key/);
  assert.match(shareInput('github', { ...SHARE_DEFAULTS, to: 'Sam', how: 'sealed', key: 'hello' }).problem, /not a key for a sealed pass/);
});

test('a code is a relayed or a sealed pass by how it begins; the accept form says what is wrong', () => {
  assert.equal(codeKind(' vyre-pass-1.eyJ2'), 'relayed');
  assert.equal(codeKind('vyre-sealed-1.AAAA'), 'sealed');
  assert.equal(codeKind('vyre-key-1.AAAA'), null);
  assert.equal(codeKind(''), null);
  assert.equal(acceptProblem('', 'x'), 'Paste the code you were given.');
  assert.match(acceptProblem('vyre-key-1.AAAA', 'x'), /^That is a key, not a pass/);
  assert.match(acceptProblem('hello', 'x'), /^That is not a pass’s code/);
  assert.equal(acceptProblem('vyre-pass-1.eyJ2', ' '), 'Give it a name in your vault.');
  assert.equal(acceptProblem(' vyre-sealed-1.AAAA ', 'mine'), null);
});

test('what an accepted pass became', () => {
  assert.match(acceptedWords({ name: 'sams-github', pass: 'relayed', kind: 'pass', from: 'http://127.0.0.1:7777' }), /^Added “sams-github”, a pass from http:\/\/127\.0\.0\.1:7777\. Its value stays with the giver: grant it to the Gate/);
  assert.match(acceptedWords({ name: 'copy', pass: 'sealed', kind: 'login', from: 'a sealed pass' }), /^Added “copy” \(login\), a sealed copy: .*the key it was made for is used up\.$/);
});

test('a key is good for so long', () => {
  assert.equal(durationWords(3600), '1 hour');
  assert.equal(durationWords(7200 + 600), '2 hours 10 min');
  assert.equal(durationWords(2700), '45 min');
  assert.equal(durationWords(30), '30 s');
  assert.equal(durationWords(-5), '0 s');
  assert.match(keyWords({ expires_in_s: 3600 }), /^Good for 1 hour, once, and only until your Vyre restarts\./);
});

test('a pass in words: its kind, uses, when given or revoked', () => {
  assert.equal(passKindLabel('relayed'), 'Relayed');
  assert.equal(passKindLabel('sealed'), 'Sealed');
  assert.equal(passUseWords(pass(), now, 'UTC'), 'Never used');
  assert.equal(passUseWords(pass({ uses: 1, last_used_at: now - 60_000 }), now, 'UTC'), 'Used once, last today 11:59');
  assert.equal(passUseWords(pass({ uses: 3, last_used_at: now - 86400_000 }), now, 'UTC'), 'Used 3 times, last yesterday 12:00');
  assert.equal(passUseWords(pass({ kind: 'sealed' }), now, 'UTC'), 'A copy: its uses are not seen here');
  assert.equal(passStateWords(pass(), now, 'UTC'), 'Given today 11:00, not taken yet');
  assert.equal(passStateWords(pass({ taken_at: now - 1800_000 }), now, 'UTC'), 'Taken today 11:30');
  assert.equal(passStateWords(pass({ kind: 'sealed' }), now, 'UTC'), 'Given today 11:00');
  assert.equal(passStateWords(pass({ revoked_at: now - 120_000, taken_at: now - 1800_000 }), now, 'UTC'), 'Revoked today 11:58');
});

test('an item\'s passes, and who holds one that stands, by name', () => {
  const all = [pass(), pass({ id: 'p2', item: 'aws', to: 'Ana' }), pass({ id: 'p3', to: 'Bo', revoked_at: now }), pass({ id: 'p4', item: 'aws', to: 'Sam' })];
  assert.deepEqual(passesOf(all, 'github').map((p) => p.id), ['p1', 'p3']);
  assert.deepEqual(passesOf(all, 'nothing'), []);
  assert.deepEqual(holders(all), ['Ana', 'Sam'], 'Bo\'s only pass is revoked; Sam once');
});

test('the question before a revoke: a relayed pass ends at once, a sealed copy stays with them', () => {
  const r = revokeQuestion(pass());
  assert.equal(r.title, 'Revoke Sam’s pass to “github”?');
  assert.match(r.body, /end at once\. The value never left this Vyre\./);
  const s = revokeQuestion(pass({ kind: 'sealed' }));
  assert.match(s.body, /^Sam keeps the copy they were given: .*cannot take it back\. Change the value where it is used/);
});

test('an offboarding in words: what it would do, what it did, where items were sent', () => {
  const r = { person: 'Sam', dry_run: true, revoked: [pass(), pass({ id: 'p2', kind: 'sealed' })], rotate: [{ item: 'github', why: 'x' }], used: [] };
  assert.equal(offboardWords(r), 'Would revoke 2 passes of Sam; 1 item to rotate.');
  assert.equal(offboardWords({ ...r, dry_run: false, revoked: [pass()], rotate: [] }), 'Revoked 1 pass of Sam.');
  assert.equal(offboardWords({ ...r, revoked: [], rotate: [] }), 'Sam holds no pass that stands: there is nothing to revoke.');
  assert.equal(useWords({ destination: 'GET https://api.example.com/v1', count: 3, last_at: now - 3600_000 }, now, 'UTC'), 'GET https://api.example.com/v1: 3 times, last today 11:00');
  assert.equal(useWords({ destination: 'POST https://x.example/', count: 1, last_at: now }, now, 'UTC'), 'POST https://x.example/: once, last today 12:00');
});

test('where an item that came as a pass came from', () => {
  assert.match(fromWords({ kind: 'pass', from: 'http://127.0.0.1:7777' }), /^The value stays with the giver: there is nothing to show here\./);
  assert.equal(fromWords({ kind: 'login', from: 'a sealed pass' }), 'From a sealed pass: a copy kept in this vault, yours to use and change.');
  assert.equal(fromWords({ kind: 'login' }), null);
  assert.equal(fromWords({ kind: 'secret', from: null }), null);
});
