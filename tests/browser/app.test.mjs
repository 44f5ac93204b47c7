// The Vyre app in a real browser against a real vyred: the onboarding end to end, then (with the
// pinned Claude Code CLI against the fake Messages API) Chat, the Deck and Needs, and at the end
// a revoked device. The tests share one vyred and one browser and run in order.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_KEY, Rig, claudeMissing, waitFor } from './lib/rig.mjs';
import { openBrowser, shot, shootingTest } from './lib/browser.mjs';

const noClaude = claudeMissing();
let rig;
let browser;
let page;
let link;

before(async () => {
  rig = await Rig.start('app', { claude: !noClaude, transcripts: true });
  link = await rig.onboardLink();
  browser = await openBrowser();
  page = browser.page;
});

after(async () => {
  await browser?.close();
  await rig?.stop();
});

const T = { timeout: 180_000 };

const it = shootingTest('', () => page);

/** The last assistant text, once it holds `words`. */
async function reply(words, timeout = 90_000) {
  await page.getByTestId('assistant-text').filter({ hasText: words }).first().waitFor({ timeout });
}

async function send(text) {
  const box = page.getByTestId('composer');
  await box.fill(text);
  await box.press('Enter');
}

async function idle() {
  await page.getByTestId('thread-state').filter({ hasText: 'Idle' }).waitFor({ timeout: 60_000 });
}

