// A vault value shown after presence (ADR 0035), in Chromium against a real vyred. The app runs
// at http://localhost:<port>, not 127.0.0.1 (WebAuthn refuses an IP address as its site; the
// browser's credential is per origin, so the onboarding is done there too), with Chromium's
// virtual authenticator (CDP WebAuthn: an internal ctap2 one that verifies the person by
// itself). A passkey is added from the Vault's Passkeys panel and listed; Show on a login's
// password asks the passkey and shows the stored value, Copy puts it on the clipboard, Hide
// takes it away, and a shown value hides by itself after 30 s; a TOTP code is the seed's code
// for now (6 digits) with its countdown; a login without a seed says so in words. With the
// authenticator not verifying the person, nothing is shown and it is said in words; Try again
// works once it does. The vault passphrase (set through the API): a wrong one refused in words,
// the right one shows the value. The passkey is removed (asked first), and the passphrase is
// then asked at once. At 127.0.0.1 the Passkeys panel says passkeys need a name, and the
// passphrase still works. After every reveal no value is in localStorage, sessionStorage, the
// address or the console, and none is left on the page once hidden. No Claude Code needed.
// Screenshots: screenshots/vault-reveal-{passkeys,shown,totp,refused,passphrase,wrong,ip}-{desktop,phone}.png.

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { Rig, waitFor } from './lib/rig.mjs';
import { onboardByScreens } from './lib/onboard.mjs';
import { openBrowser, shootingTest, shot } from './lib/browser.mjs';

const USERNAME = 'ada-login-user-4R7';
const PASSWORD = 'pw-Reveal-me-9c1f2e';
const SEED = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
const NOTES = 'login-notes-line-one\nline-two-6Hq';
const SECRET = 'sk-reveal-SECRET-77aa';
const PASSPHRASE = 'correct horse battery staple 31';
const VALUES = [USERNAME, PASSWORD, NOTES, 'login-notes-line-one', SECRET, PASSPHRASE];

let rig;
let browser;
let page;
let cdp;
let authenticator;
/** The app at localhost: vyred's own address with the host's name in place of 127.0.0.1. */
let local;
const logged = [];

before(async () => {
  rig = await Rig.start('vault-reveal');
  local = rig.base.replace('//127.0.0.1:', '//localhost:');
  assert.notEqual(local, rig.base, `vyred listens at ${rig.base}`);
  browser = await openBrowser();
  page = browser.page;
  page.on('console', (m) => logged.push(m.text()));
  await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: local });
  const atLocalhost = { onboardLink: async () => (await rig.onboardLink()).replace('//127.0.0.1:', '//localhost:') };
  await onboardByScreens(atLocalhost, page);
  await page.waitForURL((u) => u.pathname.startsWith('/app'));
  assert.equal(new URL(page.url()).hostname, 'localhost');

  cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  ({ authenticatorId: authenticator } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  }));

  await rig.sock('vault.put', { name: 'mail', kind: 'login', username: USERNAME, password: PASSWORD, totp: SEED, notes: NOTES });
  await rig.sock('vault.put', { name: 'forum', kind: 'login', username: 'someone', password: 'forum-pw-1' });
  await rig.sock('vault.put', { name: 'api-key', kind: 'secret', value: SECRET });
});

after(async () => {
  await browser?.close();
  await rig?.stop();
});

const T = { timeout: 120_000 };
const it = shootingTest('vault-reveal-', () => page);
const row = (name) => page.locator(`[data-testid=vault-item][data-name="${name}"]`);
const fieldOf = (name, field) => row(name).locator(`[data-testid=vault-field][data-field="${field}"]`);

/** The item's detail open (and no other). */
async function openItem(name) {
  const detail = row(name).getByTestId('vault-detail');
  if (!(await detail.isVisible())) await row(name).getByTestId('vault-item-open').click();
  await detail.waitFor();
}

/** No value is kept where it could outlive the screen: the origin's storage, the address, the
 * title, the console. */
