// The Vault's Add forms for a card and an env set (lib/vaultforms.ts): vyred's rules checked
// before anything is sent, in words that never repeat a value; what `vault.put` is sent; a
// pasted .env file read into rows (export, quotes, comments), merged with the rows typed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  NO_CARD,
  cardInput,
  cardProblems,
  envInput,
  envProblems,
  mergeRows,
  normExpiry,
  parseEnv,
  pastedWords,
  rowProblem,
  validVarName,
} from '../.test-build/vaultforms.js';

const card = (o) => ({ ...NO_CARD, ...o });

test('a card\'s expiry is read as MM/YY or MM/YYYY', () => {
  assert.equal(normExpiry('8/29'), '08/29');
  assert.equal(normExpiry(' 08 / 2029 '), '08/2029');
  assert.equal(normExpiry('12/29'), '12/29');
  assert.equal(normExpiry('0829'), '0829');
  assert.equal(normExpiry(''), '');
});

test('a card\'s fields are checked with vyred\'s rules, the problem named by field, never the value', () => {
  assert.deepEqual(cardProblems(card({ number: '4111 1111 1111 1111', expiry: '08/29', code: '123' })), []);
  assert.deepEqual(cardProblems(card({ number: '4111-1111-1111-1111' })), [], 'holder, expiry and code are optional');
  assert.deepEqual(cardProblems(card({ number: '' })), ['Number: a card needs its number.']);
  for (const number of ['4111 1111 111', '4111111111111111111111', '4111 x111 1111 1111', ' -41111111111111']) {
    const p = cardProblems(card({ number }));
    assert.equal(p.length, 1, number);
    assert.match(p[0], /^Number: must be the card’s 12 to 19 digits/);
    assert.ok(!p[0].includes(number.trim()), 'never the value');
  }
  for (const expiry of ['13/29', '00/29', '08-29', '08/291', 'soon']) {
    assert.deepEqual(cardProblems(card({ number: '4111111111111111', expiry })), ['Expiry: must be the month and year as MM/YY or MM/YYYY, like 08/29.'], expiry);
  }
  assert.deepEqual(cardProblems(card({ number: '4111111111111111', code: '12' })), ['Security code: must be the 3 or 4 digits on the card.']);
  assert.deepEqual(cardProblems(card({ number: '4111111111111111', code: '12a4' })).length, 1);
  assert.deepEqual(cardProblems(card({ number: '4111111111111111', code: '1234' })), []);
});

test('what vault.put is sent for a card: the optional fields only when given', () => {
  assert.deepEqual(cardInput('visa', card({ number: ' 4111 1111 1111 1111 ' })), { name: 'visa', kind: 'card', number: '4111 1111 1111 1111' });
  assert.deepEqual(cardInput('visa', card({ number: '4111111111111111', holder: ' Ada L ', expiry: '8/29', code: '123', notes: 'work' })), {
    name: 'visa',
    kind: 'card',
    number: '4111111111111111',
    holder: 'Ada L',
    expiry: '08/29',
    code: '123',
    notes: 'work',
  });
});

test('a variable\'s name is a shell variable\'s, as vyred says', () => {
  for (const ok of ['API_KEY', '_x', 'a1', 'A']) assert.equal(validVarName(ok), true, ok);
  for (const bad of ['', '1A', 'API-KEY', 'A B', 'é', 'A.B', 'x'.repeat(129)]) assert.equal(validVarName(bad), false, bad);
});

test('each row says what is wrong with it: a bad name, a name twice, a value without a name; a blank row is fine', () => {
  const rows = [
    { name: 'API_KEY', value: 'v1' },
    { name: '1BAD', value: 'v2' },
    { name: 'API_KEY', value: 'v3' },
    { name: '', value: 'v4' },
    { name: '', value: '' },
    { name: 'EMPTY', value: '' },
  ];
  assert.equal(rowProblem(rows, 0), null);
  assert.equal(rowProblem(rows, 1), '“1BAD” is not a variable’s name: letters, digits and _, not starting with a digit.');
  assert.equal(rowProblem(rows, 2), 'API_KEY is here twice.');
  assert.equal(rowProblem(rows, 3), 'A value needs a name.');
  assert.equal(rowProblem(rows, 4), null);
  assert.equal(rowProblem(rows, 5), null, 'an empty value is a value');
  assert.equal(envProblems(rows).length, 3);
  assert.ok(!envProblems(rows).join(' ').includes('v2'), 'never a value');
  assert.deepEqual(envProblems([{ name: '', value: '' }]), ['Add a variable: an env set holds 1 to 100.']);
  const many = Array.from({ length: 101 }, (_, i) => ({ name: `V${i}`, value: 'x' }));
  assert.deepEqual(envProblems(many), ['An env set holds at most 100 variables; this one has 101.']);
  assert.deepEqual(envProblems(many.slice(0, 100)), []);
});

