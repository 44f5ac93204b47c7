// Presence in the app (lib/presence.ts): base64url both ways, whether passkeys can work on this
// page, the WebAuthn options built from vyred's challenge, the browser's answers turned into the
// tools' inputs, the fields each kind offers, how long a value stays, and refusals in words.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  addInput,
  assertionInput,
  countdownWords,
  createOptions,
  fieldsOf,
  fromB64url,
  getOptions,
  isIpAddress,
  noWayWords,
  passkeyProblem,
  passkeyWhen,
  passkeysFor,
  presenceWords,
  problemWords,
  secondsLeft,
  shownFor,
  toB64url,
  webauthnWords,
} from '../.test-build/presence.js';

const bytes = (...b) => new Uint8Array(b);
const buf = (...b) => bytes(...b).buffer;

test('base64url without padding, both ways, as Buffer says it', () => {
  for (let n = 0; n < 70; n++) {
    const b = new Uint8Array(n).map((_, i) => (i * 37 + n * 11) & 0xff);
    const want = Buffer.from(b).toString('base64url');
    assert.equal(toB64url(b), want, `${n} bytes`);
    assert.equal(toB64url(b.buffer), want, `${n} bytes as an ArrayBuffer`);
    assert.deepEqual([...fromB64url(want)], [...b], `${n} bytes back`);
  }
  assert.equal(toB64url(bytes(0xfb, 0xff, 0xfe)), '-__-');
  // A view into a larger buffer: only its own bytes.
  const big = bytes(1, 2, 3, 4, 5);
  assert.equal(toB64url(big.subarray(1, 3)), Buffer.from([2, 3]).toString('base64url'));
  // Padding and plain base64 are read too; anything else is refused.
  assert.deepEqual([...fromB64url('AQI=')], [1, 2]);
  assert.deepEqual([...fromB64url('+/8=')], [0xfb, 0xff]);
  assert.throws(() => fromB64url('a b'));
  assert.throws(() => fromB64url('A'));
  assert.ok(fromB64url('AQI').buffer instanceof ArrayBuffer);
});