async function keptNowhere(where) {
  const kept = await page.evaluate(() => JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage }, url: location.href, title: document.title }));
  for (const v of VALUES) {
    assert.ok(!kept.includes(v), `${where}: ${v} is kept in ${kept}`);
    assert.ok(!logged.some((l) => l.includes(v)), `${where}: ${v} is in the console`);
  }
}

/** None of `values` is on the page, in its text or a field. */
async function notOnPage(where, values = VALUES) {
  const text = await page.evaluate(() => document.body.innerText);
  const fields = await page.evaluate(() => [...document.querySelectorAll('input, textarea')].map((e) => e.value).join('\n'));
  for (const v of values) {
    assert.ok(!text.includes(v), `${where}: the page shows ${v}`);
    assert.ok(!fields.includes(v), `${where}: a field holds ${v}`);
  }
}

/** RFC 6238's code for `seed` (base32) at `ms`: 6 digits, 30 s steps, HMAC-SHA1. */
function totp(seed, ms) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const c of seed) bits += alphabet.indexOf(c).toString(2).padStart(5, '0');
  const key = Buffer.from(bits.match(/.{8}/g).map((b) => parseInt(b, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(ms / 30_000)));
  const h = createHmac('sha1', key).update(counter).digest();
  const o = h[h.length - 1] & 0xf;
  return String((h.readUInt32BE(o) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

it('on localhost a passkey is added on this device from the Passkeys panel, and listed with its site', T, async () => {
  await page.locator('[data-nav="vault"]').click();
  await page.waitForURL((u) => u.pathname === '/app/vault');
  await row('mail').waitFor();
  await page.getByTestId('vault-open-passkeys').click();
  const panel = page.getByTestId('vault-passkeys');
  await panel.getByTestId('vault-passkeys-none').waitFor();
  assert.match(await panel.getByTestId('vault-passkeys-passphrase').innerText(), /No vault passphrase is set: vyre vault passphrase in a terminal sets one/);
  assert.equal(await panel.getByTestId('vault-passkeys-problem').count(), 0, 'passkeys work at localhost');
  assert.equal(await panel.getByTestId('vault-passkey-new-name').inputValue(), 'Chrome on Linux', 'named after the browser');
  await panel.getByTestId('vault-passkey-new-name').fill('Test authenticator');
  await panel.getByTestId('vault-passkey-add').click();
  await panel.getByTestId('vault-passkey-added').filter({ hasText: 'Added “Test authenticator”.' }).waitFor();
  assert.equal(await panel.getByTestId('vault-passkey-new-name').inputValue(), '', 'the name is emptied');
  const listed = panel.getByTestId('vault-passkey');
  await waitFor('the passkey in the list', async () => (await listed.count()) === 1);
  assert.equal(await listed.getByTestId('vault-passkey-name').innerText(), 'Test authenticator');
  assert.equal(await listed.getByTestId('vault-passkey-site').innerText(), 'localhost');
  assert.match(await listed.getByTestId('vault-passkey-when').innerText(), /Added today \d\d:\d\d · Never used/);
  const kept = await rig.sock('vault.passkey.list');
  assert.equal(kept.passkeys.length, 1);
  assert.equal(kept.passkeys[0].rp_id, 'localhost');
  assert.equal(kept.passkeys[0].name, 'Test authenticator');
  const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId: authenticator });
  assert.equal(credentials.length, 1, 'the authenticator made one credential');
  assert.equal(Buffer.from(credentials[0].credentialId, 'base64').toString('base64url'), kept.passkeys[0].id);
  // The greeting's toast (no Claude here) goes before the screenshots.
  await page.getByTestId('toast').waitFor({ state: 'detached', timeout: 15_000 }).catch(() => {});
  await shot(page, 'vault-reveal-passkeys');
  await page.getByTestId('vault-passkeys-close').click();
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('Show asks the passkey for the password and shows the stored value; Copy, Hide; a value hides by itself after 30 s', T, async () => {
  await openItem('mail');
  assert.deepEqual(await row('mail').getByTestId('vault-field').evaluateAll((fs) => fs.map((f) => f.dataset.field)), ['username', 'password', 'totp', 'notes']);
  const password = fieldOf('mail', 'password');
  await password.getByTestId('vault-show').click();
  const value = password.getByTestId('vault-value');
  await value.waitFor();
  assert.equal(await value.innerText(), PASSWORD);
  assert.match(await password.getByTestId('vault-countdown').innerText(), /^Hides in (30|29|28|27|26|25) s$/);
  assert.equal(await fieldOf('mail', 'username').getByTestId('vault-value').count(), 0, 'only the field asked for');
  await keptNowhere('the password shown');
  await shot(page, 'vault-reveal-shown', password);

  await password.getByTestId('vault-copy').click();
  await password.getByTestId('vault-copied').filter({ hasText: 'Copied. The clipboard is emptied in 30 s' }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), PASSWORD);
  await password.getByTestId('vault-hide').click();
  await value.waitFor({ state: 'detached' });
  await password.getByTestId('vault-show').waitFor();
  await notOnPage('after Hide');
  await keptNowhere('after Hide');
  const used = (await rig.sock('vault.passkey.list')).passkeys[0];
  assert.ok(used.last_used_at, 'the passkey was used');

  // By itself after 30 s (the clipboard, copied over 30 s ago by then, is emptied too).
  const username = fieldOf('mail', 'username');
  await username.getByTestId('vault-show').click();
  await waitFor('the username', async () => (await username.getByTestId('vault-value').innerText()) === USERNAME);
  const shownAt = Date.now();
  await username.getByTestId('vault-value').waitFor({ state: 'detached', timeout: 40_000 });
  const after = Date.now() - shownAt;
  assert.ok(after > 27_000 && after < 34_000, `hidden after ${after} ms`);
  await notOnPage('after 30 s');
  await waitFor('the clipboard emptied', async () => (await page.evaluate(() => navigator.clipboard.readText())) === '', 5000);

  // A login's notes, over two lines.
  const notes = fieldOf('mail', 'notes');
  await notes.getByTestId('vault-show').click();
  await waitFor('the notes', async () => (await notes.getByTestId('vault-value').innerText()) === NOTES);
  // Closing the detail drops it.
  await row('mail').getByTestId('vault-item-open').click();
  await row('mail').getByTestId('vault-detail').waitFor({ state: 'detached' });
  await notOnPage('the detail closed');
  await keptNowhere('the detail closed');
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('a TOTP code is the seed\'s code for now, with its countdown; a login without a seed says so', T, async () => {
  await openItem('mail');
  const code = fieldOf('mail', 'totp');
  await code.getByTestId('vault-show').click();
  await code.getByTestId('vault-value').waitFor();
  const shown = await code.getByTestId('vault-value').innerText();
  assert.match(shown, /^\d{6}$/);
  const now = Date.now();
  assert.ok([totp(SEED, now), totp(SEED, now - 30_000)].includes(shown), `${shown} is the seed's code`);
  assert.match(await code.getByTestId('vault-countdown').innerText(), /^Changes in ([1-9]|[12]\d|30) s$/);
  await shot(page, 'vault-reveal-totp', code);
  await code.getByTestId('vault-hide').click();
  await row('mail').getByTestId('vault-item-open').click();

  await openItem('forum');
  const none = fieldOf('forum', 'totp');
  await none.getByTestId('vault-show').click();
  const error = none.getByTestId('vault-presence-error');
  await error.waitFor();
  assert.match(await error.innerText(), /^This login has no TOTP seed, so there is no code to show\./);
  assert.equal(await none.getByTestId('vault-presence-retry').count(), 0, 'nothing to try again');
  await none.getByTestId('vault-presence-cancel').click();
  await none.getByTestId('vault-show').waitFor();
  await row('forum').getByTestId('vault-item-open').click();
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('a login\'s TOTP from the site\'s QR code image: vyred reads it, and its code is the seed\'s', T, async () => {
  // The fixture is `qrencode` of otpauth://totp/Forge:sam?secret=JBSWY3DPEHPK3PXP&issuer=Forge.
  const QR_SEED = 'JBSWY3DPEHPK3PXP';
  await page.getByTestId('vault-open-add').click();
  const form = page.getByTestId('vault-add');
  await form.getByTestId('vault-add-name').fill('forge');
  await form.getByTestId('vault-add-username').fill('sam');
  await form.getByTestId('vault-add-password').fill('forge-pw-1');
  await form.getByTestId('vault-add-totp-qr').setInputFiles(new URL('./fixtures/totp-setup-qr.png', import.meta.url).pathname);
  await form.getByTestId('vault-add-totp-qr-picked').filter({ hasText: 'totp-setup-qr.png' }).waitFor();
  await shot(page, 'vault-reveal-totp-qr', form);
  await form.getByTestId('vault-add-save').click();
  await form.getByTestId('vault-add-done').filter({ hasText: 'forge' }).waitFor();
  assert.equal(await form.getByTestId('vault-add-totp-qr-picked').count(), 0, 'the image is let go once stored');
  await openItem('forge');
  const code = fieldOf('forge', 'totp');
  await code.getByTestId('vault-show').click();
  await code.getByTestId('vault-value').waitFor();
  const shown = await code.getByTestId('vault-value').innerText();
  const now = Date.now();
  assert.ok([totp(QR_SEED, now), totp(QR_SEED, now - 30_000)].includes(shown), `${shown} is the QR code's seed's code`);
  await code.getByTestId('vault-hide').click();
  await row('forge').getByTestId('vault-item-open').click();
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('when the authenticator does not verify the person, nothing is shown and it is said; Try again works once it does', T, async () => {
  await cdp.send('WebAuthn.setUserVerified', { authenticatorId: authenticator, isUserVerified: false });
  await openItem('mail');
  const password = fieldOf('mail', 'password');
  await password.getByTestId('vault-show').click();
  const error = password.getByTestId('vault-presence-error');
  await error.waitFor({ timeout: 30_000 });
  assert.match(await error.innerText(), /did not verify you/);
  assert.equal(await password.getByTestId('vault-value').count(), 0);
  assert.equal(await password.getByTestId('vault-use-passphrase').count(), 0, 'no passphrase is set yet');
  await notOnPage('refused');
  await shot(page, 'vault-reveal-refused', password);

  await cdp.send('WebAuthn.setUserVerified', { authenticatorId: authenticator, isUserVerified: true });
  await password.getByTestId('vault-presence-retry').click();
  await waitFor('the password', async () => (await password.getByTestId('vault-value').innerText()) === PASSWORD);
  await password.getByTestId('vault-hide').click();
  await row('mail').getByTestId('vault-item-open').click();
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('the vault passphrase: a wrong one is refused in words, the right one shows the value', T, async () => {
  await rig.sock('vault.passphrase', { passphrase: PASSPHRASE });
  // The passkey fails (not verified): the person picks the passphrase instead.
  await cdp.send('WebAuthn.setUserVerified', { authenticatorId: authenticator, isUserVerified: false });
  await openItem('api-key');
  assert.deepEqual(await row('api-key').getByTestId('vault-field').evaluateAll((fs) => fs.map((f) => f.dataset.field)), ['value']);
  const secret = fieldOf('api-key', 'value');
  await secret.getByTestId('vault-show').click();
  await secret.getByTestId('vault-presence-error').waitFor({ timeout: 30_000 });
  await secret.getByTestId('vault-use-passphrase').click();
  await cdp.send('WebAuthn.setUserVerified', { authenticatorId: authenticator, isUserVerified: true });
  const input = secret.getByTestId('vault-passphrase');
  assert.equal(await input.getAttribute('type'), 'password');
  assert.equal(await secret.getByTestId('vault-use-passkey').count(), 1, 'the passkey is still offered');
  await input.fill('not the passphrase');
  await secret.getByTestId('vault-passphrase-go').click();
  const error = secret.getByTestId('vault-presence-error');
  await error.filter({ hasText: 'That is not the vault passphrase.' }).waitFor();
  assert.equal(await input.inputValue(), '', 'the field is emptied as it is sent');
  assert.equal(await secret.getByTestId('vault-value').count(), 0);
  await shot(page, 'vault-reveal-wrong', secret);

  await input.fill(PASSPHRASE);
  await secret.getByTestId('vault-passphrase-go').click();
  await waitFor('the secret', async () => (await secret.getByTestId('vault-value').innerText()) === SECRET);
  await keptNowhere('the secret shown');
  await notOnPage('the secret shown', [PASSPHRASE]);
  await secret.getByTestId('vault-hide').click();
  await notOnPage('the secret hidden');
  await row('api-key').getByTestId('vault-item-open').click();
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('the passkey is removed, asked first; then Show asks for the passphrase at once', T, async () => {
  await page.getByTestId('vault-open-passkeys').click();
  const panel = page.getByTestId('vault-passkeys');
  await panel.getByTestId('vault-passkey').waitFor();
  assert.match(await panel.getByTestId('vault-passkey-when').innerText(), /· Used today \d\d:\d\d/);
  assert.equal(await panel.getByTestId('vault-passkeys-passphrase').innerText(), 'The vault passphrase works too.');
  await panel.getByTestId('vault-passkey-remove').click();
  const dialog = page.getByTestId('confirm');
  await dialog.getByTestId('confirm-ok').waitFor();
  assert.match(await dialog.innerText(), /Remove the passkey “Test authenticator”\?/);
  await dialog.getByTestId('confirm-cancel').click();
  assert.equal(await panel.getByTestId('vault-passkey').count(), 1, 'Cancel keeps it');
  await panel.getByTestId('vault-passkey-remove').click();
  await dialog.getByTestId('confirm-ok').click();
  await panel.getByTestId('vault-passkeys-none').waitFor();
  assert.deepEqual((await rig.sock('vault.passkey.list')).passkeys, []);
  await page.getByTestId('vault-passkeys-close').click();

  await openItem('mail');
  const notes = fieldOf('mail', 'notes');
  await notes.getByTestId('vault-show').click();
  const input = notes.getByTestId('vault-passphrase');
  await input.waitFor();
  assert.equal(await notes.getByTestId('vault-use-passkey').count(), 0, 'no passkey to offer');
  await shot(page, 'vault-reveal-passphrase', notes);
  await input.fill(PASSPHRASE);
  await input.press('Enter');
  await waitFor('the notes', async () => (await notes.getByTestId('vault-value').innerText()) === NOTES);
  await keptNowhere('the notes shown');
  await notes.getByTestId('vault-hide').click();
  await row('mail').getByTestId('vault-item-open').click();
  await notOnPage('all hidden');
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('at 127.0.0.1 the Passkeys panel says passkeys need a name, and the passphrase still shows a value', T, async () => {
  const other = await browser.context.newPage();
  const errors = [];
  other.on('pageerror', (e) => errors.push(String(e)));
  try {
    const { url } = await rig.sock('devices.link', {});
    assert.match(url, /^http:\/\/127\.0\.0\.1:/);
    await other.goto(url);
    await other.waitForURL((u) => u.pathname.startsWith('/app'));
    await other.goto(`${rig.base}/app/vault`);
    await other.getByTestId('vault-open-passkeys').click();
    const problem = other.getByTestId('vault-passkeys-problem');
    await problem.waitFor();
    assert.match(await problem.innerText(), /Passkeys need a name in the address, not a number like 127\.0\.0\.1\. On this machine, open Vyre at http:\/\/localhost:\d+\/app\/ instead/);
    assert.equal(await other.getByTestId('vault-passkey-add').count(), 0, 'no passkey can be made here');
    await shot(other, 'vault-reveal-ip');
    await other.getByTestId('vault-passkeys-close').click();

    await other.locator('[data-testid=vault-item][data-name="api-key"]').getByTestId('vault-item-open').click();
    const secret = other.locator('[data-testid=vault-field][data-field="value"]');
    await secret.getByTestId('vault-show').click();
    await secret.getByTestId('vault-passphrase').fill(PASSPHRASE);
    await secret.getByTestId('vault-passphrase-go').click();
    await waitFor('the secret', async () => (await secret.getByTestId('vault-value').innerText()) === SECRET);
    await secret.getByTestId('vault-hide').click();
    assert.deepEqual(errors, [], 'no script errors on the page');
  } finally {
    await other.close();
  }
});