test('what vault.put is sent for an env set: the rows by name, blank ones left out', () => {
  assert.deepEqual(envInput('news', [{ name: ' API_KEY ', value: 'k' }, { name: '', value: '' }, { name: 'EMPTY', value: '' }]), {
    name: 'news',
    kind: 'env',
    vars: { API_KEY: 'k', EMPTY: '' },
  });
});

test('a pasted .env file: NAME=value lines, export and quotes allowed, comments and blank lines skipped', () => {
  const text = [
    '# the news API',
    'export API_KEY=sk-123',
    '',
    'API_URL="https://example.com/v1?a=b"',
    "SINGLE='it''s'",
    "LITERAL='a\\nb'",
    'MULTI="line one\\nline two \\"quoted\\""',
    'PLAIN=value with spaces # a comment',
    'HASH=abc#def',
    '  SPACED = padded  ',
    'EMPTY=',
    'EQUALS=a=b=c',
    'not a variable line',
    '=novalue',
    'OPEN="never closed',
    '1BAD=x',
  ].join('\r\n');
  const { rows, skipped } = parseEnv(text);
  assert.deepEqual(rows, [
    { name: 'API_KEY', value: 'sk-123' },
    { name: 'API_URL', value: 'https://example.com/v1?a=b' },
    { name: 'LITERAL', value: 'a\\nb' },
    { name: 'MULTI', value: 'line one\nline two "quoted"' },
    { name: 'PLAIN', value: 'value with spaces' },
    { name: 'HASH', value: 'abc#def' },
    { name: 'SPACED', value: 'padded' },
    { name: 'EMPTY', value: '' },
    { name: 'EQUALS', value: 'a=b=c' },
    { name: '1BAD', value: 'x' },
  ]);
  assert.deepEqual(skipped, [
    { line: 5, why: 'its quotes do not close' },
    { line: 13, why: 'not NAME=value' },
    { line: 14, why: 'no name before the =' },
    { line: 15, why: 'its quotes do not close' },
  ]);
  // The bad name is kept, for its row to say what is wrong with it.
  assert.match(rowProblem(rows, rows.length - 1), /not a variable’s name/);
  assert.deepEqual(parseEnv(''), { rows: [], skipped: [] });
});

test('pasted rows merge with those typed: a name there takes the new value in its place, blank rows go', () => {
  const typed = [{ name: 'A', value: '1' }, { name: '', value: '' }, { name: 'B', value: '2' }];
  assert.deepEqual(mergeRows(typed, [{ name: 'B', value: 'new' }, { name: 'C', value: '3' }]), [
    { name: 'A', value: '1' },
    { name: 'B', value: 'new' },
    { name: 'C', value: '3' },
  ]);
  assert.deepEqual(typed[2], { name: 'B', value: '2' }, 'the rows given are not changed');
});

test('what a paste did, in words, by line number only', () => {
  assert.equal(pastedWords(3, []), 'Filled in 3 variables.');
  assert.equal(pastedWords(1, [{ line: 4, why: 'not NAME=value' }]), 'Filled in 1 variable; left out line 4 (not NAME=value).');
  assert.equal(pastedWords(0, [{ line: 1, why: 'not NAME=value' }]), 'Found no NAME=value line; left out line 1 (not NAME=value).');
  const many = Array.from({ length: 7 }, (_, i) => ({ line: i + 1, why: 'x' }));
  assert.match(pastedWords(0, many), /line 5 \(x\) and 2 more\.$/);
});
