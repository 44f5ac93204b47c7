// This Vyre's own name, `<you>.vyre.run`, from the app, against a real vyred whose private
// network is up (WireGuard on a loopback UDP port) and whose name directory is unreachable
// (http://127.0.0.1:9): the onboarding shows where the name is claimed (its browser may only
// read names.status); Settings' "Your address" refuses a name that is not a DNS label before
// asking vyred, and a claim the directory cannot answer says so in words and leaves the form to
// try again. A full claim (the directory, ACME's DNS-01) needs pebble: the lead's Rust test
// covers it; here the claimed view is checked with names.status answered in the page. No
// Claude Code needed.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Rig, waitFor } from './lib/rig.mjs';
import { DESKTOP, PHONE, SHOTS, openBrowser, shot, shootingTest, fromPage } from './lib/browser.mjs';

let rig;
let browser;
let page;
/** Every names.claim the page sent. */
const claims = [];

before(async () => {
  rig = await Rig.start('names', {
    config: { names: { directory: 'http://127.0.0.1:9' }, network: { enabled: true, listen: '127.0.0.1:0' } },
  });
  browser = await openBrowser();
  page = browser.page;
  page.on('request', (r) => {
    if (r.url().endsWith('/v1/tools/names.claim')) claims.push(r.postDataJSON());
  });
});

after(async () => {
  await browser?.close();
  await rig?.stop();
});

const T = { timeout: 120_000 };

const it = shootingTest('names-', () => page);


/** The greeting's toast (no Claude Code here) gone, for a screenshot that shows the page. */
async function noToast(p = page) {
  await p.getByTestId('toast').waitFor({ state: 'detached', timeout: 15_000 });
}

/** Screenshots of Settings at "Your address": desktop and phone (shot() checks the phone has no
 * sideways scroll, and leaves the page at its top there), then the section itself on a phone. */
async function shots(name) {
  await page.getByTestId('your-address').scrollIntoViewIfNeeded();
  await shot(page, name);
  await page.setViewportSize(PHONE);
  await page.getByTestId('your-address').scrollIntoViewIfNeeded();
  await page.waitForTimeout(150);
  await page.screenshot({ path: join(SHOTS, `${name}-section-phone.png`) });
  await page.setViewportSize(DESKTOP);
  await page.getByTestId('your-address').scrollIntoViewIfNeeded();
}

const form = () => page.getByTestId('name-form');
const claimButton = () => page.getByTestId('name-claim');
const field = () => page.getByTestId('name-input');

it('the onboarding says the name is claimed in Settings; its browser may read names.status, not claim', T, async () => {
  const network = await rig.sock('network.status');
  assert.equal(network.up, true, JSON.stringify(network));
  await page.goto(await rig.onboardLink());
  await page.waitForURL((u) => u.pathname === '/onboard' && !u.search.includes('t='));
  const step = page.getByTestId('ob-step');
  await page.getByTestId('ob-name').fill('Ada');
  await page.getByTestId('ob-save').click();
  await waitFor('the Claude step', async () => (await step.getAttribute('data-step')) === 'claude');
  await page.getByTestId('ob-skip').click();
  await waitFor('the address step', async () => (await step.getAttribute('data-step')) === 'address');

  const status = await fromPage(page, 'names.status');
  assert.deepEqual(status.data, { fqdn: null, url: null, not_after: null, renews_at: null, error: null }, JSON.stringify(status));
  const refused = await fromPage(page, 'names.claim', { name: 'alex' });
  assert.ok(refused.error, JSON.stringify(refused));
  assert.equal((await rig.sock('names.status')).fqdn, null);

  const later = page.getByTestId('ob-name-later');
  await later.waitFor();
  const text = await later.innerText();
  assert.match(text, /alex\.vyre\.run/);
  assert.match(text, /in Settings after you finish/);
  assert.match(text, /only devices on your private network/);
  // The network is up already: no "once a phone or laptop has joined".
  assert.doesNotMatch(text, /once a phone/);
  // What the previous step said of the network stays.
  assert.ok((await page.getByTestId('ob-network-address').innerText()).includes(network.address));
  assert.equal(await page.getByTestId('ob-name').count(), 0);
  await shot(page, 'names-onboard-address');

  await page.getByTestId('ob-continue').click();
  await waitFor('the history step', async () => (await step.getAttribute('data-step')) === 'history');
  await page.getByTestId('ob-skip').click();
  await waitFor('the devices step', async () => (await step.getAttribute('data-step')) === 'devices');
  await page.getByTestId('ob-finish').click();
  await page.waitForURL((u) => u.pathname === '/app/');
});

it('Settings\' "Your address" refuses a name that is not a label, without asking vyred', T, async () => {
  claims.length = 0; // the onboarding's refused one
  await page.click('[data-nav=settings]');
  await form().waitFor();
  assert.equal(await page.getByTestId('name').getAttribute('data-claimed'), 'false');
  assert.match(await page.getByTestId('your-address').innerText(), /\.vyre\.run/);
  assert.match(await form().innerText(), /private address, so only devices on your private network open it/);
  assert.equal(await claimButton().isDisabled(), true, 'nothing typed: nothing to claim');

  await field().fill('Bad Name');
  await claimButton().click();
  const problem = page.getByTestId('name-problem');
  await problem.waitFor();
  assert.match(await problem.innerText(), /lowercase letters, digits and hyphens.*“bad-name” would do/);
  assert.equal(await field().getAttribute('aria-invalid'), 'true');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'name-label', 'the field keeps the focus');
  // Also with Enter.
  await field().press('Enter');
  await page.waitForTimeout(300);
  assert.deepEqual(claims, [], 'no names.claim was sent');
  await noToast();
  await shots('names-settings-bad-label');

  // Fixed as it is typed.
  await field().fill('alex');
  await problem.waitFor({ state: 'detached' });
  assert.equal(await field().getAttribute('aria-invalid'), 'false');
});

