// Pairing a Mac with a box in the app, against two real vyreds: a box (`--role box`) and a Mac
// (`--role local`, its vault in a file rather than an OS keychain). Each browser goes through the
// onboarding, whose devices step leaves pairing to Settings (a pairing code is a credential,
// which the onboarding's browser may not make); then the box shows a code in Settings, the Mac
// pairs, lists, and removes its box from Settings, and the box lists and revokes its Mac. No
// Claude Code needed.

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { Rig, waitFor } from './lib/rig.mjs';
import { onboardByScreens } from './lib/onboard.mjs';
import { openBrowser, shot, shootingTest } from './lib/browser.mjs';

let box;
let mac;
let boxB;
let macB;

before(async () => {
  [box, mac] = await Promise.all([
    Rig.start('pair-box', { role: 'box' }),
    Rig.start('pair-mac', { role: 'local', config: { vault: { keystore: 'file' } } }),
  ]);
  boxB = await openBrowser();
  macB = await openBrowser();
});

after(async () => {
  await boxB?.close();
  await macB?.close();
  await Promise.all([box?.stop(), mac?.stop()]);
});

const T = { timeout: 120_000 };
let current;

const it = shootingTest('', () => current);

/** A fresh code from the box, as `vyre pairing code` prints it there. */
async function code() {
  return JSON.parse(await box.cli('pairing', 'code')).code;
}

/** The onboarding through its devices step, every step skipped, and finished. */
async function onboard(rig, page) {
  await onboardByScreens(rig, page, {
    devices: async () => {
      // No pairing inside the onboarding: the step says where it happens.
      await page.getByTestId('ob-devices-later').waitFor();
      assert.equal(await page.getByTestId('pair-make-code').count(), 0);
      assert.equal(await page.getByTestId('pair-address-input').count(), 0);
    },
  });
  // The devices step is the last: its Finish ends the onboarding (and leaves the step skipped).
  await page.waitForURL((u) => u.pathname === '/app/');
  assert.equal((await rig.sock('onboarding.state')).steps.devices, 'skipped');
}

async function settings(page) {
  await page.click('[data-nav=settings]');
  await page.getByTestId('settings-pairing').waitFor();
}

