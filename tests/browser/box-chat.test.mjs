// A box's session in the Mac's chat view (issue 20): two real vyreds, a box (`--role box`,
// running the pinned Claude Code CLI against the fake Messages API) and a Mac (`--role local`),
// paired. A session started on the box opens from the Mac's Deck in the same chat view as the
// Mac's own, marked as the box's; its reply shows, a message sent from the Mac reaches the box
// and its reply comes word by word, an ask in it is answered there, a file its answer names is
// previewed and downloaded from the box, and with the box gone the view says so in one line,
// sends nothing, and comes back with the box.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { API_KEY, Rig, claudeMissing, waitFor } from './lib/rig.mjs';
import { DESKTOP, PHONE, SHOTS, openBrowser, shot, shootingTest } from './lib/browser.mjs';

const noClaude = claudeMissing();
const PLAN = '# The plan\nwritten on the box\n';
/** The fake API answers `reply to [<prompt>]`: the prompt's inline code is the answer's. */
const PROMPT = 'look at `notes/plan.md`';
let box;
let mac;
let browser;
let page;
let thread;
let pairing;

before(async () => {
  [box, mac] = await Promise.all([
    Rig.start('boxchat-box', { role: 'box', claude: !noClaude }),
    Rig.start('boxchat-mac', { role: 'local', config: { vault: { keystore: 'file' } } }),
  ]);
  await box.sock('vault.put', { name: 'anthropic-api-key', value: API_KEY });
  await box.sock('vault.grant', { item: 'anthropic-api-key', to: 'sessions' });
  // The session's folder is a project's on the box: inside the roots its files may be read.
  mkdirSync(join(box.work, 'notes'), { recursive: true });
  writeFileSync(join(box.work, 'notes', 'plan.md'), PLAN);
  await box.sock('projects.create', { name: 'acme', home: box.work });
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
  pairing = await mac.sock('pairing.add', { address: code.address, code: code.code, name: 'Ada\'s Mac' });
});

after(async () => {
  await browser?.close();
  await Promise.all([box?.stop(), mac?.stop()]);
});

const T = { timeout: 180_000 };

const it = shootingTest('box-chat-', () => page);

const answer = (words) => page.getByTestId('assistant-text').filter({ hasText: words });

async function reply(words, timeout = 90_000) {
  await answer(words).first().waitFor({ timeout });
}

async function idle() {
  await page.getByTestId('thread-state').filter({ hasText: 'Idle' }).waitFor({ timeout: 60_000 });
}

/** Send `words`; the answer to them (the assistant's text after those shown so far). */
async function say(words) {
  const shown = await page.getByTestId('assistant-text').count();
  const composer = page.getByTestId('composer');
  await composer.fill(words);
  await composer.press('Enter');
  return page.getByTestId('assistant-text').nth(shown);
}

/** The person's messages in the box's own timeline of the thread: [text, via]. */
async function saidOnBox() {
  const { items } = await box.sock('threads.timeline', { thread });
  return items.filter((i) => i.kind === 'user').map((i) => [i.text, i.via]);
}

it('a session started on the box opens from the Mac\'s Deck in the chat view, marked as the box\'s', { ...T, skip: noClaude }, async () => {
  ({ thread } = await box.sock('threads.start', { cwd: box.work, text: PROMPT }));
  await page.goto(`${mac.base}/app/deck`);
  const entry = page.locator(`[data-testid=box-thread][data-thread="${thread}"]`);
  await entry.waitFor({ timeout: 30_000 });
  await shot(page, 'box-chat-deck');
  await entry.getByTestId('box-thread-open').click();
  await page.waitForURL((u) => u.pathname === `/app/b/${pairing.id}/t/${thread}`);
  // Where it runs, by the name the box gave at pairing (its host name).
  assert.equal(await page.getByTestId('chat-where').innerText(), `on ${hostname()}`);
  await reply('reply to [look at');
  await idle();
  // (The person's words as words: their backticks are not code.)
  assert.deepEqual(await page.getByTestId('user-text').allInnerTexts(), [PROMPT.replaceAll('`', '')]);
  // Only what the box's link allows is offered: no rename, mode, fork or End session here.
  assert.equal(await page.getByTestId('rename').count(), 0);
  assert.equal(await page.locator('[data-mode]').count(), 0);
  assert.equal(await page.getByTestId('stop').count(), 0);
  assert.equal(await page.getByTestId('rewind').count(), 0);
  // The Mac has no such thread of its own: it is the box's.
  await assert.rejects(mac.sock('threads.get', { thread }), /unknown_thread/);
  // Its address opens it again as it is.
  await page.reload();
  await reply('reply to [look at');
  assert.equal(await page.getByTestId('chat-where').innerText(), `on ${hostname()}`);
  await shot(page, 'box-chat');
  // On a phone, ⋯ says where it runs and offers nothing the link does not allow.
  await page.setViewportSize(PHONE);
  await page.getByTestId('more').click();
  const menu = page.getByTestId('more-menu');
  assert.equal(await menu.getByTestId('more-where').innerText(), `Runs on ${hostname()}`);
  assert.deepEqual(await menu.getByRole('menuitem').allInnerTexts(), []);
  await page.screenshot({ path: join(SHOTS, 'box-chat-more-phone.png') });
  await page.keyboard.press('Escape');
  await menu.waitFor({ state: 'detached' });
  await page.setViewportSize(DESKTOP);
});

