// The Vault screen's words and what it sends: the search, an item's facts, the generator's input
// (never a password's and a passphrase's fields together), the import's input and its result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  GEN_DEFAULTS,
  cardText,
  expired,
  varsText,
  filterItems,
  genInput,
  grantsText,
  exportData,
  importInput,
  importWords,
  importedWords,
  kindLabel,
  lastUsedWords,
  sitesText,
  skippedWords,
} from '../.test-build/vault.js';

const item = (name, kind, urls) => ({ name, kind, urls, grants: [], created_at: 0, updated_at: 0, last_used_at: null, last_used_by: null });
const items = [
  item('mail', 'login', ['https://mail.example.com']),
  item('api-token', 'secret'),
  item('Bank', 'login', ['bank.example.org']),
  item('wifi', 'note'),
  { ...item('visa', 'card'), last4: '1234', expiry: '08/29' },
  { ...item('news', 'env'), vars: ['NEWS_API_KEY', 'NEWS_URL'] },
];

test('the search holds every word in the name, a site or the kind; the list by name', () => {
  assert.deepEqual(filterItems(items, '').map((i) => i.name), ['api-token', 'Bank', 'mail', 'news', 'visa', 'wifi']);
  assert.deepEqual(filterItems(items, 'MAIL').map((i) => i.name), ['mail']);
  assert.deepEqual(filterItems(items, 'example').map((i) => i.name), ['Bank', 'mail']);
  assert.deepEqual(filterItems(items, 'login example.org').map((i) => i.name), ['Bank']);
  assert.deepEqual(filterItems(items, 'note').map((i) => i.name), ['wifi']);
  assert.deepEqual(filterItems(items, 'secret').map((i) => i.name), ['api-token']);
  assert.deepEqual(filterItems(items, 'nothing'), []);
  // A card's last digits and expiry, an env set's variables' names, their kinds' labels.
  assert.deepEqual(filterItems(items, '1234').map((i) => i.name), ['visa']);
  assert.deepEqual(filterItems(items, '08/29').map((i) => i.name), ['visa']);
  assert.deepEqual(filterItems(items, 'card').map((i) => i.name), ['visa']);
  assert.deepEqual(filterItems(items, 'news_url').map((i) => i.name), ['news']);
  assert.deepEqual(filterItems(items, 'env set').map((i) => i.name), ['news']);
});

test('a card\'s facts and an env set\'s names in words', () => {
  const now = Date.UTC(2026, 5, 15);
  assert.equal(kindLabel('card'), 'Card');
  assert.equal(kindLabel('env'), 'Env set');
  assert.equal(cardText({ last4: '1234', expiry: '08/29' }, now), '•••• 1234 · expires 08/29');
  assert.equal(cardText({ last4: '1234', expiry: '06/2026' }, now), '•••• 1234 · expires 06/2026', 'good through its month');
  assert.equal(cardText({ last4: '1234', expiry: '05/26' }, now), '•••• 1234 · expired 05/26');
  assert.equal(cardText({ last4: '1234', expiry: '' }, now), '•••• 1234');
  assert.equal(cardText({}, now), '');
  assert.equal(expired('soon', now), false);
  assert.equal(varsText({ vars: ['A', 'B', 'C'] }), 'A, B, C');
  assert.equal(varsText({ vars: ['A', 'B', 'C'] }, 2), 'A, B and 1 more');
  assert.equal(varsText({}), '');
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
  assert.equal(lastUsedWords({ last_used_at: now - 3600_000, last_used_by: 'pass:p206ff09df4e39c46' }, now, 'UTC'), 'Used today 11:00 through a pass');
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
  assert.equal(exportData(new TextEncoder().encode('name,password\nx,é')), 'name,password\nx,é', 'text stays text');
  const zip = new Uint8Array([0x50, 0x4b, 3, 4, 0, 255, 10]);
  assert.equal(exportData(zip), Buffer.from(zip).toString('base64'), 'a .1pux goes as base64');
  const big = new Uint8Array(100_000).fill(7);
  big.set([0x50, 0x4b, 3, 4]);
  assert.equal(exportData(big), Buffer.from(big).toString('base64'), 'in chunks, whole');
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