it('a claim the name directory cannot answer says so in words, and the form stays usable', T, async () => {
  // Held back a moment, to see the form while it runs.
  let release;
  const held = new Promise((r) => (release = r));
  let sent;
  const passed = new Promise((r) => (sent = r));
  await page.route('**/v1/tools/names.claim', async (route) => {
    await held;
    await route.continue();
    sent();
  });
  await claimButton().click();
  await waitFor('the claim to run', async () => (await claimButton().innerText()).trim() === 'Getting the certificate…');
  assert.equal(await claimButton().isDisabled(), true);
  assert.equal(await field().isDisabled(), true);
  assert.match(await form().innerText(), /can take a minute/);
  await shots('names-settings-claiming');
  release();
  await passed;
  await page.unroute('**/v1/tools/names.claim');

  const error = page.getByTestId('name-error');
  await error.waitFor();
  const text = await error.innerText();
  assert.match(text, /The name directory could not be reached/);
  // vyred's own message follows.
  assert.match(text, /cannot be reached/);
  assert.deepEqual(claims, [{ name: 'alex' }]);
  assert.equal((await claimButton().innerText()).trim(), 'Claim');
  assert.equal(await claimButton().isDisabled(), false);
  assert.equal(await field().isDisabled(), false);
  assert.equal(await field().inputValue(), 'alex');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'name-label', 'the focus is back in the field');
  assert.equal((await rig.sock('names.status')).fqdn, null, 'no name is held');
  await shots('names-settings-unreachable');

  // Again, with a typed suffix: the same label is sent, the same answer comes.
  await field().fill('alex.vyre.run');
  await claimButton().click();
  await waitFor('the second claim', () => claims.length === 2);
  await waitFor('the form back', async () => (await claimButton().innerText()).trim() === 'Claim');
  assert.deepEqual(claims[1], { name: 'alex' });
  assert.match(await error.innerText(), /could not be reached/);
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('a name held shows as a link, with its certificate\'s dates, any trouble, and Renew now', T, async () => {
  // As a vyred holding a name answers (a real claim needs an ACME server: the lead's Rust test).
  const day = 86_400_000;
  const notAfter = Date.now() + 80 * day;
  const held = { fqdn: 'alex.vyre.run', url: 'https://alex.vyre.run/app/', not_after: notAfter, renews_at: notAfter - 30 * day, error: null };
  await page.route('**/v1/tools/names.status', (route) => route.fulfill({ json: { data: held } }));
  let renewed = 0;
  await page.route('**/v1/tools/names.renew', (route) => {
    renewed += 1;
    return route.fulfill({ status: 503, json: { error: { code: 'certificate_failed', message: 'the ACME server said: rate limited' } } });
  });
  try {
    await page.reload();
    const name = page.getByTestId('name');
    await waitFor('the claimed view', async () => (await name.getAttribute('data-claimed')) === 'true');
    const link = page.getByTestId('name-link');
    assert.equal(await link.innerText(), 'alex.vyre.run');
    assert.equal(await link.getAttribute('href'), 'https://alex.vyre.run/app/');
    // The page's own way of writing a day (the browser's language).
    const [until, renews] = await page.evaluate(
      (ms) => ms.map((t) => new Date(t).toLocaleDateString(undefined, { day: 'numeric', month: 'long', year: 'numeric' })),
      [notAfter, notAfter - 30 * day],
    );
    assert.equal(await page.getByTestId('name-certificate').innerText(), `certificate valid until ${until}, renews ${renews}.`);
    assert.equal(await page.getByTestId('name-warning').count(), 0);
    const network = await rig.sock('network.status');
    assert.ok((await name.innerText()).includes(network.address), 'the private address it points at');
    // The onboarding's step, opened again from Settings, shows the name too.
    await page.getByTestId('settings-step-address').click();
    await page.getByTestId('ob-name').filter({ hasText: 'alex.vyre.run' }).waitFor();
    await page.getByTestId('ob-continue').click();

    // A renewal that fails says why, and the last error shows as a warning.
    held.error = 'the ACME server said: rate limited';
    await page.getByTestId('name-renew').click();
    const error = page.getByTestId('name-error');
    await error.waitFor();
    assert.match(await error.innerText(), /could not be renewed.*rate limited/s);
    // Said once, not again as the status's warning.
    assert.equal(await page.getByTestId('name-warning').count(), 0);
    assert.equal(renewed, 1);
    assert.equal((await page.getByTestId('name-renew').innerText()).trim(), 'Renew now');
    await noToast().catch(() => {});
    await shots('names-settings-renew-failed');
    // Later, the status's error is the warning.
    await page.reload();
    await page.getByTestId('name-warning').filter({ hasText: 'rate limited' }).waitFor();
    assert.equal(await page.getByTestId('name-error').count(), 0);
    await shots('names-settings-claimed');
  } finally {
    await page.unroute('**/v1/tools/names.status');
    await page.unroute('**/v1/tools/names.renew');
  }
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});
