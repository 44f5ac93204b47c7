// Lumen talks to the assistant on the box when the person chooses: two real vyreds, a box
// (`--role box`, its assistant Atlas) and a Mac (`--role local`, its assistant Juno), paired, both
// running the pinned Claude Code CLI against the fake Messages API. On the Mac's Lumen the
// person chooses the box, and the conversation goes there: started on the box through the
// pairing, its reply shown from the box's events. The choice is remembered; "Here" is this
// Mac's own conversation again. With the box gone, Lumen says so in one line and Here still works.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { API_KEY, Rig, claudeMissing } from './lib/rig.mjs';
import { SHOTS, openBrowser, shootingTest } from './lib/browser.mjs';

const LUMEN = { width: 420, height: 640 };
const noClaude = claudeMissing();
let box;
let mac;
let browser;
let page;

before(async () => {
  [box, mac] = await Promise.all([
    Rig.start('lumen-box', { role: 'box', claude: !noClaude }),
    Rig.start('lumen-mac', { role: 'local', claude: !noClaude, config: { vault: { keystore: 'file' } } }),
  ]);
  await box.sock('vault.put', { name: 'anthropic-api-key', value: API_KEY });
  await box.sock('vault.grant', { item: 'anthropic-api-key', to: 'sessions' });
  // The box's own assistant (a box has no onboarding in a browser).
  await box.sock('agents.create', { name: 'atlas', kind: 'assistant', instructions: 'You are Atlas, on the box.' });
  browser = await openBrowser();
  page = browser.page;
  // The Mac's onboarding, straight from its page (app.test.mjs walks its screens).
  await page.goto(await mac.onboardLink());
  await page.waitForURL((u) => u.pathname === '/onboard' && !u.search.includes('t='));
  await page.evaluate(async (key) => {
    const post = async (path, body) => {
      const headers = { 'content-type': 'application/json', 'x-vyre-key': localStorage.getItem('vyre_key') };
      const r = await fetch(path, { method: 'POST', headers, body: JSON.stringify(body) });
      const j = await r.json();
      if (j.error) throw new Error(`${path}: ${j.error.code}: ${j.error.message}`);
      return j.data;
    };
    await post('/v1/tools/onboarding.you', { name: 'Ada', assistant_name: 'Juno' });
    await post('/v1/tools/onboarding.claude', { mode: 'api-key', value: key });
    return post('/v1/session/finish', {});
  }, API_KEY);
  const code = await box.sock('pairing.code');
  await mac.sock('pairing.add', { address: code.address, code: code.code, name: 'Ada\'s Mac' });
});

after(async () => {
  await browser?.close();
  await Promise.all([box?.stop(), mac?.stop()]);
});

const T = { timeout: 180_000 };

const it = shootingTest('lumen-box-', () => page);

/** `screenshots/lumen-<name>.png` at Lumen's size; nothing may scroll sideways. */
async function shot(name) {
  mkdirSync(SHOTS, { recursive: true });
  await page.waitForTimeout(150);
  await page.screenshot({ path: join(SHOTS, `lumen-${name}.png`) });
  const wide = await page.evaluate(() =>
    [document.documentElement, ...document.querySelectorAll('.bar, .away, .reply, .said-list, .needs')]
      .map((e) => [e.className || e.tagName, e.scrollWidth - e.clientWidth])
      .filter(([, w]) => w > 0),
  );
  assert.deepEqual(wide, [], `${name}: Lumen scrolls sideways`);
}

async function openLumen() {
  await page.setViewportSize(LUMEN);
  await page.goto(`${mac.base}/app/lumen`);
  await page.getByTestId('lumen-input').waitFor();
}

/** The line to the assistant, once it names `who`. */
async function asking(who) {
  await page.locator(`[data-testid="lumen-input"][placeholder="Ask ${who}"]`).waitFor({ timeout: 30_000 });
}

/** The reply shown, once it holds `words`. */
async function reply(words, timeout = 90_000) {
  await page.getByTestId('lumen-text').filter({ hasText: words }).first().waitFor({ timeout });
}

async function say(text) {
  const line = page.getByTestId('lumen-input');
  await line.fill(text);
  await line.press('Enter');
}

/** Lumen's turn has ended: the Stop button gives way to New. */
async function settled() {
  await page.getByTestId('lumen-new').waitFor({ timeout: 60_000 });
}

const place = () => page.getByTestId('lumen-place');
const capsules = async (rig, agent) => (await rig.sock('agents.threads', { agent })).filter((t) => t.purpose === 'capsule');