test('passkeys need a name in a secure page with WebAuthn; an IP address is said, with localhost for this machine', () => {
  const ok = { hostname: 'localhost', port: '7878', webauthn: true, secure: true };
  assert.equal(passkeyProblem(ok), null);
  assert.equal(passkeyProblem({ ...ok, hostname: 'ada.vyre.run', port: '' }), null);
  for (const h of ['127.0.0.1', '192.168.1.5', '[::1]', '::1', '[fd00::2]']) assert.ok(isIpAddress(h), h);
  for (const h of ['localhost', 'ada.vyre.run', 'a1.example', '10.example.com']) assert.ok(!isIpAddress(h), h);
  const loop = passkeyProblem({ ...ok, hostname: '127.0.0.1' });
  assert.match(loop, /not a number like 127\.0\.0\.1/);
  assert.match(loop, /http:\/\/localhost:7878\/app\//);
  assert.match(passkeyProblem({ ...ok, hostname: '[::1]', port: '' }), /http:\/\/localhost\/app\//);
  const lan = passkeyProblem({ ...ok, hostname: '192.168.1.5' });
  assert.match(lan, /not a number like 192\.168\.1\.5: open Vyre at its name/);
  assert.doesNotMatch(lan, /localhost/);
  assert.match(passkeyProblem({ ...ok, hostname: 'box.lan', secure: false }), /secure page/);
  assert.equal(passkeyProblem({ ...ok, webauthn: false }), 'This browser cannot use passkeys.');
});

const pk = (id, rp_id) => ({ id, name: id, rp_id, added_by: 'browser', created_at: 0, last_used_at: null });

test('the options for a new passkey: the challenge, this host, ES256 and EdDSA, verification required, this host\'s passkeys left out', () => {
  const userId = bytes(...Array(16).keys());
  const o = createOptions({ challenge: 'AQID', passkeys: [pk('BAU', 'localhost'), pk('Bgc', 'ada.vyre.run')] }, 'localhost', userId);
  assert.deepEqual([...o.challenge], [1, 2, 3]);
  assert.deepEqual(o.rp, { name: 'Vyre', id: 'localhost' });
  assert.deepEqual(o.user, { id: userId, name: 'Vyre', displayName: 'Vyre' });
  assert.deepEqual(o.pubKeyCredParams, [
    { type: 'public-key', alg: -7 },
    { type: 'public-key', alg: -8 },
  ]);
  assert.deepEqual(o.authenticatorSelection, { userVerification: 'required', residentKey: 'preferred' });
  assert.equal(o.attestation, 'none');
  assert.equal(o.timeout, 120000);
  assert.equal(o.excludeCredentials.length, 1);
  assert.equal(o.excludeCredentials[0].type, 'public-key');
  assert.deepEqual([...o.excludeCredentials[0].id], [4, 5]);
});

test('the options to answer a reveal: only this host\'s passkeys may answer, verification required', () => {
  const c = { challenge: 'AQID', passkeys: [pk('BAU', 'LocalHost'), pk('Bgc', 'ada.vyre.run')] };
  const o = getOptions(c, 'localhost');
  assert.deepEqual([...o.challenge], [1, 2, 3]);
  assert.equal(o.rpId, 'localhost');
  assert.deepEqual(o.allowCredentials.map((a) => [a.type, [...a.id]]), [['public-key', [4, 5]]]);
  assert.equal(o.userVerification, 'required');
  assert.equal(o.timeout, 120000);
  assert.deepEqual(passkeysFor(c.passkeys, 'ada.vyre.run').map((p) => p.id), ['Bgc']);
  assert.deepEqual(passkeysFor(c.passkeys, 'elsewhere'), []);
});

test('a new credential and an answer become the tools\' inputs, base64url each', () => {
  const created = {
    rawId: buf(1, 2, 3),
    response: {
      clientDataJSON: new TextEncoder().encode('{"type":"webauthn.create"}').buffer,
      getAuthenticatorData: () => buf(9, 9),
      getPublicKey: () => buf(0x30, 0x59),
      getPublicKeyAlgorithm: () => -7,
    },
  };
  assert.deepEqual(addInput(created, '  MacBook Touch ID '), {
    name: 'MacBook Touch ID',
    credential_id: 'AQID',
    client_data_json: Buffer.from('{"type":"webauthn.create"}').toString('base64url'),
    authenticator_data: 'CQk',
    public_key: 'MFk',
    alg: -7,
  });
  // An algorithm vyred does not take, or no public key from the browser: refused here, in words.
  const rsa = { ...created, response: { ...created.response, getPublicKeyAlgorithm: () => -257 } };
  assert.throws(() => addInput(rsa, 'x'), /ES256 and Ed25519/);
  const none = { ...created, response: { ...created.response, getPublicKeyAlgorithm: () => -8, getPublicKey: () => null } };
  assert.throws(() => addInput(none, 'x'), /does not take/);

  const got = { rawId: buf(1, 2, 3), response: { clientDataJSON: buf(4), authenticatorData: buf(5, 6), signature: buf(7, 8, 9) } };
  assert.deepEqual(assertionInput(got), { credential_id: 'AQID', client_data_json: 'BA', authenticator_data: 'BQY', signature: 'BwgJ' });
});

test('the fields each kind offers', () => {
  assert.deepEqual(fieldsOf('login').map((f) => f.field), ['username', 'password', 'totp', 'notes']);
  assert.deepEqual(fieldsOf('login').map((f) => f.label), ['Username', 'Password', 'TOTP code', 'Notes']);
  assert.deepEqual(fieldsOf('secret'), [{ field: 'value', label: 'Value' }]);
  assert.deepEqual(fieldsOf('note'), [{ field: 'value', label: 'Text' }]);
  assert.deepEqual(fieldsOf('card').map((f) => f.field), ['number', 'holder', 'expiry', 'code', 'notes']);
  assert.deepEqual(fieldsOf('card').map((f) => f.label), ['Number', 'Name on card', 'Expiry', 'Security code', 'Notes']);
  assert.deepEqual(fieldsOf('env'), [{ field: 'value', label: 'Variables', lines: true }]);
  assert.deepEqual(fieldsOf('odd'), [{ field: 'value', label: 'Value' }]);
});

test('a value stays 30 s, a TOTP code until it changes; the countdown in words', () => {
  assert.equal(shownFor({}), 30000);
  assert.equal(shownFor({ expires_in_s: null }), 30000);
  assert.equal(shownFor({ expires_in_s: 12 }), 12000);
  assert.equal(shownFor({ expires_in_s: 30 }), 30000);
  assert.equal(secondsLeft(10_000, 0), 10);
  assert.equal(secondsLeft(10_000, 9_001), 1);
  assert.equal(secondsLeft(10_000, 12_000), 0);
  assert.equal(countdownWords('password', 27), 'Hides in 27 s');
  assert.equal(countdownWords('totp', 12), 'Changes in 12 s');
});

test('a passkey\'s dates in words', () => {
  const now = Date.UTC(2026, 11, 4, 12, 0);
  assert.equal(passkeyWhen({ created_at: Date.UTC(2026, 11, 4, 9, 5), last_used_at: null }, now, 'UTC'), 'Added today 09:05 · Never used');
  assert.equal(passkeyWhen({ created_at: Date.UTC(2026, 11, 3, 9, 5), last_used_at: Date.UTC(2026, 11, 4, 11, 59) }, now, 'UTC'), 'Added yesterday 09:05 · Used today 11:59');
});

test('every refusal vyred gives is said in words', () => {
  const codes = [
    'presence_required',
    'presence_unavailable',
    'wrong_passphrase',
    'too_many_attempts',
    'presence_challenge_unknown',
    'presence_mismatch',
    'presence_invalid',
    'presence_forged',
    'presence_not_verified',
    'passkey_unknown',
    'passkey_cloned',
    'no_such_field',
    'unknown_item',
    'vault_locked',
    'totp_invalid',
    'exists',
  ];
  for (const c of codes) {
    const w = presenceWords(c);
    assert.ok(w && w.length > 10 && !w.includes('_'), `${c}: ${w}`);
  }
  assert.equal(presenceWords('something_new'), null);
  assert.match(presenceWords('presence_unavailable'), /add a passkey here.*`vyre vault passphrase`/);
  assert.match(presenceWords('too_many_attempts'), /wait a minute/);
  assert.match(presenceWords('no_such_field', 'totp'), /no TOTP seed/);
  assert.match(presenceWords('no_such_field', 'notes'), /no notes/);
  assert.match(presenceWords('presence_not_verified'), /did not verify you/);
});

test('a failure in words: vyred\'s code, the browser\'s DOMException, or anything else', () => {
  const api = Object.assign(new Error('the passphrase is wrong'), { status: 403, code: 'wrong_passphrase' });
  assert.deepEqual(problemWords(api), { text: 'That is not the vault passphrase.', detail: null });
  // vyred's message under the words only when it says more: how long to wait.
  const wait = Object.assign(new Error('too many wrong passphrases; try again in 42 s'), { code: 'too_many_attempts' });
  assert.deepEqual(problemWords(wait), { text: presenceWords('too_many_attempts'), detail: 'too many wrong passphrases; try again in 42 s' });
  const unknown = Object.assign(new Error('it broke'), { code: 'odd_thing' });
  assert.deepEqual(problemWords(unknown), { text: 'it broke', detail: null });
  assert.equal(problemWords(Object.assign(new Error('x'), { code: 'no_such_field' }), { field: 'totp' }).text, presenceWords('no_such_field', 'totp'));
  // A DOMException's `code` is a number: its name says what happened.
  const denied = new DOMException('The operation either timed out or was not allowed.', 'NotAllowedError');
  assert.deepEqual(problemWords(denied), { text: webauthnWords('NotAllowedError', false), detail: null });
  assert.match(problemWords(denied).text, /No passkey answered/);
  assert.match(problemWords(denied, { creating: true }).text, /No passkey was made/);
  assert.match(problemWords(new DOMException('x', 'InvalidStateError'), { creating: true }).text, /has a passkey for Vyre here already/);
  assert.equal(problemWords(new Error('This device made a kind of passkey Vyre does not take')).text, 'This device made a kind of passkey Vyre does not take');
  assert.equal(problemWords(new TypeError('bad')).text, 'bad');
  assert.equal(problemWords('plain').text, 'plain');
});

test('with no way to prove it is you here, the words say what to do', () => {
  const ok = { hostname: 'localhost', port: '7878', webauthn: true, secure: true };
  assert.equal(noWayWords({ passkeys: [], passphrase: false }, ok), presenceWords('presence_unavailable'));
  assert.match(noWayWords({ passkeys: [pk('a', 'ada.vyre.run')], passphrase: false }, ok), /passkeys are for ada\.vyre\.run, not for localhost: add one here/);
  const ip = noWayWords({ passkeys: [pk('a', 'localhost')], passphrase: false }, { ...ok, hostname: '127.0.0.1' });
  assert.match(ip, /not a number like 127\.0\.0\.1.*`vyre vault passphrase`/);
});
