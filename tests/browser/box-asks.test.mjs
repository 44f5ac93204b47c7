// The Mac and its box as one system, in the Mac's app (issue 20): two real vyreds, a box
// (`--role box`, running the pinned Claude Code CLI against the fake Messages API) and a Mac
// (`--role local`), paired. A session on the box asks before it runs a command; the ask shows in
// the Mac's Needs, marked as the box's, and the person answers it there; the box runs the
// command and its audit names the Mac's device and the browser on it that answered. The Deck
// lists the box's sessions beside the Mac's. With the box gone, Needs and the Deck say so.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { API_KEY, Rig, claudeMissing, waitFor } from './lib/rig.mjs';
import { openBrowser, shot, shootingTest } from './lib/browser.mjs';

const noClaude = claudeMissing();
let box;
let mac;
let browser;
let page;

before(async () => {
  [box, mac] = await Promise.all([
    Rig.start('fed-box', { role: 'box', claude: !noClaude }),
    Rig.start('fed-mac', { role: 'local', config: { vault: { keystore: 'file' } } }),
  ]);
  await box.sock('vault.put', { name: 'anthropic-api-key', value: API_KEY });
  await box.sock('vault.grant', { item: 'anthropic-api-key', to: 'sessions' });
  browser = await openBrowser();
  page = browser.page;
  // The Mac's onboarding, straight from its page (app.test.mjs walks its screens).
  await page.goto(await mac.onboardLink());
  await page.waitForURL((u) => u.pathname === '/onboard' && !u.search.includes('t='));
  await page.evaluate(async () => {
    const post = async (path, body) => {
      const headers = { 'content-type': 'application/json', 'x-vyre-key': localStorage.getItem('vyre_key') };
      const r = await fetch(path, { method: 'POST', headers, body: JSON.stringify(body) });
      const j = await r.json();
      if (j.error) throw new Error(`${path}: ${j.error.code}: ${j.error.message}`);
      return j.data;
    };
    await post('/v1/tools/onboarding.you', { name: 'Ada', assistant_name: 'Juno' });
    return post('/v1/session/finish', {});
  });
  const code = await box.sock('pairing.code');
  await mac.sock('pairing.add', { address: code.address, code: code.code, name: 'Ada\'s Mac' });
});

after(async () => {
  await browser?.close();
  await Promise.all([box?.stop(), mac?.stop()]);
});

const T = { timeout: 180_000 };

const it = shootingTest('box-asks-', () => page);

it('a box session\'s ask shows in the Mac\'s Needs as the box\'s and is answered there', { ...T, skip: noClaude }, async () => {
  await page.goto(`${mac.base}/app/needs`);
  await page.getByTestId('needs-empty').waitFor();
  await box.sock('threads.start', { cwd: box.work, text: 'RUNBASH touch from-the-mac.txt' });
  const card = page.getByTestId('ask');
  await card.waitFor({ timeout: 90_000 });
  // Marked as the box's, by the name the box gave at pairing (its host name).
  assert.equal(await card.getByTestId('ask-where').innerText(), `on ${hostname()}`);
  assert.equal(await card.getByTestId('ask-input').innerText(), 'touch from-the-mac.txt');
  await shot(page, 'needs-box-ask');
  await card.getByTestId('allow').click();
  await page.getByTestId('needs-empty').waitFor({ timeout: 30_000 });
  await waitFor('the allowed command to run on the box', () => existsSync(join(box.work, 'from-the-mac.txt')), 60_000);
  // The box's audit: the Mac's device, and the browser on the Mac that answered.
  const macDevice = (await box.sock('devices.list')).find((d) => d.kind === 'vyre');
  const answered = await box.sock('system.events', { types: ['ask.answered'] });
  assert.equal(answered.length, 1);
  assert.match(answered[0].payload.by, new RegExp(`^link:${macDevice.id}/device:d[0-9a-f]+$`));
  assert.equal(answered[0].payload.decision, 'allow');

  // The Deck lists the box's sessions beside this machine's.
  await page.click('[data-nav=deck]');
  const onBox = page.getByTestId('box-threads');
  await onBox.getByTestId('box-thread').first().waitFor({ timeout: 30_000 });
  assert.match(await onBox.locator('h2').innerText(), new RegExp(`On ${hostname()}`, 'i'));
  const [thread] = await box.sock('threads.list');
  assert.equal(await onBox.getByTestId('box-thread').getAttribute('data-thread'), thread.thread);
  await shot(page, 'deck-box-threads');
});

it('a file on the box is found, previewed and downloaded from the Mac\'s Files', T, async () => {
  writeFileSync(join(box.work, 'plan-for-the-mac.md'), '# The plan\nfrom the box\n');
  await box.sock('projects.create', { name: 'Acme', home: box.work });
  await page.click('[data-nav=files]');
  await page.getByTestId('files-query').fill('plan for the mac');
  await page.getByTestId('files-search').click();
  const onBox = page.locator('[data-testid=files-place]').filter({ hasText: `On ${hostname()}` });
  const hit = onBox.getByTestId('files-hit').first();
  await hit.waitFor();
  assert.match(await hit.innerText(), /plan-for-the-mac\.md/);
  await hit.locator('button').first().click();
  // The preview shows "loading" until the box answers through the pairing.
  const preview = page.locator('[data-testid=files-preview][data-kind=text]');
  await preview.waitFor();
  assert.match(await page.getByTestId('files-text').innerText(), /from the box/);
  await shot(page, 'files-box-preview');
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('files-preview-download').click()]);
  assert.equal(download.suggestedFilename(), 'plan-for-the-mac.md');
  assert.equal(readFileSync(await download.path(), 'utf8'), '# The plan\nfrom the box\n');
});

it('with the box gone, Needs says so in one line', T, async () => {
  await page.goto(`${mac.base}/app/needs`);
  await page.getByTestId('needs-empty').waitFor();
  await box.stop();
  await page.getByTestId('box-offline').waitFor({ timeout: 30_000 });
  assert.match(await page.getByTestId('box-offline').innerText(), /out of reach/);
  assert.equal(await page.getByTestId('box-offline').count(), 1);
  await shot(page, 'needs-box-offline');
  await page.click('[data-nav=deck]');
  await page.getByTestId('box-threads-away').waitFor({ timeout: 30_000 });
  assert.match(await page.getByTestId('box-threads-away').innerText(), /out of reach/);
});
