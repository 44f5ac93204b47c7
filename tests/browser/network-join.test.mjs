// A phone joins Vyre's private network from the app, against a real vyred whose network is up
// (WireGuard on a loopback UDP port, the endpoint in its config): the onboarding shows the
// network's address and offers "Add my phone right after", which opens the join dialog in
// Settings once it is finished (the onboarding's browser may not join a device itself); the
// dialog shows the QR code and the configuration once, and a second, smaller QR code of the
// address the app opens at (for the phone's camera), the phone is listed on the private network,
// and revoking it takes it off. Then a vyred that does not know its endpoint asks for
// it. No Claude Code needed.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Rig, waitFor } from './lib/rig.mjs';
import { onboardByScreens } from './lib/onboard.mjs';
import { DESKTOP, PHONE, SHOTS, openBrowser, shot, shootingTest, fromPage } from './lib/browser.mjs';

const ENDPOINT = 'vyre.example.test:51820';
let rig;
let browser;
let page;
/** The phone's device, once it joined. */
let phone;

before(async () => {
  rig = await Rig.start('network-join', { config: { network: { enabled: true, listen: '127.0.0.1:0', endpoint: ENDPOINT } } });
  browser = await openBrowser();
  page = browser.page;
});

after(async () => {
  await browser?.close();
  await rig?.stop();
});

const T = { timeout: 120_000 };

const it = shootingTest('network-', () => page);


/** The onboarding through its screens, every step skipped; `phone`: "Add my phone right after". */
async function onboard(r, p, { phone: addPhone, address } = {}) {
  await onboardByScreens(r, p, {
    address,
    devices: async () => {
      if (!addPhone) return;
      // The onboarding's browser may not put a device on the network: it would mint one before
      // the owner exists. The step offers to do it right after instead.
      const refused = await fromPage(p, 'network.join', { name: 'phone' });
      assert.ok(refused.error, JSON.stringify(refused));
      assert.equal((await r.sock('devices.list')).filter((d) => d.kind === 'network').length, 0);
      await p.getByTestId('ob-phone-after').check();
      await shot(p, 'network-onboard-devices');
    },
  });
}

const dialog = () => page.getByTestId('join-dialog');

/** The greeting's toast (no Claude Code here) gone, for a screenshot that shows the page. */
async function noToast() {
  await page.getByTestId('toast').waitFor({ state: 'detached', timeout: 15_000 });
}

it('the onboarding shows the network\'s address, and "Add my phone right after" opens the join dialog in Settings', T, async () => {
  const status = await rig.sock('network.status');
  assert.equal(status.up, true, JSON.stringify(status));
  assert.match(status.address, /^100\.\d+\.\d+\.\d+$/);
  await onboard(rig, page, {
    phone: true,
    address: async () => {
      const said = page.getByTestId('ob-network-address');
      await said.waitFor();
      const text = await said.innerText();
      assert.ok(text.includes(status.address), text);
      assert.ok(text.includes(status.url), text);
      await shot(page, 'network-onboard-address');
    },
  });
  await page.waitForURL((u) => u.pathname === '/app/settings');
  await dialog().getByTestId('join-form').waitFor();
  assert.ok(await dialog().evaluate((d) => d.open), 'the dialog is open');
  assert.equal(await page.getByTestId('join-name').inputValue(), 'phone');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'join-name', 'the name has the focus');
  // vyred knows where devices reach it (its config): no field for it, only the line.
  await dialog().getByTestId('join-endpoint-known').filter({ hasText: ENDPOINT }).waitFor();
  assert.equal(await page.getByTestId('join-endpoint').count(), 0);
});

