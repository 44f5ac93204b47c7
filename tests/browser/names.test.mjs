// This Vyre's own name, `<you>.vyre.run` or the person's own domain, from the app, against a
// real vyred whose private network is up (WireGuard on a loopback UDP port) and whose name
// directory and Cloudflare API are unreachable (http://127.0.0.1:9): the onboarding shows where
// the name is claimed (its browser may only read names.status), and when this device reaches a
// name held already, continues there once finished; Settings' "Your address" refuses a name that
// is not a DNS label before asking vyred, and a claim the directory cannot answer says so in
// words and leaves the form to try again; its own-domain form checks the domain first, says in
// words that Cloudflare could not be reached, and leaves no token in the page. A full claim (the
// directory or Cloudflare, ACME's DNS-01) needs pebble: the lead's Rust tests cover it; here the
// held views are checked with names.status answered in the page, and "this device reaches the
// name" with its health route answered by the test. No Claude Code needed.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Rig, waitFor } from './lib/rig.mjs';
import { onboardByScreens } from './lib/onboard.mjs';
import { DESKTOP, PHONE, SHOTS, openBrowser, shot, shootingTest, fromPage } from './lib/browser.mjs';

let rig;
let browser;
let page;
/** Every names.claim the page sent. */
const claims = [];

/** Every names.use_domain the page sent. */
const domains = [];
/** The person's own domain in the held views (answered in the page: no real Cloudflare here). */
const DOMAIN = 'vyre.example.com';
/** A Cloudflare token as pasted: it must never show in the page again. */
const TOKEN = 'cf-test-token-Zk3q9LmP0xVw7Rt2';