it('Lumen talks to the assistant on the box when chosen, and to this Mac\'s again on Here', { ...T, skip: noClaude }, async () => {
  await openLumen();
  await asking('Juno');
  // Here first: this Mac's own conversation.
  await say('hello here');
  await reply('reply to [hello here]');
  await settled();

  // The choice, reached from the line by the keyboard: Here, or the box by the name it gave.
  await place().waitFor();
  assert.deepEqual(await place().locator('option').allInnerTexts(), ['Here', `On ${hostname()}`]);
  assert.equal(await place().inputValue(), '', 'here by default');
  await page.getByTestId('lumen-input').focus();
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'lumen-place');
  await place().selectOption({ label: `On ${hostname()}` });

  // The box's assistant, by its name; its conversation there is not started yet.
  await asking('Atlas');
  assert.equal(await page.getByTestId('lumen-reply').count(), 0, 'this Mac\'s conversation is not shown for the box');
  await say('hello box');
  await page.getByTestId('lumen-asked').filter({ hasText: 'hello box' }).waitFor();
  await reply('reply to [hello box]');
  await settled();
  assert.equal(await page.getByTestId('lumen-input').inputValue(), '', 'the line is cleared once sent');
  // A conversation of the box's assistant, started on the box for the capsule, is what Lumen shows.
  const [onBox] = await capsules(box, 'atlas');
  assert.ok(onBox, 'a Lumen conversation on the box');
  assert.equal((await capsules(box, 'atlas')).length, 1);
  assert.equal(await page.getByTestId('lumen-reply').getAttribute('data-thread'), onBox.thread);
  const timeline = await box.sock('threads.timeline', { thread: onBox.thread });
  assert.deepEqual(
    timeline.items.filter((i) => i.kind === 'user').map((i) => [i.text, i.via]),
    [['hello box', 'person']],
  );
  assert.equal((await capsules(mac, 'juno')).length, 1, 'nothing more started on the Mac');
  await assert.rejects(mac.sock('threads.get', { thread: onBox.thread }), /unknown_thread/, 'the thread is the box\'s, not the Mac\'s');
  // A box's conversation opens in the app's chat view too, at the box's address for it.
  const [pairing] = await mac.sock('pairing.list');
  assert.equal(await page.getByTestId('lumen-open').getAttribute('href'), `/app/b/${pairing.id}/t/${onBox.thread}`);
  await shot('box-reply');

  // The next message goes to the same conversation on the box.
  await say('and again on the box');
  await reply('reply to [and again on the box]');
  await settled();
  assert.equal((await capsules(box, 'atlas')).length, 1);

  // Remembered: opened again, Lumen is still on the box, where the conversation was.
  await openLumen();
  await asking('Atlas');
  assert.equal(await place().inputValue(), (await mac.sock('pairing.list'))[0].id);
  await reply('reply to [and again on the box]', 20_000);

  // Here again: this Mac's own conversation.
  await place().selectOption({ label: 'Here' });
  await asking('Juno');
  await reply('reply to [hello here]', 20_000);
  assert.equal(await page.getByTestId('lumen-text').filter({ hasText: 'on the box' }).count(), 0);
  await say('back here');
  await reply('reply to [back here]');
  await settled();
  assert.equal((await capsules(mac, 'juno')).length, 1);
  assert.equal((await box.sock('threads.timeline', { thread: onBox.thread })).items.filter((i) => i.kind === 'user').length, 2, 'nothing more went to the box');
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('with the box gone, Lumen says so in one line and Here still works', { ...T, skip: noClaude }, async () => {
  await openLumen();
  await place().waitFor();
  await place().selectOption({ label: `On ${hostname()}` });
  await asking('Atlas');
  await box.stop();
  // Opened again with the box chosen and out of reach.
  await openLumen();
  const away = page.getByTestId('lumen-box-away');
  // By the name the box gave, once pairing.list has answered.
  await away.filter({ hasText: `${hostname()} is out of reach` }).waitFor({ timeout: 30_000 });
  assert.equal(await away.count(), 1);
  assert.equal(await page.getByTestId('lumen-reply').count(), 0);
  await shot('box-away');
  await page.getByTestId('lumen-here').click();
  await asking('Juno');
  assert.equal(await away.count(), 0);
  assert.equal(await place().inputValue(), '');
  await reply('reply to [back here]', 20_000);
  await say('still here');
  await reply('reply to [still here]');
  await settled();
  // Remembered too: Here, the next time Lumen opens.
  await openLumen();
  await asking('Juno');
  assert.equal(await page.getByTestId('lumen-box-away').count(), 0);
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});