it('a phone joins: its QR code, its configuration shown once, and a download', T, async () => {
  await page.getByTestId('join-submit').click();
  const qr = dialog().getByTestId('join-qr');
  await qr.waitFor();
  const src = await qr.getAttribute('src');
  assert.ok(src.startsWith('data:image/svg+xml;charset=utf-8,'), src.slice(0, 60));
  // The SVG is a picture the browser drew, not markup in the page.
  await waitFor('the QR code to load', () => qr.evaluate((img) => img.complete && img.naturalWidth > 0));
  assert.equal(await dialog().locator('svg').count(), 0);

  const config = await dialog().getByTestId('join-config').innerText();
  assert.match(config, /^\[Interface\]$/m);
  assert.match(config, /^PrivateKey = \S+$/m);
  assert.match(config, /^AllowedIPs = 100\.\d+\.\d+\.\d+\/32$/m);
  assert.match(config, new RegExp(`^Endpoint = ${ENDPOINT.replace(/\./g, '\\.')}$`, 'm'));
  const status = await rig.sock('network.status');
  assert.equal(await dialog().getByTestId('join-url').innerText(), status.url);
  assert.equal(await dialog().getByTestId('join-url').getAttribute('href'), status.url);
  // Then the camera opens the app: a second QR code, of that address, beside the link.
  const urlQr = dialog().getByTestId('join-url-qr');
  assert.ok((await urlQr.getAttribute('src')).startsWith('data:image/svg+xml;charset=utf-8,'));
  await waitFor('the second QR code to load', () => urlQr.evaluate((img) => img.complete && img.naturalWidth > 0));
  assert.notEqual(await urlQr.getAttribute('src'), src, 'not the configuration again');
  assert.ok(decodeURIComponent((await urlQr.getAttribute('src')).split(',')[1]).startsWith('<'), 'an SVG');
  assert.match(await urlQr.getAttribute('alt'), new RegExp(`address that opens Vyre: ${status.url.replace(/[./]/g, '\\$&')}$`));
  const open = dialog().getByTestId('join-open-app');
  assert.match(await open.innerText(), /^Then scan this with the camera to open Vyre, or go to http:\/\/100\.\d+\.\d+\.\d+\/app\/$/);
  // Smaller than the configuration's, and beside its words (on a desktop).
  const [big, small] = [await qr.boundingBox(), await urlQr.boundingBox()];
  assert.ok(small.width < big.width / 1.5, `${small.width} < ${big.width}`);
  const words = await open.locator('p').boundingBox();
  assert.ok(words.x >= small.x + small.width, 'the words are beside the code');
  assert.match(await dialog().getByTestId('join-warning').innerText(), /private key.*shown only this once/s);
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'join-done', 'the focus moves to what came out');
  await noToast();
  await shot(page, 'network-join-phone');

  // The same text downloads as vyre-phone.conf.
  const [download] = await Promise.all([page.waitForEvent('download'), dialog().getByTestId('join-download').click()]);
  assert.equal(download.suggestedFilename(), 'vyre-phone.conf');
  assert.equal(readFileSync(await download.path(), 'utf8').trim(), config.trim());

  const devices = (await rig.sock('devices.list')).filter((d) => d.kind === 'network');
  assert.deepEqual(devices.map((d) => [d.name, d.revoked_at]), [['phone', null]]);
  phone = devices[0];
  // A device that joined finishes the onboarding's devices step, as a pairing does.
  await waitFor('the devices step done', async () => (await rig.sock('onboarding.state')).steps.devices === 'done');

  // Done: the configuration leaves the page; it is not shown again.
  const key = /^PrivateKey = (\S+)$/m.exec(config)[1];
  await dialog().getByTestId('join-close').click();
  await waitFor('the dialog to close', async () => !(await dialog().evaluate((d) => d.open)));
  // Closing drops the configuration at once: nothing of the key is left once the dialog is shut.
  assert.ok(!(await page.content()).includes(key), 'the private key is gone from the page');
});