it('the box\'s onboarding leaves pairing to Settings, which makes a code for the Mac', T, async () => {
  const page = (current = boxB.page);
  await onboard(box, page);
  await shot(page, 'pair-onboarded-box');
  await settings(page);
  await page.getByTestId('pair-make-code').click();
  const shown = await page.getByTestId('pair-code').innerText();
  assert.match(shown.replace(/\s/g, ''), /^[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$/);
  assert.equal(await page.getByTestId('pair-address').innerText(), box.addr);
  assert.match(await page.getByTestId('pair-code-card').innerText(), /works once, for 10 minutes/i);
  await page.getByTestId('settings-pairing').scrollIntoViewIfNeeded();
  await shot(page, 'pair-settings-box-code');
});

it('the Mac pairs with the box from Settings by its address and code', T, async () => {
  const page = (current = macB.page);
  await onboard(mac, page);
  await settings(page);
  await page.getByTestId('pair-address-input').fill(box.addr);
  await page.getByTestId('pair-code-input').fill('0000-0000-0000');
  await page.getByTestId('pair-submit').click();
  await page.getByTestId('pair-error').waitFor();
  assert.match(await page.getByTestId('pair-error').innerText(), /not valid/);
  // The code the box's Settings shows.
  const shown = (await boxB.page.getByTestId('pair-code').innerText()).replace(/\s/g, '');
  await page.getByTestId('pair-code-input').fill(shown.toLowerCase());
  await page.getByTestId('pair-name-input').fill('Ada\'s Mac');
  await page.getByTestId('pair-submit').click();
  await page.getByTestId('pair-boxes').getByTestId('pair-status').filter({ hasText: 'paired' }).waitFor();
  assert.equal(await page.getByTestId('pair-error').count(), 0);
  await page.getByTestId('settings-pairing').scrollIntoViewIfNeeded();
  await shot(page, 'pair-settings-mac');
  const macs = (await box.sock('devices.list')).filter((d) => d.kind === 'vyre');
  assert.deepEqual(macs.map((d) => [d.name, d.revoked_at]), [['Ada\'s Mac', null]]);
  // A pairing made in Settings finishes the devices step, on both sides.
  await waitFor('the Mac\'s devices step done', async () => (await mac.sock('onboarding.state')).steps.devices === 'done');
  await waitFor('the box\'s devices step done', async () => (await box.sock('onboarding.state')).steps.devices === 'done');
  await boxB.page.getByTestId('pair-macs').locator('li').first().waitFor();
});

it('in Settings the Mac lists its box, removes it, and pairs again', T, async () => {
  const page = (current = macB.page);
  await settings(page);
  const row = page.getByTestId('pair-boxes').locator('li');
  await row.getByTestId('pair-status').filter({ hasText: 'paired' }).waitFor();
  assert.match(await row.innerText(), new RegExp(box.addr.replace(/\./g, '\\.')));

  page.once('dialog', (d) => d.accept());
  await row.getByTestId('pair-remove').click();
  await page.getByTestId('pair-boxes-empty').waitFor();
  assert.equal(await page.getByTestId('pair-notice').count(), 0, 'the box was reached');
  const revoked = (await box.sock('devices.list')).find((d) => d.kind === 'vyre');
  assert.ok(revoked.revoked_at, 'the box revoked the Mac\'s device');

  // A spent code is refused with the box's own words.
  const used = await code();
  // Paired and ended on the Mac's command line: the page follows (pairing.* events).
  const other = await mac.sock('pairing.add', { address: box.addr, code: used });
  await page.getByTestId('pair-boxes').waitFor();
  await mac.sock('pairing.remove', { id: other.id });
  await page.getByTestId('pair-boxes-empty').waitFor();
  await page.getByTestId('pair-address-input').fill(box.addr);
  await page.getByTestId('pair-code-input').fill(used);
  await page.getByTestId('pair-submit').click();
  assert.match(await page.getByTestId('pair-error').innerText(), /already used/);

  await page.getByTestId('pair-code-input').fill(await code());
  await page.getByTestId('pair-submit').click();
  await page.getByTestId('pair-boxes').getByTestId('pair-status').filter({ hasText: 'paired' }).waitFor();
  assert.equal(await page.getByTestId('pair-error').count(), 0, 'the error goes once a pairing works');
  await page.getByTestId('settings-pairing').scrollIntoViewIfNeeded();
  await shot(page, 'settings-paired-boxes');
});

it('in Settings the box lists its paired Mac, shows a code, and revokes the Mac', T, async () => {
  const page = (current = boxB.page);
  await settings(page);
  const macs = page.getByTestId('pair-macs').locator('li');
  await macs.first().waitFor();
  assert.equal(await macs.count(), 1, 'only the live pairing');
  await page.getByTestId('pair-make-code').click();
  await page.getByTestId('pair-code').waitFor();
  await page.getByTestId('settings-pairing').scrollIntoViewIfNeeded();
  await shot(page, 'settings-pair-mac');

  page.once('dialog', (d) => d.accept());
  await macs.first().getByTestId('pair-revoke').click();
  await page.getByTestId('pair-macs-empty').waitFor();

  // The Mac sees it as revoked, and removing it then needs nothing from the box.
  const mpage = (current = macB.page);
  await mpage.reload();
  await settings(mpage);
  await mpage.getByTestId('pair-status').filter({ hasText: 'revoked' }).waitFor();
  mpage.once('dialog', (d) => d.accept());
  await mpage.getByTestId('pair-remove').click();
  await mpage.getByTestId('pair-boxes-empty').waitFor();
  assert.equal(await mpage.getByTestId('pair-notice').count(), 0);
});

it('a box out of reach is listed so, and removing it says to revoke the Mac there', T, async () => {
  const page = (current = macB.page);
  await page.getByTestId('pair-address-input').fill(box.addr);
  await page.getByTestId('pair-code-input').fill(await code());
  await page.getByTestId('pair-submit').click();
  await page.getByTestId('pair-status').filter({ hasText: 'paired' }).waitFor();

  // Esc inside the Mac app's Lumen window hides it (a stand-in for Tauri); not in a browser.
  const lumen = await boxB.context.newPage();
  current = lumen;
  await lumen.addInitScript(() => {
    window.__hidden = [];
    window.__TAURI_INTERNALS__ = { metadata: { currentWindow: { label: 'lumen' } }, invoke: async (cmd) => void window.__hidden.push(cmd) };
  });
  await lumen.goto(`${box.base}/app/`);
  await lumen.locator('[data-nav=settings]').waitFor();
  await lumen.keyboard.press('Escape');
  await waitFor('hide_lumen', async () => (await lumen.evaluate(() => window.__hidden)).length === 1);
  assert.deepEqual(await lumen.evaluate(() => window.__hidden), ['hide_lumen']);
  await lumen.close();
  current = page;
  await boxB.page.keyboard.press('Escape');
  assert.equal(await boxB.page.evaluate(() => typeof window.__TAURI_INTERNALS__), 'undefined');

  await box.stop();
  await page.reload();
  await settings(page);
  await page.getByTestId('pair-status').filter({ hasText: 'unreachable' }).waitFor();
  page.once('dialog', (d) => d.accept());
  await page.getByTestId('pair-remove').click();
  await page.getByTestId('pair-notice').waitFor();
  assert.match(await page.getByTestId('pair-notice').innerText(), /could not be reached; revoke this Mac there/);
  await shot(page, 'settings-box-unreachable');
  assert.deepEqual(boxB.errors.concat(macB.errors), [], 'no script errors on the pages');
});