before(async () => {
  rig = await Rig.start('names', {
    config: {
      names: { directory: 'http://127.0.0.1:9', cloudflare: 'http://127.0.0.1:9' },
      network: { enabled: true, listen: '127.0.0.1:0' },
    },
  });
  // The app's pages are answered through a route below, which a page the worker served would
  // pass by.
  browser = await openBrowser({ serviceWorkers: 'block' });
  page = browser.page;
  page.on('request', (r) => {
    if (r.url().endsWith('/v1/tools/names.claim')) claims.push(r.postDataJSON());
    if (r.url().endsWith('/v1/tools/names.use_domain')) domains.push(r.postDataJSON());
  });
  // The app's pages let the page knock at the name's health route, as vyred's own pages do once
  // it holds a name (their Content-Security-Policy lists that route in connect-src); here the
  // name is only answered in the page, so the test adds it.
  await browser.context.route(`${rig.base}/**`, async (route) => {
    if (route.request().resourceType() !== 'document') return route.fallback();
    const response = await route.fetch();
    const headers = response.headers();
    const csp = headers['content-security-policy'];
    if (csp) headers['content-security-policy'] = csp.replace(/connect-src ([^;]*)/, `connect-src $1 https://${DOMAIN}/v1/health`);
    return route.fulfill({ response, headers });
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

/** names.status as a vyred holding the person's own domain answers it, with its certificate. */
function heldDomain() {
  const day = 86_400_000;
  const notAfter = Date.now() + 80 * day;
  return { fqdn: DOMAIN, via: 'cloudflare', url: `https://${DOMAIN}/app/`, not_after: notAfter, renews_at: notAfter - 30 * day, error: null };
}

/** The name's health route answered (this device reaches the name) or not (no tunnel). */
async function nameAnswers(yes) {
  await browser.context.unroute(`https://${DOMAIN}/v1/health`).catch(() => {});
  await browser.context.route(`https://${DOMAIN}/v1/health`, (route) =>
    yes ? route.fulfill({ status: 200, json: { data: { version: 'test' } } }) : route.abort('addressunreachable'),
  );
}

/** The app at the name: a page of the test's, to see that the browser went there. */
async function nameServes() {
  await browser.context.route(`https://${DOMAIN}/app/**`, (route) =>
    route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>Vyre at its name</title><p id="there">there</p>' }),
  );
}

it('the onboarding says where the name is claimed or a domain is used, and continues at a name this device reaches once finished', T, async () => {
  const network = await rig.sock('network.status');
  assert.equal(network.up, true, JSON.stringify(network));
  await nameServes();
  await onboardByScreens(rig, page, {
    address: async () => {
      const status = await fromPage(page, 'names.status');
      assert.deepEqual(status.data, { fqdn: null, via: null, url: null, not_after: null, renews_at: null, error: null }, JSON.stringify(status));
      const refused = await fromPage(page, 'names.claim', { name: 'alex' });
      assert.ok(refused.error, JSON.stringify(refused));
      // Nor a domain: names.use_domain is not for the onboarding's browser, and its form is not
      // offered here.
      const domain = await fromPage(page, 'names.use_domain', { domain: DOMAIN, provider: 'cloudflare', token: TOKEN });
      assert.equal(domain.error?.code, 'onboarding_only', JSON.stringify(domain));
      assert.equal((await rig.sock('names.status')).fqdn, null);

      const later = page.getByTestId('ob-name-later');
      await later.waitFor();
      const text = await later.innerText();
      assert.match(text, /alex\.vyre\.run/);
      assert.match(text, /You claim it, or use a domain of your own, in Settings after you finish/);
      assert.match(text, /only devices on your private network/);
      // The network is up already: no "once a phone or laptop has joined".
      assert.doesNotMatch(text, /once a phone/);
      // What the previous step said of the network stays.
      assert.ok((await page.getByTestId('ob-network-address').innerText()).includes(network.address));
      assert.equal(await page.getByTestId('ob-name').count(), 0);
      await page.waitForTimeout(300);
      assert.equal(await page.getByTestId('domain-open').count(), 0, 'no own-domain form in the onboarding');
      await shot(page, 'names-onboard-address');

      // Where this browser may use a domain of its own (a vyred that lists names.use_domain for
      // the onboarding's browser: answered in the page, as is the domain's answer), the form is
      // here. Once the domain is held and this device reaches it, the step offers to continue
      // there when the onboarding is finished, not before: its sign-in is this address's.
      const tools = (u) => u.pathname === '/v1/tools';
      await page.route(tools, (route) => route.fulfill({ json: { data: [{ name: 'names.status' }, { name: 'names.use_domain' }] } }));
      await page.route('**/v1/tools/names.use_domain', (route) => route.fulfill({ json: { data: heldDomain() } }));
      await nameAnswers(true);
      await page.getByRole('button', { name: 'Back', exact: true }).click();
      await page.getByTestId('ob-skip').click();
      await later.filter({ hasText: 'a domain of your own can be set now' }).waitFor();
      await page.getByTestId('domain-open').click();
      await page.getByTestId('domain-input').fill(DOMAIN);
      await page.getByTestId('domain-token').fill(TOKEN);
      await shot(page, 'names-onboard-domain-form');
      await page.getByTestId('domain-use').click();
      const held = page.getByTestId('ob-name');
      await held.filter({ hasText: DOMAIN }).waitFor();
      assert.deepEqual(domains.at(-1), { domain: DOMAIN, provider: 'cloudflare', token: TOKEN });
      assert.match(await held.innerText(), /\(your own domain, through Cloudflare; certificate valid until /);
      assert.equal(await page.getByTestId('domain-form').count(), 0);
      assert.ok(!(await page.content()).includes(TOKEN), 'the token is not in the page');
      // The step is done.
      await waitFor('the address step done', async () => (await rig.sock('onboarding.state')).steps.address === 'done');
      const move = page.getByTestId('ob-name-move');
      await move.waitFor();
      assert.match(await move.innerText(), new RegExp(`Continue at ${DOMAIN.replace(/\./g, '\\.')} when I finish`));
      assert.equal(await page.getByTestId('ob-name-move-after').isChecked(), true, 'ticked unless said otherwise');
      await noToast().catch(() => {});
      await shot(page, 'names-onboard-move');
      await page.unroute(tools);
      await page.unroute('**/v1/tools/names.use_domain');
    },
  });
  // Finished: the app goes on at the name (the test's page there), at the app's start.
  await page.waitForURL(`https://${DOMAIN}/app/`);
  assert.equal(await page.locator('#there').innerText(), 'there');
  assert.equal((await rig.sock('onboarding.state')).steps.address, 'done', 'a step done stays done');
  await nameAnswers(false);
  await browser.context.unroute(`https://${DOMAIN}/app/**`);
  // Back to this machine's address for the rest (the browser is signed in there now).
  await page.goto(`${rig.base}/app/`);
  await page.locator('[data-nav=settings]').waitFor();
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

const domainForm = () => page.getByTestId('domain-form');
const domainField = () => page.getByTestId('domain-input');
const tokenField = () => page.getByTestId('domain-token');
const useButton = () => page.getByTestId('domain-use');

it('"Use my own domain instead" opens the domain\'s form, which checks the domain and asks for the token before asking vyred', T, async () => {
  domains.length = 0;
  await page.getByTestId('domain-open').click();
  await domainForm().waitFor();
  // In place of the claim form, not beside it.
  assert.equal(await form().count(), 0);
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'own-domain', 'the domain has the focus');
  assert.equal(await tokenField().getAttribute('type'), 'password');
  assert.equal(await tokenField().getAttribute('autocomplete'), 'off');
  assert.match(await page.getByTestId('domain-token-hint').innerText(), /Zone:Read and DNS:Edit.*Vyre keeps it in its vault/s);
  assert.equal(await useButton().isDisabled(), true, 'nothing typed: nothing to use');

  await domainField().fill('vyre example');
  await useButton().click();
  const problem = page.getByTestId('domain-problem');
  await problem.waitFor();
  assert.match(await problem.innerText(), /^A domain is names joined by dots, like vyre\.example\.com/);
  assert.equal(await domainField().getAttribute('aria-invalid'), 'true');
  await domainField().fill('alex.vyre.run');
  await problem.filter({ hasText: 'claim it instead' }).waitFor();
  // A pasted address is fine: what is sent is the domain alone.
  await domainField().fill(`https://${DOMAIN.toUpperCase()}/`);
  await problem.waitFor({ state: 'detached' });

  // No token, and none kept: asked for, not sent.
  await useButton().click();
  await page.getByTestId('domain-token-missing').waitFor();
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'own-domain-token');
  await page.waitForTimeout(300);
  assert.deepEqual(domains, [], 'no names.use_domain was sent');
  await tokenField().fill(TOKEN);
  await page.getByTestId('domain-token-missing').waitFor({ state: 'detached' });
  await noToast().catch(() => {});
  await shots('names-settings-domain-form');
});

it('a domain Cloudflare cannot be reached for says so in words, and the token is gone from the page', T, async () => {
  // Held back a moment, to see the form while it runs.
  let release;
  const held = new Promise((r) => (release = r));
  let sent;
  const passed = new Promise((r) => (sent = r));
  await page.route('**/v1/tools/names.use_domain', async (route) => {
    await held;
    await route.continue();
    sent();
  });
  await useButton().click();
  await waitFor('the domain to be tried', async () => (await useButton().innerText()).trim() === 'Getting the certificate…');
  assert.equal(await domainField().isDisabled(), true);
  assert.equal(await tokenField().isDisabled(), true);
  assert.equal(await tokenField().inputValue(), '', 'the token left the field as it was sent');
  assert.match(await domainForm().innerText(), /can take a minute/);
  release();
  await passed;
  await page.unroute('**/v1/tools/names.use_domain');

  const error = page.getByTestId('domain-error');
  await error.waitFor();
  const text = await error.innerText();
  assert.match(text, /^Cloudflare could not be reached\. Check this machine’s internet connection and try again\./);
  // vyred's own message follows.
  assert.match(text.split('\n').slice(1).join(' '), /\S/);
  assert.deepEqual(domains, [{ domain: DOMAIN, provider: 'cloudflare', token: TOKEN }]);
  // The form is back, the domain kept, the token not: nothing in the page shows it.
  assert.equal((await useButton().innerText()).trim(), 'Use');
  assert.equal(await domainField().inputValue(), `https://${DOMAIN.toUpperCase()}/`);
  assert.equal(await tokenField().inputValue(), '');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'own-domain-token', 'the focus is where the token goes again');
  assert.ok(!(await page.content()).includes(TOKEN), 'the token is not in the page');
  assert.ok(!(await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }))).includes(TOKEN));
  // A token that reached no zone is not kept; no name is held.
  assert.ok(!(await rig.sock('vault.list')).some((i) => i.name === 'dns-cloudflare'));
  assert.equal((await rig.sock('names.status')).fqdn, null);
  await shots('names-settings-domain-unreachable');

  // Cancel: the claim form again, and no trace of the domain's form.
  await page.getByTestId('domain-cancel').click();
  await form().waitFor();
  assert.equal(await domainForm().count(), 0);
  assert.equal(await page.getByTestId('domain-open').count(), 1);
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('a name held shows as a link, with its certificate\'s dates, any trouble, and Renew now', T, async () => {
  // As a vyred holding a name answers (a real claim needs an ACME server: the lead's Rust test).
  const day = 86_400_000;
  const notAfter = Date.now() + 80 * day;
  const held = { fqdn: 'alex.vyre.run', via: 'directory', url: 'https://alex.vyre.run/app/', not_after: notAfter, renews_at: notAfter - 30 * day, error: null };
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
    // A vyre.run name: nothing said of how it is kept, and no own-domain form.
    assert.equal(await page.getByTestId('name-via').count(), 0);
    assert.equal(await page.getByTestId('domain-open').count(), 0);
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

it('the person\'s own domain held: said so, and "Continue there" once this device reaches it', T, async () => {
  const held = heldDomain();
  await page.route('**/v1/tools/names.status', (route) => route.fulfill({ json: { data: held } }));
  // No tunnel on this device yet: nothing answers at the name.
  await nameAnswers(false);
  try {
    await page.goto(`${rig.base}/app/settings`);
    const name = page.getByTestId('name');
    await waitFor('the held view', async () => (await name.getAttribute('data-claimed')) === 'true');
    assert.equal(await name.getAttribute('data-via'), 'cloudflare');
    assert.equal(await page.getByTestId('name-link').innerText(), DOMAIN);
    assert.equal(await page.getByTestId('name-via').innerText(), 'Your own domain, through Cloudflare.');
    // A held name has no forms: neither a claim nor another domain.
    assert.equal(await form().count(), 0);
    assert.equal(await page.getByTestId('domain-open').count(), 0);
    await page.waitForTimeout(1000);
    assert.equal(await page.getByTestId('name-reachable').count(), 0, 'not reached: nothing to continue at');

    // The tunnel comes up: the next knock (within 15 s) finds the name.
    await nameAnswers(true);
    const reach = page.getByTestId('name-reachable');
    await reach.waitFor({ timeout: 25_000 });
    assert.equal(await reach.innerText().then((t) => t.split('\n')[0]), `Vyre is reachable at ${DOMAIN} on this device.`);
    await noToast().catch(() => {});
    await shots('names-settings-domain-reachable');

    // Continue there: the same page of the app, at the name.
    await nameServes();
    await page.getByTestId('name-continue').click();
    await page.waitForURL(`https://${DOMAIN}/app/settings`);
    assert.equal(await page.locator('#there').innerText(), 'there');
  } finally {
    await page.unroute('**/v1/tools/names.status');
    await browser.context.unroute(`https://${DOMAIN}/v1/health`);
    await browser.context.unroute(`https://${DOMAIN}/app/**`);
  }
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});
