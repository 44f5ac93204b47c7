// Passes (ADR 0036) in the Vault screen, in Chromium against two real vyreds: the giver's app at
// http://127.0.0.1:<port> and the taker's at http://localhost:<port> (two hosts, so each keeps
// its own cookie in the one browser). An item is shared relayed from its detail (Share…, in
// the page: who it is for is asked first, a plain-http address on the internet is refused in
// vyred's words); the code is shown once with Copy and vyred's note, and goes with the panel.
// The taker adds it under a new name: listed as a pass with where it came from, nothing to
// show, offered to the Gate only; granted to the Gate, a request with it goes through the
// giver's Gate (the value filled in there, masked in the answer) and is counted as a use. The
// giver revokes it from the Passes panel, asked in the page (Cancel keeps it), and the taker's
// next request is refused. A sealed pass: the taker gets a key (with Copy and how long it is
// good for), the giver shares to it, the taker adds the code and has the item, of its kind; the
// same code again is refused; revoking it says to rotate, as a warning. An offboarding is
// checked (a dry run: what would be revoked, what to rotate, where an item was sent) and then
// done. No item's value is on either page at any point; no script error. No Claude Code needed.
// Screenshots: screenshots/vault-passes-{share,code,taken,passes,sealed,offboard}-{desktop,phone}.png.

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { Rig, waitFor } from './lib/rig.mjs';
import { onboardByScreens } from './lib/onboard.mjs';
import { openBrowser, shootingTest, shot } from './lib/browser.mjs';

const USERNAME = 'ada-gh-user-Q2w';
const PASSWORD = 'pw-pass-relay-8d3e1f';
const SECRET = 'sk-sealed-SECRET-41bc';
const VALUES = [USERNAME, PASSWORD, SECRET];

let giver;
let taker;
let browser;
/** The giver's app (127.0.0.1) and the taker's (localhost). */
let page;
let other;
let takerBase;
/** A site on this machine the giver's Gate may reach (its `gate.local`): what it was sent. */
let site;
let siteUrl;
const received = [];

before(async () => {
  site = http.createServer((req, res) => {
    received.push({ method: req.method, url: req.url, authorization: req.headers.authorization ?? null });
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ ok: true, echoed: req.headers.authorization ?? null }));
  });
  await new Promise((ok) => site.listen(0, '127.0.0.1', ok));
  siteUrl = `http://127.0.0.1:${site.address().port}`;
  giver = await Rig.start('vault-passes-giver', { config: { gate: { local: [`127.0.0.1:${site.address().port}`] } } });
  taker = await Rig.start('vault-passes-taker');
  takerBase = taker.base.replace('//127.0.0.1:', '//localhost:');
  assert.notEqual(takerBase, taker.base, `the taker listens at ${taker.base}`);

  browser = await openBrowser();
  page = browser.page;
  await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: giver.base });
  await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: takerBase });
  await onboardByScreens(giver, page);
  await page.waitForURL((u) => u.pathname.startsWith('/app'));
  other = await browser.context.newPage();
  other.on('pageerror', (e) => browser.errors.push(String(e)));
  await onboardByScreens({ onboardLink: async () => (await taker.onboardLink()).replace('//127.0.0.1:', '//localhost:') }, other);
  await other.waitForURL((u) => u.pathname.startsWith('/app'));

  await giver.sock('vault.put', { name: 'github', kind: 'login', username: USERNAME, password: PASSWORD });
  await giver.sock('vault.put', { name: 'api-key', kind: 'secret', value: SECRET });
  for (const p of [page, other]) {
    await p.locator('[data-nav="vault"]').click();
    await p.waitForURL((u) => u.pathname === '/app/vault');
    await p.getByTestId('toast').waitFor({ state: 'detached', timeout: 15_000 }).catch(() => {});
  }
});

after(async () => {
  await browser?.close();
  await giver?.stop();
  await taker?.stop();
  site?.close();
});

const T = { timeout: 120_000 };
const it = shootingTest('vault-passes-', () => page);
const row = (p, name) => p.locator(`[data-testid=vault-item][data-name="${name}"]`);

async function openItem(p, name) {
  const detail = row(p, name).getByTestId('vault-detail');
  if (!(await detail.isVisible())) await row(p, name).getByTestId('vault-item-open').click();
  await detail.waitFor();
  return detail;
}

async function openPasses(p) {
  const panel = p.getByTestId('vault-passes');
  if (!(await panel.isVisible())) await p.getByTestId('vault-open-passes').click();
  await panel.waitFor();
  return panel;
}

