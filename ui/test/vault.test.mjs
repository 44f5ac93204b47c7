// The Vault screen's words and what it sends: the search, an item's facts, the generator's input
// (never a password's and a passphrase's fields together), the import's input and its result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  GEN_DEFAULTS,
  filterItems,
  genInput,
  grantsText,
  importInput,
  importWords,
  importedWords,
  kindLabel,
  lastUsedWords,
  sitesText,
  skippedWords,
} from '../.test-build/vault.js';

const item = (name, kind, urls) => ({ name, kind, urls, grants: [], created_at: 0, updated_at: 0, last_used_at: null, last_used_by: null });
const items = [item('mail', 'login', ['https://mail.example.com']), item('api-token', 'secret'), item('Bank', 'login', ['bank.example.org']), item('wifi', 'note')];

test('the search holds every word in the name, a site or the kind; the list by name', () => {
  assert.deepEqual(filterItems(items, '').map((i) => i.name), ['api-token', 'Bank', 'mail', 'wifi']);
  assert.deepEqual(filterItems(items, 'MAIL').map((i) => i.name), ['mail']);
  assert.deepEqual(filterItems(items, 'example').map((i) => i.name), ['Bank', 'mail']);
  assert.deepEqual(filterItems(items, 'login example.org').map((i) => i.name), ['Bank']);
  assert.deepEqual(filterItems(items, 'note').map((i) => i.name), ['wifi']);
  assert.deepEqual(filterItems(items, 'secret').map((i) => i.name), ['api-token']);
  assert.deepEqual(filterItems(items, 'nothing'), []);
});

test('an item\'s facts in words', () => {
  assert.equal(kindLabel('login'), 'Login');
  assert.equal(kindLabel('odd'), 'odd');
  assert.equal(sitesText({ urls: ['a.com', 'b.com'] }), 'a.com, b.com');
  assert.equal(sitesText({}), '');
  assert.equal(grantsText({ grants: [] }), 'Not granted to anything');
  assert.equal(grantsText({ grants: ['module:sessions', 'watcher:news'] }), 'sessions, watcher:news');
  const now = Date.UTC(2026, 11, 4, 12, 0);
  assert.equal(lastUsedWords({ last_used_at: null, last_used_by: null }, now, 'UTC'), 'Never used');
  assert.equal(lastUsedWords({ last_used_at: now - 3600_000, last_used_by: 'watcher:news' }, now, 'UTC'), 'Used today 11:00 by watcher:news');
  assert.equal(lastUsedWords({ last_used_at: now - 86400_000, last_used_by: null }, now, 'UTC'), 'Used yesterday 12:00');
});

test('the generator sends a password\'s fields or a passphrase\'s, never both', () => {
  assert.deepEqual(genInput(GEN_DEFAULTS), { kind: 'password', length: 20, sets: ['lower', 'upper', 'digits', 'symbols'], avoid_ambiguous: false });
  assert.deepEqual(genInput({ ...GEN_DEFAULTS, length: 500, sets: ['symbols', 'lower'], avoidAmbiguous: true }), {
    kind: 'password',
    length: 128,
    sets: ['lower', 'symbols'],
    avoid_ambiguous: true,
  });
  assert.equal(genInput({ ...GEN_DEFAULTS, length: 2 }).length, 8);
  assert.equal(genInput({ ...GEN_DEFAULTS, length: NaN }).length, 8);
  assert.deepEqual(genInput({ ...GEN_DEFAULTS, kind: 'passphrase', words: 30, separator: '----', capitalize: true }), {
    kind: 'passphrase',
    words: 20,
    separator: '---',
    capitalize: true,
  });
  assert.equal(genInput({ ...GEN_DEFAULTS, kind: 'passphrase', words: 1 }).words, 4);
});

test('the import: Auto is no format, no empty prefix', () => {
  assert.deepEqual(importInput('{}', { format: '', onDuplicate: 'skip', prefix: ' ', dryRun: true }), { data: '{}', dry_run: true, on_duplicate: 'skip' });
  assert.deepEqual(importInput('x', { format: 'chrome-csv', onDuplicate: 'rename', prefix: 'bw-', dryRun: false }), {
    data: 'x',
    dry_run: false,
    on_duplicate: 'rename',
    format: 'chrome-csv',
    prefix: 'bw-',
  });
});

test('what a check or an import did, in words', () => {
  const imported = [{ name: 'a', kind: 'login', at: 1, replaced: false }];
  assert.equal(importWords({ dry_run: true, imported, skipped: [] }), 'Would import 1');
  assert.equal(importWords({ dry_run: true, imported, skipped: [{ at: 3, title: 'Visa', why: 'a card' }] }), 'Would import 1, skip 1');
  assert.equal(importWords({ dry_run: false, imported, skipped: [{ at: 3, title: null, why: 'x' }] }), 'Imported 1, skipped 1');
  assert.equal(skippedWords({ at: 3, title: 'Visa', why: 'cards are not imported' }), '#3 Visa: cards are not imported');
  assert.equal(skippedWords({ at: 7, title: null, why: 'no password' }), '#7: no password');
  assert.equal(importedWords({ name: 'github', kind: 'login', title: 'GitHub', replaced: false }), 'github (was GitHub): login');
  assert.equal(importedWords({ name: 'x', kind: 'note', title: 'x', replaced: true, note: 'name shortened' }), 'x: note, replacing the one in the vault; name shortened');
});
