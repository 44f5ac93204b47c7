// This Vyre's own name as the app shows it (src/lib/names.ts): what the claim form accepts, a
// refused claim in words, and how the certificate's dates read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NAME_SUFFIX, certificateText, dayText, labelOf, labelProblem, namesError, suggestLabel } from '../.test-build/names.js';

test('the claim takes a DNS label: lowercase letters, digits, inner hyphens, 1 to 63 characters', () => {
  for (const ok of ['alex', 'a', '7', 'ada-lovelace', 'x1-2-y', 'a'.repeat(63), 'a--b']) assert.equal(labelProblem(ok), null, ok);
  for (const bad of ['Bad Name', 'Alex', '-alex', 'alex-', 'al_ex', 'al.ex', 'alex!', 'é', 'a'.repeat(64), 'alex.example.com']) {
    assert.ok(labelProblem(bad), bad);
  }
  assert.equal(labelProblem(''), 'Type the name you want.');
  assert.equal(labelProblem('   '), 'Type the name you want.');
});

test('spaces around the name and a typed .vyre.run are not part of it', () => {
  assert.equal(NAME_SUFFIX, '.vyre.run');
  assert.equal(labelOf('  alex '), 'alex');
  assert.equal(labelOf('alex.vyre.run'), 'alex');
  assert.equal(labelOf('alex.VYRE.run'), 'alex');
  assert.equal(labelOf('.vyre.run'), '');
  assert.equal(labelProblem(' alex.vyre.run '), null);
  assert.equal(labelProblem('.vyre.run'), 'Type the name you want.');
});

test('a name that is not a label says the rule, and a label that would do', () => {
  assert.equal(
    labelProblem('Bad Name'),
    'A name is lowercase letters, digits and hyphens (not first or last), at most 63 characters: “bad-name” would do.',
  );
  assert.match(labelProblem('Alex'), /“alex” would do\.$/);
  assert.match(labelProblem('-alex-'), /“alex” would do\.$/);
  assert.match(labelProblem('Zoë'), /“zoe” would do\.$/);
  // Nothing to suggest: the rule alone.
  assert.equal(labelProblem('電話'), 'A name is lowercase letters, digits and hyphens (not first or last), at most 63 characters.');
  assert.equal(labelProblem('---'), 'A name is lowercase letters, digits and hyphens (not first or last), at most 63 characters.');
  // Too long: the suggestion is cut to fit, and is a label itself.
  const long = labelProblem('a'.repeat(70));
  assert.match(long, new RegExp(`“${'a'.repeat(63)}” would do\\.$`));
  for (const t of ['Bad Name', 'Zoë Ada', ' Hello, World! ', 'x'.repeat(62) + ' yz', 'A_B_C']) {
    const s = suggestLabel(t);
    assert.equal(labelProblem(s), null, `${t} → ${s}`);
  }
});

test('a refused claim says why in words, and keeps vyred\'s message', () => {
  const unreachable = namesError('directory_unreachable', 'the name directory cannot be reached: connection refused');
  assert.match(unreachable.text, /^The name directory could not be reached\./);
  assert.equal(unreachable.detail, 'the name directory cannot be reached: connection refused');
  assert.match(namesError('name_taken', '"alex" is taken: choose another name').text, /^That name is taken/);
  assert.match(namesError('name_held', 'this Vyre already holds bob.vyre.run').text, /already holds another name/);
  assert.match(namesError('network_down', 'the private network is not up').text, /add a phone or laptop first/);
  assert.match(namesError('directory_refused', 'no').text, /^The name directory refused/);
  assert.match(namesError('certificate_failed', 'acme: rate limited').text, /Renew now/);
  assert.match(namesError('certificate_failed', 'acme: rate limited', true).text, /could not be renewed/);
  assert.deepEqual(namesError('offline', ' Vyre did not answer. '), { text: 'The name could not be claimed.', detail: 'Vyre did not answer.' });
  assert.equal(namesError('internal', 'x', true).text, 'The certificate could not be renewed.');
});

test('the certificate\'s line: valid until, renews, renewal due, expired, none yet', () => {
  const day = 86_400_000;
  const now = Date.UTC(2027, 0, 10, 12);
  const notAfter = Date.UTC(2027, 2, 3, 12);
  const renewsAt = notAfter - 30 * day;
  assert.equal(dayText(notAfter, 'en-GB'), '3 March 2027');
  assert.equal(dayText(notAfter, 'en-US'), 'March 3, 2027');
  assert.equal(
    certificateText({ not_after: notAfter, renews_at: renewsAt }, now, 'en-GB'),
    'certificate valid until 3 March 2027, renews 1 February 2027',
  );
  assert.equal(certificateText({ not_after: notAfter, renews_at: null }, now, 'en-GB'), 'certificate valid until 3 March 2027');
  assert.equal(certificateText({ not_after: notAfter, renews_at: renewsAt }, renewsAt + day, 'en-GB'), 'certificate valid until 3 March 2027, renewal due');
  assert.equal(certificateText({ not_after: notAfter, renews_at: renewsAt }, notAfter, 'en-GB'), 'certificate expired on 3 March 2027');
  assert.equal(certificateText({ not_after: null, renews_at: null }, now, 'en-GB'), 'no certificate yet');
  assert.equal(certificateText({ not_after: undefined, renews_at: undefined }, now), 'no certificate yet');
});