it('Settings lists the phone on the private network, and the network as up', T, async () => {
  const row = page.locator(`[data-device="${phone.id}"]`);
  await row.waitFor();
  assert.equal(await row.getAttribute('data-kind'), 'network');
  assert.equal(await row.getByTestId('device-kind').innerText(), 'on the private network');
  // It never sent a packet: it has not turned its tunnel on.
  assert.equal(await row.getByTestId('device-link').innerText(), 'not seen since Vyre started');
  const status = await rig.sock('network.status');
  const peer = status.devices.find((d) => d.device === phone.id);
  assert.ok(peer, JSON.stringify(status.devices));
  assert.ok((await row.innerText()).includes(peer.address));
  const net = page.getByTestId('network-status');
  assert.equal(await net.getAttribute('data-up'), 'true');
  assert.equal(await net.getByTestId('network-address').innerText(), status.address);
  assert.ok((await net.innerText()).includes(ENDPOINT));
  await noToast();
  await page.getByTestId('devices').scrollIntoViewIfNeeded();
  await shot(page, 'network-settings-devices');
  // The list itself on a phone (shot() leaves the page at its top there).
  await page.setViewportSize(PHONE);
  await page.getByTestId('devices').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(SHOTS, 'network-settings-devices-list-phone.png') });
  await page.setViewportSize(DESKTOP);
});

it('revoking the phone takes it off the network', T, async () => {
  const row = page.locator(`[data-device="${phone.id}"]`);
  await row.getByRole('button', { name: 'Revoke' }).click();
  assert.match(await page.getByTestId('confirm').innerText(), /taken off the private network/);
  await page.getByTestId('confirm-ok').click();
  await waitFor('the row to go', async () => (await row.count()) === 0);
  const revoked = (await rig.sock('devices.list')).find((d) => d.id === phone.id);
  assert.ok(revoked.revoked_at, 'revoked');
  // As the page sees it (the browser may ask network.status), and as the owner's socket does.
  await waitFor('network.status without the phone', async () => {
    const r = await fromPage(page, 'network.status');
    return r.data && !r.data.devices.some((d) => d.device === phone.id);
  });
  assert.ok(!(await rig.sock('network.status')).devices.some((d) => d.device === phone.id));
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('a vyred that does not know its endpoint asks for it, says why when it is wrong, and keeps it', T, async () => {
  const other = await Rig.start('network-endpoint', { config: { network: { enabled: true, listen: '127.0.0.1:0' } } });
  const b = await openBrowser();
  const p = b.page;
  try {
    await onboard(other, p);
    await p.waitForURL((u) => u.pathname === '/app/');
    await p.click('[data-nav=settings]');
    await p.getByTestId('join-open').click();
    const d = p.getByTestId('join-dialog');
    await d.getByTestId('join-form').waitFor();
    // The page is on 127.0.0.1, which a phone does not reach: nothing to suggest.
    const field = p.getByTestId('join-endpoint');
    await field.waitFor();
    assert.equal(await field.inputValue(), '');
    await p.getByTestId('join-name').fill('laptop');
    await p.getByTestId('join-submit').click();
    const error = d.getByTestId('join-error');
    await error.waitFor();
    assert.match(await error.innerText(), /endpoint/);
    assert.equal(await p.evaluate(() => document.activeElement?.id), 'join-endpoint');
    await field.fill('not an endpoint');
    await p.getByTestId('join-submit').click();
    await error.filter({ hasText: 'host:port' }).waitFor();
    await shot(p, 'network-join-endpoint');
    await field.fill('box.example.test:51999');
    await p.getByTestId('join-submit').click();
    await d.getByTestId('join-qr').waitFor();
    assert.match(await d.getByTestId('join-config').innerText(), /^Endpoint = box\.example\.test:51999$/m);
    assert.equal(await d.getByTestId('join-download').innerText(), 'Download vyre-laptop.conf');
    await d.getByTestId('join-close').click();
    // Kept for the next device.
    assert.equal((await other.sock('network.status')).endpoint, 'box.example.test:51999');
    await p.getByTestId('join-open').click();
    await d.getByTestId('join-endpoint-known').filter({ hasText: 'box.example.test:51999' }).waitFor();
    await d.getByTestId('join-cancel').click();
    await p.locator(`[data-kind=network]`).getByTestId('device-kind').filter({ hasText: 'on the private network' }).waitFor();
    assert.deepEqual(b.errors, [], 'no script errors on the page');
  } finally {
    await b.close();
    await other.stop();
  }
});