async function newSession(text) {
  await page.click('[data-nav=deck]');
  await page.getByTestId('new-session').click();
  await page.getByTestId('new-cwd').fill(rig.work);
  await page.getByTestId('new-text').fill(text);
  await page.getByTestId('new-start').click();
  await page.waitForURL(/\/app\/t\//);
}

it('a request without a device session is refused, and the app says how to sign in', T, async () => {
  const res = await fetch(`${rig.base}/v1/tools/threads.list`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
  assert.equal(res.status, 401);
  assert.equal((await res.json()).error.code, 'unauthenticated');
  const events = await fetch(`${rig.base}/v1/events`);
  assert.equal(events.status, 401);
  const other = await openBrowser();
  try {
    await other.page.goto(`${rig.base}/app/`);
    await other.page.getByTestId('signed-out').waitFor();
    assert.match(await other.page.getByTestId('signed-out').innerText(), /vyre open/);
    await shot(other.page, 'signed-out');
  } finally {
    await other.close();
  }
});

it('the onboarding, one step a screen, ends in the assistant greeting you', T, async () => {
  await page.goto(link);
  // The token leaves the address bar once redeemed.
  await page.waitForURL((u) => u.pathname === '/onboard' && !u.search.includes('t='));
  const step = page.getByTestId('ob-step');
  await page.getByTestId('ob-name').waitFor();
  await shot(page, 'onboard-1-you');
  await page.getByTestId('ob-name').fill('Ada');
  await page.getByTestId('ob-assistant').fill('Juno');
  await page.getByTestId('ob-save').click();

  await waitFor('the Claude step', async () => (await step.getAttribute('data-step')) === 'claude');
  await page.getByTestId('ob-claude-found').waitFor();
  await page.getByTestId('ob-mode-api-key').check();
  await page.getByTestId('ob-secret').fill(API_KEY);
  assert.equal(await page.getByTestId('ob-secret').getAttribute('type'), 'password');
  await page.getByTestId('ob-claude-save').click();
  await page.getByTestId('ob-claude-saved').waitFor();
  await page.getByTestId('ob-claude-auth').waitFor();
  assert.equal(await page.getByTestId('ob-secret').inputValue(), '', 'the secret is not kept in the page');
  assert.ok(!(await page.content()).includes(API_KEY), 'the secret is never echoed back');
  await shot(page, 'onboard-2-claude');
  await page.getByTestId('ob-continue').click();

  await waitFor('the address step', async () => (await step.getAttribute('data-step')) === 'address');
  await shot(page, 'onboard-3-address');
  await page.getByTestId('ob-continue').click();

  await waitFor('the history step', async () => (await step.getAttribute('data-step')) === 'history');
  await page.getByTestId('ob-pick').first().waitFor();
  await shot(page, 'onboard-4-history');
  await page.getByTestId('ob-pick').first().check();
  await page.getByTestId('ob-project-name').fill('walrus');
  // The session's own folder is gone (it came from another machine): the project lives here.
  await page.getByTestId('ob-project-home').fill(rig.work);
  await page.getByTestId('ob-project-create').click();

  await waitFor('the devices step', async () => (await step.getAttribute('data-step')) === 'devices');
  // Pairing makes a credential: it waits for Settings (pairing.test.mjs), never in the onboarding.
  await page.getByTestId('ob-devices-later').waitFor();
  assert.equal(await page.getByTestId('pair-make-code').count(), 0);
  await shot(page, 'onboard-5-devices');
  // The last step finishes the onboarding itself (no Continue to a screen more).
  await page.getByTestId('ob-finish').click();
  await page.waitForURL((u) => u.pathname === '/app/');
  await page.getByTestId('chat-title').filter({ hasText: 'Juno' }).waitFor();

  const projects = await rig.sock('projects.list');
  assert.deepEqual(projects.map((p) => p.name), ['walrus']);
  const state = await rig.sock('onboarding.state');
  assert.equal(state.finished, true);
  assert.equal(state.steps.history, 'done', 'a first project made marks the history step done');
  assert.equal(state.owner.name, 'Ada');
  const devices = await rig.sock('devices.list');
  assert.ok(devices.some((d) => d.kind === 'browser' && !d.revoked_at), JSON.stringify(devices));

  if (!noClaude) {
    // The fake API answers the greeting's prompt with `reply to [...]`.
    await reply('reply to [');
  }
  await shot(page, 'assistant');
});

it('the onboarding link is refused once the onboarding is over, with what to do', T, async () => {
  const other = await openBrowser();
  try {
    await other.page.goto(link);
    const box = other.page.getByTestId('signed-out');
    await box.waitFor();
    const text = await box.innerText();
    assert.match(text, /ended when the onboarding was finished/i);
    assert.match(text, /vyre open/);
    await shot(other.page, 'link-used');
  } finally {
    await other.close();
  }
});

it('a chat turn streams into a new session', { ...T, skip: noClaude }, async () => {
  await newSession('hello there');
  await reply('reply to [hello there]');
  assert.match(await page.getByTestId('model-chip').innerText(), /^Claude · .+ · api-key$/);
  await shot(page, 'chat');
  // A model changed elsewhere (here: the socket) reaches the chip by thread.model.
  const thread = decodeURIComponent(new URL(page.url()).pathname.split('/').pop());
  await rig.sock('threads.model', { thread, model: 'claude-fake-2' });
  await page.getByTestId('model-chip').filter({ hasText: 'claude-fake-2' }).waitFor({ timeout: 30_000 });
});

it('the composer offers the session\'s slash commands and an @file picker', { ...T, skip: noClaude }, async (t) => {
  const thread = decodeURIComponent(new URL(page.url()).pathname.split('/').pop());
  let commands;
  try {
    commands = await rig.sock('threads.commands', { thread });
  } catch (e) {
    if (e.code === 'unknown_tool') return t.skip('this vyred has no threads.commands / threads.files yet');
    throw e;
  }
  writeFileSync(join(rig.work, 'notes-for-the-picker.md'), 'notes\n');
  const box = page.getByTestId('composer');
  await box.fill('');
  await box.pressSequentially('look at @notes-for');
  await page.getByTestId('file-menu').getByText('notes-for-the-picker.md').waitFor();
  await shot(page, 'chat-files');
  await box.press('Enter');
  assert.equal(await box.inputValue(), 'look at @notes-for-the-picker.md ');
  if (commands.length) {
    await box.fill('');
    await box.pressSequentially('/');
    await page.getByTestId('command-menu').waitFor();
    await shot(page, 'chat-commands');
    await box.press('Escape');
  }
  await box.fill('');
});

it('an ask is answered in the chat', { ...T, skip: noClaude }, async () => {
  await send('RUNBASH touch made-by-bash.txt');
  const ask = page.getByTestId('ask');
  await ask.waitFor({ timeout: 90_000 });
  await page.getByTestId('thread-state').filter({ hasText: 'Waiting for you' }).waitFor();
  // The card shows the command itself, not only the session's description of it.
  assert.equal(await ask.getByTestId('ask-input').innerText(), 'touch made-by-bash.txt');
  await shot(page, 'chat-ask');
  await ask.getByTestId('allow').click();
  await reply('tool said');
  await waitFor('the Bash call to complete', async () => (await page.locator('[data-testid=tool-row][data-status=completed]').count()) > 0);
  assert.ok(existsSync(join(rig.work, 'made-by-bash.txt')), 'the allowed command ran');
  await idle();
});

it('AskUserQuestion is answered by picking an option', { ...T, skip: noClaude }, async () => {
  const before = await page.getByTestId('assistant-text').filter({ hasText: 'tool said' }).count();
  await send('ASKQUESTION please');
  const ask = page.getByTestId('ask').filter({ hasText: 'Which color do you prefer?' });
  await ask.waitFor({ timeout: 90_000 });
  assert.deepEqual(await ask.getByTestId('ask-option').allInnerTexts().then((t) => t.map((x) => x.split('\n')[0])), ['Blue', 'Red']);
  assert.equal(await ask.getByTestId('answer').isDisabled(), true, 'nothing picked yet');
  await ask.getByTestId('ask-option').filter({ hasText: 'Red' }).click();
  assert.equal(await ask.getByRole('radio', { name: /Red/ }).getAttribute('aria-checked'), 'true');
  await shot(page, 'chat-question');
  await ask.getByTestId('answer').click();
  await ask.getByText('Answered').waitFor();
  // The fake API echoes the tool's result: Claude Code's words around the answer.
  const said = page.getByTestId('assistant-text').filter({ hasText: 'tool said' });
  await waitFor('the turn to go on', async () => (await said.count()) > before, 90_000);
  // The text may still be streaming in when it first shows.
  await waitFor('the answer in the reply', async () => /Which color do you prefer\?.*Red/s.test(await said.last().innerText()), 30_000);
  await idle();
});

it('a message steers the running turn, and a queued one is edited before it runs', { ...T, skip: noClaude }, async () => {
  await send('SLOWLY one');
  await page.getByTestId('assistant-text').filter({ hasText: 'slow3' }).waitFor({ timeout: 90_000 });
  await send('steer words');
  await page.locator('.msg.user', { hasText: 'steer words' }).waitFor();
  await page.getByTestId('after-turn').check();
  await send('queued words');
  await page.getByTestId('queued-text').filter({ hasText: 'queued words' }).waitFor();
  await shot(page, 'chat-running');
  const row = page.getByTestId('queued');
  await row.getByRole('button', { name: 'Edit' }).click();
  await page.getByTestId('queued-edit').fill('edited words');
  await row.getByRole('button', { name: 'Save' }).click();
  await page.getByTestId('queued-text').filter({ hasText: 'edited words' }).waitFor();
  await reply('reply to [steer words]');
  await reply('reply to [edited words]');
  assert.equal(await page.getByTestId('assistant-text').filter({ hasText: 'reply to [queued words]' }).count(), 0);
  assert.equal(await page.getByTestId('queued').count(), 0, 'the queue is empty once it ran');
  await idle();
});

it('Esc interrupts the running turn', { ...T, skip: noClaude }, async () => {
  await newSession('SLOWLY two');
  await page.getByTestId('assistant-text').filter({ hasText: 'slow2' }).waitFor({ timeout: 90_000 });
  await page.keyboard.press('Escape');
  await page.locator('.notice', { hasText: 'Interrupted.' }).waitFor({ timeout: 30_000 });
  assert.doesNotMatch(await page.getByTestId('assistant-text').last().innerText(), /reply to \[SLOWLY two\]/);
  await shot(page, 'chat-interrupted');
});

it('a rewind drops what came after the message', { ...T, skip: noClaude }, async () => {
  await newSession('alpha');
  await reply('reply to [alpha]');
  await idle();
  await send('beta');
  await reply('reply to [beta]');
  await idle();
  const alpha = page.locator('.msg.user', { hasText: 'alpha' });
  await alpha.hover();
  await alpha.getByTestId('rewind').click();
  // The page's own dialog (sessions.test.mjs: Cancel keeps everything).
  await page.getByTestId('confirm-ok').click();
  await page.locator('.notice', { hasText: 'Rewound' }).waitFor({ timeout: 30_000 });
  assert.equal(await page.getByTestId('assistant-text').filter({ hasText: 'reply to [beta]' }).count(), 0);
  await send('gamma');
  await reply('reply to [gamma]');
});

it('the Deck lists every session, history and live, by project with source badges', T, async () => {
  await page.click('[data-nav=deck]');
  await page.getByTestId('deck-entry').first().waitFor();
  const walrus = page.locator('section[data-project=walrus]');
  await walrus.getByText('Teaching the walrus to swim').waitFor();
  assert.match(await walrus.getByTestId('deck-entry').filter({ hasText: 'Teaching the walrus' }).innerText(), /terminal/);
  if (!noClaude) {
    // Started in the project's folder, so in the project too.
    const live = walrus.getByTestId('deck-entry').filter({ hasText: 'hello there' });
    assert.match(await live.innerText(), /vyre/);
    // One state badge: a session Vyre keeps open says so, never "live" and "idle" together.
    assert.equal(await live.getByTestId('deck-state').innerText(), 'open');
  }
  await shot(page, 'deck');
  // The dark scheme follows the system's.
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot(page, 'deck-dark');
  await page.emulateMedia({ colorScheme: 'light' });
});

it('Needs lists the open asks of every session and answers them in place', { ...T, skip: noClaude }, async () => {
  await newSession('RUNBASH touch from-needs.txt');
  await page.getByTestId('ask').waitFor({ timeout: 90_000 });
  await page.getByTestId('needs-count').filter({ hasText: '1' }).waitFor();
  await page.click('[data-nav=needs]');
  // The ask list Lumen shows too.
  const card = page.getByTestId('ask-list').getByTestId('ask');
  await card.waitFor();
  assert.equal(await card.getByTestId('ask-input').innerText(), 'touch from-needs.txt');
  await shot(page, 'needs');
  await card.getByTestId('deny').click();
  await page.getByTestId('needs-empty').waitFor({ timeout: 30_000 });
  assert.equal(await page.getByTestId('needs-count').count(), 0);
  assert.ok(!existsSync(join(rig.work, 'from-needs.txt')), 'the denied command did not run');
});

it('Settings lists the devices and marks this browser', T, async () => {
  await page.click('[data-nav=settings]');
  await page.getByTestId('this-device').waitFor();
  await page.getByTestId('settings-step-you').waitFor();
  await shot(page, 'settings');
  // Your name changes here once the onboarding is over; the assistant keeps its own.
  await page.getByTestId('settings-step-you').click();
  assert.equal(await page.getByTestId('ob-assistant').getAttribute('readonly'), '');
  await page.getByTestId('ob-name').fill('Ada L.');
  await page.getByTestId('ob-save').click();
  await page.getByTestId('settings-step-you').waitFor();
  assert.equal((await rig.sock('onboarding.state')).owner.name, 'Ada L.');
});

it('a login link makes one more browser a device', T, async () => {
  const { url, kind } = await rig.sock('devices.link', {});
  assert.equal(kind, 'login');
  const other = await openBrowser();
  try {
    await other.page.goto(url);
    await other.page.waitForURL((u) => u.pathname === '/app/');
    await other.page.getByTestId('chat-title').filter({ hasText: 'Juno' }).waitFor();
    const browsers = (await rig.sock('devices.list')).filter((d) => d.kind === 'browser' && !d.revoked_at);
    assert.equal(browsers.length, 2, JSON.stringify(browsers));
    // Logging out revokes it; the first browser stays signed in.
    await other.page.click('[data-nav=settings]');
    await other.page.getByTestId('logout').click();
    await other.page.getByTestId('signed-out').waitFor();
    assert.equal((await rig.sock('devices.list')).filter((d) => d.kind === 'browser' && !d.revoked_at).length, 1);
  } finally {
    await other.close();
  }
});

it('a revoked device is signed out by its event stream ending', T, async () => {
  const devices = await rig.sock('devices.list');
  const mine = devices.find((d) => d.kind === 'browser' && !d.revoked_at);
  await rig.sock('devices.revoke', { id: mine.id });
  await page.getByTestId('signed-out').waitFor({ timeout: 30_000 });
  assert.match(await page.getByTestId('signed-out').innerText(), /vyre open/);
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});