it('a message sent from the Mac reaches the box, and its reply comes word by word', { ...T, skip: noClaude }, async () => {
  await say('hello from the mac');
  await reply('reply to [hello from the mac]');
  await idle();
  assert.deepEqual((await saidOnBox()).at(-1), ['hello from the mac', 'person']);
  // A slow reply shows while it is written on the box, before the turn ends.
  const slow = await say('SLOWLY and now slowly');
  await slow.filter({ hasText: 'slow3' }).waitFor({ timeout: 60_000 });
  assert.equal(await answer('reply to [SLOWLY and now slowly]').count(), 0, 'the turn is still running');
  assert.equal(await page.getByTestId('thread-state').innerText(), 'Working');
  await shot(page, 'box-chat-streaming');
  await reply('reply to [SLOWLY and now slowly]');
  await idle();
});

it('Stop ends the box\'s running turn through the pairing', { ...T, skip: noClaude }, async () => {
  const slow = await say('SLOWLY stop me');
  await slow.filter({ hasText: 'slow2' }).waitFor({ timeout: 60_000 });
  await page.getByTestId('interrupt').click();
  await page.getByTestId('interrupt').waitFor({ state: 'detached', timeout: 30_000 });
  await idle();
  assert.equal(await answer('reply to [SLOWLY stop me]').count(), 0, 'the turn stopped before its end');
  assert.doesNotMatch(await slow.innerText(), /slow39/);
  assert.deepEqual((await saidOnBox()).at(-1), ['SLOWLY stop me', 'person']);
  const { items } = await box.sock('threads.timeline', { thread });
  assert.ok(items.some((i) => i.kind === 'notice' && i.code === 'interrupted'), 'the box says the turn was interrupted');
});

it('an ask in the box\'s session is answered in the chat, and the box runs the command', { ...T, skip: noClaude }, async () => {
  await say('RUNBASH touch asked-from-the-mac.txt');
  const card = page.locator('[data-testid=ask]:not([data-outcome])');
  await card.waitFor({ timeout: 60_000 });
  assert.equal(await card.getByTestId('ask-input').innerText(), 'touch asked-from-the-mac.txt');
  await card.getByTestId('allow').click();
  await waitFor('the allowed command to run on the box', () => existsSync(join(box.work, 'asked-from-the-mac.txt')), 60_000);
  await idle();
  assert.equal(await page.locator('[data-testid=ask][data-outcome=allow]').count(), 1);
});

it('a file the box\'s answer names is previewed and downloaded from the box', { ...T, skip: noClaude }, async () => {
  const link = answer('reply to [look at').getByTestId('file-link').filter({ hasText: 'notes/plan.md' });
  await link.click();
  const dialog = page.getByTestId('file-dialog');
  const preview = dialog.locator('[data-testid=files-preview][data-kind=text]');
  await preview.waitFor();
  // The box's file, at the box's path: the Mac has none of it.
  assert.equal(await preview.locator('strong').innerText(), join(box.work, 'notes/plan.md'));
  assert.match(await preview.getByTestId('files-text').innerText(), /written on the box/);
  assert.equal(existsSync(join(mac.work, 'notes', 'plan.md')), false);
  await shot(page, 'box-chat-file');
  const [download] = await Promise.all([page.waitForEvent('download'), preview.getByTestId('files-preview-download').click()]);
  assert.equal(download.suggestedFilename(), 'plan.md');
  assert.equal(readFileSync(await download.path(), 'utf8'), PLAN);
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'hidden' });
});

it('with the box gone the chat says so in one line and sends nothing; it comes back with the box', { ...T, skip: noClaude }, async () => {
  await box.halt();
  const away = page.getByTestId('box-away');
  await away.waitFor({ timeout: 30_000 });
  assert.match(await away.innerText(), new RegExp(`^${hostname()} is out of reach`));
  assert.equal(await away.count(), 1);
  await page.getByTestId('composer').fill('said while it is away');
  assert.equal(await page.getByTestId('send').isDisabled(), true);
  // What was shown stays.
  assert.equal(await answer('reply to [hello from the mac]').count(), 1);
  await shot(page, 'box-chat-away');

  await box.restart();
  await away.waitFor({ state: 'detached', timeout: 60_000 });
  assert.equal(await page.getByTestId('send').isDisabled(), false);
  await page.getByTestId('send').click();
  await reply('reply to [said while it is away]');
  await idle();
  assert.deepEqual((await saidOnBox()).at(-1), ['said while it is away', 'person']);
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});