/** No item's value on either page: in its text or a field. */
async function noValues(where) {
  for (const p of [page, other]) {
    const text = await p.evaluate(() => document.body.innerText);
    const fields = await p.evaluate(() => [...document.querySelectorAll('input, textarea')].map((e) => e.value).join('\n'));
    for (const v of VALUES) {
      assert.ok(!text.includes(v), `${where}: the page shows ${v}`);
      assert.ok(!fields.includes(v), `${where}: a field holds ${v}`);
    }
  }
}

let relayedCode;

it('an item is shared relayed from its detail: asked who for, refused in words, then its code shown once with Copy', T, async () => {
  const detail = await openItem(page, 'github');
  const passes = detail.getByTestId('vault-item-passes');
  await passes.getByTestId('vault-item-passes-none').waitFor();
  await passes.getByTestId('vault-share-open').click();
  const share = passes.getByTestId('vault-share');
  assert.equal(await share.getByTestId('vault-share-relayed').isChecked(), true, 'relayed by default');
  await share.getByTestId('vault-share-go').click();
  await share.getByTestId('vault-share-error').filter({ hasText: 'Say who it is for' }).waitFor();
  assert.deepEqual(await giver.sock('vault.pass.list'), [], 'nothing was sent');

  await share.getByTestId('vault-share-to').fill('Sam');
  await share.getByTestId('vault-share-url').fill('http://vyre.example.com');
  await share.getByTestId('vault-share-go').click();
  const refused = share.getByTestId('vault-share-error');
  await refused.waitFor();
  assert.match(await refused.innerText(), /plain http|crosses the network|https/, 'vyred\'s words');
  assert.deepEqual(await giver.sock('vault.pass.list'), [], 'no pass made');
  await shot(page, 'vault-passes-share', share);

  await share.getByTestId('vault-share-url').fill('');
  await share.getByTestId('vault-share-go').click();
  const code = share.getByTestId('vault-share-code');
  await code.waitFor();
  relayedCode = await code.inputValue();
  assert.match(relayedCode, /^vyre-pass-1\.[A-Za-z0-9_-]+$/);
  assert.equal(await code.getAttribute('readonly'), '');
  const code64 = JSON.parse(Buffer.from(relayedCode.slice('vyre-pass-1.'.length), 'base64url').toString());
  assert.equal(code64.url, giver.base, 'this vyred\'s own address');
  assert.match(await share.getByTestId('vault-share-for').innerText(), /A relayed pass for Sam/);
  assert.match(await share.getByTestId('vault-share-note').innerText(), /^Give Sam this code\. .*revoking ends that at once\./);
  assert.equal(await share.getByTestId('vault-share-error').count(), 0, 'the refusal is gone');
  await share.getByTestId('vault-share-code-copy').click();
  await share.getByTestId('vault-share-code-copied').filter({ hasText: 'Copied.' }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), relayedCode);
  await shot(page, 'vault-passes-code', share);

  const listed = passes.getByTestId('vault-pass');
  await waitFor('the pass in the item\'s detail', async () => (await listed.count()) === 1);
  assert.equal(await listed.getAttribute('data-to'), 'Sam');
  assert.equal(await listed.getByTestId('vault-pass-kind').innerText(), 'Relayed');
  assert.equal(await listed.getByTestId('vault-pass-uses').innerText(), 'Never used');
  assert.match(await listed.getByTestId('vault-pass-state').innerText(), /^Given today \d\d:\d\d, not taken yet$/);
  const [given] = await giver.sock('vault.pass.list');
  assert.equal(given.item, 'github');
  assert.equal(given.to, 'Sam');
  assert.equal(given.kind, 'relayed');

  await share.getByTestId('vault-share-close').click();
  await share.waitFor({ state: 'detached' });
  const fields = await page.evaluate(() => [...document.querySelectorAll('input, textarea')].map((e) => e.value).join('\n'));
  assert.ok(!fields.includes(relayedCode) && !(await page.evaluate(() => document.body.innerText)).includes(relayedCode), 'the code goes with the panel');
  await noValues('shared');
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('the taker adds the code under a new name: a pass with where it came from, nothing to show, for the Gate only', T, async () => {
  const panel = await openPasses(other);
  await panel.getByTestId('vault-passes-none').waitFor();
  const form = panel.getByTestId('vault-pass-accept');
  assert.equal(await form.getByTestId('vault-accept-code').getAttribute('type'), 'password');
  await form.getByTestId('vault-accept-code').fill(relayedCode);
  await form.getByTestId('vault-accept-name').fill('sams-github');
  await form.getByTestId('vault-accept-go').click();
  const done = form.getByTestId('vault-accept-done');
  await done.waitFor();
  assert.match(await done.innerText(), new RegExp(`^Added “sams-github”, a pass from ${giver.base.replace(/\./g, '\\.')}\\. Its value stays with the giver`));
  assert.equal(await form.getByTestId('vault-accept-code').inputValue(), '', 'the code is emptied');

  await row(other, 'sams-github').waitFor();
  assert.equal(await row(other, 'sams-github').getByTestId('vault-item-kind').innerText(), 'Pass (relayed)');
  assert.equal(await row(other, 'sams-github').getByTestId('vault-item-from').innerText(), `from ${giver.base}`);
  const [kept] = await taker.sock('vault.list');
  assert.equal(kept.kind, 'pass');
  assert.equal(kept.from, giver.base);
  await other.getByTestId('vault-passes-close').click();

  const detail = await openItem(other, 'sams-github');
  assert.equal(await detail.getByTestId('vault-detail-from').innerText(), giver.base);
  assert.match(await detail.getByTestId('vault-detail-pass').innerText(), /^The value stays with the giver: there is nothing to show here\./);
  assert.equal(await detail.getByTestId('vault-show').count(), 0, 'nothing to reveal');
  assert.equal(await detail.getByTestId('vault-fields').count(), 0);
  assert.equal(await detail.getByTestId('vault-share-open').count(), 0, 'a pass is not passed on');
  const grants = detail.getByTestId('vault-grants');
  assert.deepEqual(await grants.getByTestId('vault-grant-to').locator('option').allInnerTexts(), ['The Gate'], 'for the Gate only');
  await shot(other, 'vault-passes-taken', detail);
  await grants.getByTestId('vault-grant-go').click();
  const dialog = other.getByTestId('confirm');
  await dialog.getByTestId('confirm-ok').waitFor();
  assert.match(await dialog.innerText(), /Grant “sams-github” to the Gate\?/);
  await dialog.getByTestId('confirm-ok').click();
  await grants.getByTestId('vault-grant').waitFor();
  assert.deepEqual((await taker.sock('vault.list'))[0].grants, ['module:gate']);

  // A request with it goes through the giver's Gate, which fills the value in and masks it in
  // the answer; the giver counts the use.
  const answer = await taker.sock('gate.request', { method: 'GET', url: `${siteUrl}/who`, headers: { Authorization: 'Bearer {{vault:sams-github/password}}' } });
  assert.equal(answer.status, 200);
  assert.equal(received.at(-1)?.authorization, `Bearer ${PASSWORD}`, 'the giver filled the value in');
  assert.ok(!JSON.stringify(answer).includes(PASSWORD), 'masked in the answer');
  await openItem(page, 'github');
  await waitFor('the use in the giver\'s list', async () => /^Used once, last today/.test(await row(page, 'github').getByTestId('vault-pass-uses').innerText()), 15_000);
  assert.match(await row(page, 'github').getByTestId('vault-pass-state').innerText(), /^Taken today/, 'bound to the taker\'s Vyre');
  await waitFor('the item used through a pass', async () => / through a pass$/.test(await row(page, 'github').getByTestId('vault-detail-used').innerText()), 15_000);
  await noValues('taken');
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('the giver revokes it from the Passes panel, asked in the page first; the taker\'s next request is refused', T, async () => {
  const panel = await openPasses(page);
  const pass = panel.locator('[data-testid=vault-pass][data-to="Sam"][data-item="github"]');
  await pass.waitFor();
  assert.match(await pass.getByTestId('vault-pass-title').innerText(), /^github for Sam$/);
  assert.match(await pass.getByTestId('vault-pass-uses').innerText(), /^Used once/);
  await shot(page, 'vault-passes-passes', panel);
  await pass.getByTestId('vault-pass-revoke').click();
  const dialog = page.getByTestId('confirm');
  await dialog.getByTestId('confirm-ok').waitFor();
  assert.match(await dialog.innerText(), /Revoke Sam’s pass to “github”\?/);
  assert.match(await dialog.innerText(), /end at once/);
  await dialog.getByTestId('confirm-cancel').click();
  assert.equal((await giver.sock('vault.pass.list'))[0].revoked_at, null, 'Cancel keeps it');
  assert.equal(await pass.getAttribute('data-revoked'), 'false');

  await pass.getByTestId('vault-pass-revoke').click();
  await dialog.getByTestId('confirm-ok').click();
  await waitFor('revoked in the list', async () => (await pass.getAttribute('data-revoked')) === 'true');
  await pass.getByTestId('vault-pass-revoked').waitFor();
  assert.equal(await pass.getByTestId('vault-pass-revoke').count(), 0);
  const note = panel.getByTestId('vault-pass-revoke-note');
  assert.match(await note.innerText(), /^Revoked\. Sam's requests with "github" end now; the value never left this Vyre\./);
  assert.notEqual(await note.getAttribute('class'), null);
  assert.ok(!(await note.getAttribute('class')).includes('warning'), 'a relayed revoke is no warning');
  assert.ok((await giver.sock('vault.pass.list'))[0].revoked_at > 0);
  // The item's detail, below, follows.
  await waitFor('revoked in the item\'s detail', async () => (await row(page, 'github').getByTestId('vault-pass').getAttribute('data-revoked')) === 'true', 15_000);

  await assert.rejects(
    taker.sock('gate.request', { method: 'GET', url: `${siteUrl}/who`, headers: { Authorization: 'Bearer {{vault:sams-github/password}}' } }),
    (e) => e.code === 'pass_revoked',
  );
  await noValues('revoked');
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('a sealed pass: the taker gets a key, the giver shares to it, the taker has the item; revoking it says to rotate', T, async () => {
  const panel = await openPasses(other);
  await panel.getByTestId('vault-key-get').click();
  const key = panel.getByTestId('vault-key-value');
  await key.waitFor();
  const theKey = await key.inputValue();
  assert.match(theKey, /^vyre-key-1\./);
  assert.match(await panel.getByTestId('vault-key-expires').innerText(), /^Good for 1 hour, once/);
  await panel.getByTestId('vault-key-value-copy').click();
  assert.equal(await other.evaluate(() => navigator.clipboard.readText()), theKey);

  const detail = await openItem(page, 'api-key');
  await detail.getByTestId('vault-share-open').click();
  const share = detail.getByTestId('vault-share');
  await share.getByTestId('vault-share-to').fill('Sam');
  await share.getByTestId('vault-share-sealed').check();
  await share.getByTestId('vault-share-key').fill('vyre-pass-1.not-a-key');
  await share.getByTestId('vault-share-go').click();
  await share.getByTestId('vault-share-error').filter({ hasText: 'a pass’s code, not a key' }).waitFor();
  await share.getByTestId('vault-share-key').fill(theKey);
  await share.getByTestId('vault-share-go').click();
  const code = share.getByTestId('vault-share-code');
  await code.waitFor();
  const sealedCode = await code.inputValue();
  assert.match(sealedCode, /^vyre-sealed-1\./);
  const note = share.getByTestId('vault-share-note');
  assert.match(await note.innerText(), /revoking cannot take it back/);
  assert.ok((await note.getAttribute('class')).includes('warning'), 'a sealed pass\'s note is a warning');
  assert.equal(await share.getByTestId('vault-share-key').count(), 0, 'the key field is gone');
  await shot(page, 'vault-passes-sealed', share);
  await share.getByTestId('vault-share-close').click();

  const form = panel.getByTestId('vault-pass-accept');
  await form.getByTestId('vault-accept-code').fill(sealedCode);
  await form.getByTestId('vault-accept-name').fill('sams-api-key');
  await form.getByTestId('vault-accept-go').click();
  await form.getByTestId('vault-accept-done').filter({ hasText: 'Added “sams-api-key” (secret), a sealed copy' }).waitFor();
  await row(other, 'sams-api-key').waitFor();
  assert.equal(await row(other, 'sams-api-key').getByTestId('vault-item-kind').innerText(), 'Secret');
  const copy = (await taker.sock('vault.list')).find((i) => i.name === 'sams-api-key');
  assert.equal(copy.kind, 'secret');
  // The same code again: its key is used up, said in vyred's words.
  await form.getByTestId('vault-accept-code').fill(sealedCode);
  await form.getByTestId('vault-accept-name').fill('again');
  await form.getByTestId('vault-accept-go').click();
  await form.getByTestId('vault-accept-error').waitFor();
  assert.ok((await form.getByTestId('vault-accept-error').innerText()).length > 10);
  assert.equal((await taker.sock('vault.list')).some((i) => i.name === 'again'), false);
  await form.getByTestId('vault-accept-code').fill('');
  await other.getByTestId('vault-passes-close').click();
  const item = await openItem(other, 'sams-api-key');
  assert.equal(await item.getByTestId('vault-show').count(), 1, 'a copy of its own: Show offered');
  await item.getByTestId('vault-detail-copy').waitFor();

  // Revoked by the giver: the copy stays with them, said as a warning.
  const given = await openPasses(page);
  const pass = given.locator('[data-testid=vault-pass][data-item="api-key"]');
  assert.equal(await pass.getByTestId('vault-pass-kind').innerText(), 'Sealed');
  await pass.getByTestId('vault-pass-revoke').click();
  const dialog = page.getByTestId('confirm');
  await dialog.getByTestId('confirm-ok').waitFor();
  assert.match(await dialog.innerText(), /cannot take it back/);
  await dialog.getByTestId('confirm-ok').click();
  const warned = given.getByTestId('vault-pass-revoke-note');
  await warned.filter({ hasText: 'keeps the copy' }).waitFor();
  assert.ok((await warned.getAttribute('class')).includes('warning'));
  assert.equal(await warned.getAttribute('role'), 'note');
  await noValues('sealed');
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('a person is offboarded: checked first (what would be revoked, what to rotate, where it was used), then done', T, async () => {
  // Ana holds a relayed pass, used once (her Vyre: the taker's, through the API), and a sealed one.
  const { key } = await taker.sock('vault.pass.key');
  const { code } = await giver.sock('vault.pass.create', { name: 'github', to: 'Ana' });
  await giver.sock('vault.pass.create', { name: 'api-key', to: 'Ana', sealed_for: key });
  await taker.sock('vault.pass.accept', { code, name: 'anas-github' });
  await taker.sock('vault.grant', { item: 'anas-github', to: 'gate' });
  await taker.sock('gate.request', { method: 'POST', url: `${siteUrl}/deploy`, headers: { Authorization: 'Bearer {{vault:anas-github/password}}' }, body: 'go' });
  const panel = await openPasses(page);
  await waitFor('Ana\'s passes listed', async () => (await panel.locator('[data-testid=vault-pass][data-to="Ana"]').count()) === 2, 15_000);
  const off = panel.getByTestId('vault-offboard');
  assert.deepEqual(await off.locator('datalist option').evaluateAll((os) => os.map((o) => o.value)), ['Ana'], 'those holding a pass that stands');
  await off.getByTestId('vault-offboard-person').fill('Ana');
  await off.getByTestId('vault-offboard-check').click();
  const summary = off.getByTestId('vault-offboard-summary');
  await summary.filter({ hasText: 'Would revoke 2 passes of Ana; 1 item to rotate.' }).waitFor();
  assert.match(await off.getByTestId('vault-offboard-rotate').innerText(), /api-key: Ana holds a sealed copy/);
  const used = await off.getByTestId('vault-offboard-used').innerText();
  assert.match(used, new RegExp(`^POST ${siteUrl.replace(/\./g, '\\.')}/deploy: once, last today \\d\\d:\\d\\d$`), used);
  assert.equal((await giver.sock('vault.pass.list')).filter((p) => p.to === 'Ana' && p.revoked_at === null).length, 2, 'the check changes nothing');
  await shot(page, 'vault-passes-offboard', off);

  await off.getByTestId('vault-offboard-go').click();
  await summary.filter({ hasText: 'Revoked 2 passes of Ana; 1 item to rotate.' }).waitFor();
  assert.equal(await off.getByTestId('vault-offboard-result').getAttribute('data-dry-run'), 'false');
  assert.equal(await off.getByTestId('vault-offboard-go').count(), 0, 'done once');
  assert.equal((await giver.sock('vault.pass.list')).filter((p) => p.to === 'Ana' && p.revoked_at === null).length, 0);
  await waitFor('revoked in the list', async () => (await panel.locator('[data-testid=vault-pass][data-to="Ana"][data-revoked="true"]').count()) === 2, 15_000);

  // Sam holds no pass that stands now.
  await off.getByTestId('vault-offboard-person').fill('Sam');
  await off.getByTestId('vault-offboard-check').click();
  await summary.filter({ hasText: 'Sam holds no pass that stands: there is nothing to revoke.' }).waitFor();
  assert.equal(await off.getByTestId('vault-offboard-go').count(), 0);
  await noValues('offboarded');
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});
