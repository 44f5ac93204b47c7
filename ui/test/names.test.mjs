// This Vyre's own name as the app shows it (src/lib/names.ts): what the claim and own-domain
// forms accept, a refused claim, domain or renewal in words, how the certificate's dates read,
// and where the app continues at the name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CLOUDFLARE_ITEM,
  DOMAIN_PROVIDER,
  NAME_SUFFIX,
  certificateText,
  continueUrl,
  dayText,
  domainOf,
  domainProblem,
  labelOf,
  labelProblem,
  moveTarget,
  namesError,
  suggestLabel,
  viaText,
} from '../.test-build/names.js';

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
  assert.match(namesError('certificate_failed', 'acme: rate limited', 'renew').text, /could not be renewed/);
  assert.deepEqual(namesError('offline', ' Vyre did not answer. '), { text: 'The name could not be claimed.', detail: 'Vyre did not answer.' });
  assert.equal(namesError('internal', 'x', 'renew').text, 'The certificate could not be renewed.');
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

test('the own domain: what is typed is sent bare and lowercase, without what a pasted address adds', () => {
  assert.equal(domainOf('  vyre.example.com '), 'vyre.example.com');
  assert.equal(domainOf('Vyre.Example.COM'), 'vyre.example.com');
  assert.equal(domainOf('https://vyre.example.com/app/'), 'vyre.example.com');
  assert.equal(domainOf('http://vyre.example.com:8443/x?y#z'), 'vyre.example.com');
  assert.equal(domainOf('vyre.example.com.'), 'vyre.example.com');
  assert.equal(domainOf('vyre.example.com/'), 'vyre.example.com');
  assert.equal(domainOf(''), '');
});

test('the own domain is checked before vyred is asked: names joined by dots, no address, not vyre.run', () => {
  for (const ok of ['vyre.example.com', 'example.com', 'a.b.c.example.co.uk', 'x-1.example.io', ' https://Vyre.Example.com/ ', `${'a'.repeat(63)}.example.com`]) {
    assert.equal(domainProblem(ok), null, ok);
  }
  assert.equal(domainProblem(''), 'Type your domain, like vyre.example.com.');
  assert.equal(domainProblem('  '), 'Type your domain, like vyre.example.com.');
  assert.equal(domainProblem('example'), 'Type the whole domain, like vyre.example.com.');
  assert.equal(domainProblem('localhost'), 'Type the whole domain, like vyre.example.com.');
  for (const bad of ['vyre example.com', 'vyre..example.com', '-vyre.example.com', 'vyre-.example.com', 'vyre_1.example.com', '*.example.com', 'vyré.example.com', '.example.com']) {
    assert.match(domainProblem(bad), /^A domain is names joined by dots, like vyre\.example\.com/, bad);
  }
  assert.match(domainProblem(`${'a'.repeat(64)}.example.com`), /at most 63 characters/);
  assert.match(domainProblem(`${'abcdefghi.'.repeat(26)}com`), /at most 253 characters/);
  assert.match(domainProblem('203.0.113.7'), /^That is an address/);
  assert.match(domainProblem('alex.vyre.run'), /claim it instead/);
  assert.match(domainProblem('vyre.run'), /claim it instead/);
  // A name that only ends like vyre.run is someone's own domain.
  assert.equal(domainProblem('myvyre.run'), null);
});

test('a refused own domain says why in words, and keeps vyred\'s message', () => {
  const say = (code, message = 'vyred said so') => namesError(code, message, 'domain');
  assert.deepEqual(say('dns_unreachable', ' Cloudflare cannot be reached: connection refused '), {
    text: 'Cloudflare could not be reached. Check this machine’s internet connection and try again.',
    detail: 'Cloudflare cannot be reached: connection refused',
  });
  assert.match(say('invalid_domain').text, /^That is not a domain Vyre can use: a domain is names joined by dots/);
  assert.match(say('token_needed').text, /Cloudflare API token/);
  assert.match(say('no_zone').text, /no zone for that domain/);
  assert.match(say('dns_refused', 'Authentication error (10000)').text, /Zone:Read and DNS:Edit/);
  assert.equal(say('dns_refused', 'Authentication error (10000)').detail, 'Authentication error (10000)');
  assert.match(say('vault_locked').text, /vault is locked.*vyre vault unlock/);
  assert.match(say('network_down').text, /add a phone or laptop first, then use your domain/);
  assert.doesNotMatch(say('network_down').text, /claim/);
  assert.match(say('certificate_failed').text, /^Your domain points here, but its certificate could not be issued\. Try again with Renew now\.$/);
  assert.equal(say('invalid_input').text, 'That domain cannot be used.');
  assert.equal(say('internal').text, 'Your domain could not be set up.');
  // A claim refused because this Vyre uses its own domain.
  assert.match(namesError('name_held', 'this Vyre already uses vyre.example.com').text, /already holds another name/);
  assert.equal(DOMAIN_PROVIDER, 'cloudflare');
  assert.equal(CLOUDFLARE_ITEM, 'dns-cloudflare');
});

test('how the name is kept is said for the person\'s own domain only', () => {
  assert.equal(viaText('cloudflare'), 'Your own domain, through Cloudflare');
  assert.equal(viaText('directory'), null);
  assert.equal(viaText(null), null);
  assert.equal(viaText(undefined), null);
});

test('the page moves to the name only once a certificate is served there, and only from elsewhere', () => {
  const served = { fqdn: 'alex.vyre.run', url: 'https://alex.vyre.run/app/', not_after: 1, renews_at: 0, error: null };
  assert.deepEqual(moveTarget(served, '127.0.0.1'), { fqdn: 'alex.vyre.run', url: 'https://alex.vyre.run/app/' });
  assert.deepEqual(moveTarget(served, '100.64.0.1'), { fqdn: 'alex.vyre.run', url: 'https://alex.vyre.run/app/' });
  assert.equal(moveTarget(served, 'alex.vyre.run'), null, 'here already');
  assert.equal(moveTarget(served, 'ALEX.vyre.run.'), null, 'here already, however written');
  assert.equal(moveTarget({ ...served, not_after: null }, '127.0.0.1'), null, 'no certificate yet');
  assert.equal(moveTarget({ ...served, url: null }, '127.0.0.1'), null);
  assert.equal(moveTarget({ fqdn: null, url: null, not_after: null }, '127.0.0.1'), null, 'no name');
  assert.equal(moveTarget(null, '127.0.0.1'), null);
});

test('the app continues at the same page at the name, or at its start from outside the app', () => {
  const url = 'https://alex.vyre.run/app/';
  assert.equal(continueUrl(url, '/app/settings'), 'https://alex.vyre.run/app/settings');
  assert.equal(continueUrl(url, '/app/t/abc'), 'https://alex.vyre.run/app/t/abc');
  assert.equal(continueUrl(url, '/app/'), 'https://alex.vyre.run/app/');
  assert.equal(continueUrl(url, '/onboard'), 'https://alex.vyre.run/app/');
  assert.equal(continueUrl('https://vyre.example.com/app/', '/'), 'https://vyre.example.com/app/');
});
