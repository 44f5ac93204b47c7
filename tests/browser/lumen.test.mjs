// Lumen, the Mac app's capsule, at /app/lumen in a 420 by 640 window against a real vyred: one
// line to the assistant and its reply as it streams, the open asks answered in place, planner
// items that fall due shown and counted with them (Done and Snooze there, an alarm beeping), Esc
// (inside Tauri) hiding it, and nothing asked of vyred while it sits idle. The chat and ask tests
// need the pinned Claude Code CLI against the fake Messages API.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { API_KEY, Rig, claudeMissing, waitFor } from './lib/rig.mjs';
import { SHOTS, openBrowser, shootingTest } from './lib/browser.mjs';

const LUMEN = { width: 420, height: 640 };
const noClaude = claudeMissing();
let rig;
let browser;
let page;
/** Every script the page loaded. */
const scripts = [];

before(async () => {
  rig = await Rig.start('lumen', { claude: !noClaude });
  browser = await openBrowser();
  page = browser.page;
  // Each tone the page starts is counted: an alarm's beep, heard or not (headless).
  await browser.context.addInitScript(() => {
    window.__tones = 0;
    if (typeof AudioContext === 'undefined') return;
    const make = AudioContext.prototype.createOscillator;
    AudioContext.prototype.createOscillator = function () {
      window.__tones++;
      return make.call(this);
    };
  });
  page.on('request', (r) => {
    if (r.resourceType() === 'script') scripts.push(new URL(r.url()).pathname);
  });
  // The onboarding's tools straight from the page (app.test.mjs walks its screens).
  await page.goto(await rig.onboardLink());
  await page.waitForURL((u) => u.pathname === '/onboard' && !u.search.includes('t='));
  const finished = await page.evaluate(async (key) => {
    const post = async (path, body) => {
      // The cookie goes by itself; the key is the page's own (its origin's storage).
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
  assert.equal(finished.assistant.name ?? finished.assistant, 'juno');
});

after(async () => {
  await browser?.close();
  await rig?.stop();
});

const T = { timeout: 180_000 };

const it = shootingTest('lumen-', () => page);

/** `screenshots/lumen-<name>.png` at Lumen's size; nothing may scroll sideways. */
async function shot(p, name) {
  mkdirSync(SHOTS, { recursive: true });
  await p.waitForTimeout(150);
  await p.screenshot({ path: join(SHOTS, `lumen-${name}.png`) });
  const wide = await p.evaluate(() =>
    [document.documentElement, ...document.querySelectorAll('.reply, .said-list, .needs')]
      .map((e) => [e.className || e.tagName, e.scrollWidth - e.clientWidth])
      .filter(([, w]) => w > 0),
  );
  assert.deepEqual(wide, [], `${name}: Lumen scrolls sideways`);
}

async function openLumen(p = page) {
  await p.setViewportSize(LUMEN);
  await p.goto(`${rig.base}/app/lumen`);
  await p.getByTestId('lumen-input').waitFor();
}

/** The reply shown, once it holds `words`. */
async function reply(words, timeout = 90_000) {
  await page.getByTestId('lumen-text').filter({ hasText: words }).first().waitFor({ timeout });
}

async function say(text) {
  const box = page.getByTestId('lumen-input');
  await box.fill(text);
  await box.press('Enter');
}

/** Lumen's turn has ended: the Stop button gives way to New. */
async function settled() {
  await page.getByTestId('lumen-new').waitFor({ timeout: 60_000 });
}

it('a window without a device is told how to sign in', T, async () => {
  const other = await openBrowser();
  try {
    await other.page.setViewportSize(LUMEN);
    await other.page.goto(`${rig.base}/app/lumen`);
    await other.page.getByTestId('signed-out').waitFor();
    assert.match(await other.page.getByTestId('signed-out').innerText(), /not signed in/i);
    await shot(other.page, 'signed-out');
  } finally {
    await other.close();
  }
});

it('Lumen is its own small page: the line to the assistant and what needs you, no nav', T, async () => {
  scripts.length = 0;
  await openLumen();
  // The assistant's name arrives with the app's state, a moment after the page.
  await page.locator('[data-testid="lumen-input"][placeholder="Ask Juno"]').waitFor();
  await page.getByTestId('lumen-needs-empty').waitFor();
  // The line has the keyboard, as Spotlight's does (once Lumen has looked up its conversation,
  // a moment after the assistant's name shows).
  await waitFor('the line to have the keyboard', async () => (await page.evaluate(() => document.activeElement?.dataset.testid)) === 'lumen-input', 5000);
  assert.equal(await page.locator('nav').count(), 0, 'no navigation');
  // The greeting went to the assistant's own thread: Lumen's conversation is its own.
  assert.equal(await page.getByTestId('lumen-reply').count(), 0);
  // Only Lumen's code: the app's screens are never loaded.
  assert.ok(scripts.some((s) => /\/assets\/Lumen-[\w-]+\.js$/.test(s)), scripts.join(' '));
  assert.ok(!scripts.some((s) => /\/assets\/App-[\w-]+\.js$/.test(s)), `the app's code was loaded: ${scripts.join(' ')}`);
  await shot(page, 'empty');
});

it('Enter sends to the assistant and the reply streams in below', { ...T, skip: noClaude }, async () => {
  await openLumen();
  await say('hello from lumen');
  await page.getByTestId('lumen-asked').filter({ hasText: 'hello from lumen' }).waitFor();
  await reply('reply to [hello from lumen]');
  assert.equal(await page.getByTestId('lumen-input').inputValue(), '', 'the line is cleared once sent');
  await settled();
  // One Lumen conversation: a thread of the assistant's, started for the capsule.
  const threads = await rig.sock('agents.threads', { agent: 'juno' });
  const mine = threads.filter((t) => t.purpose === 'capsule');
  assert.equal(mine.length, 1, JSON.stringify(threads));
  assert.equal(await page.getByTestId('lumen-open').getAttribute('href'), `/app/t/${encodeURIComponent(mine[0].thread)}`);
  await shot(page, 'reply');
  // "Open in Vyre" opens the whole conversation in the app, in a window of its own.
  const [full] = await Promise.all([page.context().waitForEvent('page'), page.getByTestId('lumen-open').click()]);
  await full.waitForURL((u) => u.pathname === `/app/t/${mine[0].thread}`);
  await full.getByTestId('assistant-text').filter({ hasText: 'reply to [hello from lumen]' }).waitFor();
  await full.close();
  assert.equal(new URL(page.url()).pathname, '/app/lumen', 'Lumen stays where it is');

  // The next message goes to the same thread; Lumen shows only the newest exchange.
  await say('and again');
  await reply('reply to [and again]');
  await settled();
  assert.equal(await page.getByTestId('lumen-text').filter({ hasText: 'hello from lumen' }).count(), 0);
  assert.equal((await rig.sock('agents.threads', { agent: 'juno' })).filter((t) => t.purpose === 'capsule').length, 1);

  // Shown again later (a reload here), it picks the conversation up where it was.
  await openLumen();
  await reply('reply to [and again]', 20_000);
  assert.equal(await page.getByTestId('lumen-asked').innerText(), 'and again');
});

it('an ask raised by a session shows with the number waiting and is answered in place', { ...T, skip: noClaude }, async () => {
  await openLumen();
  // A long reply scrolls in its own half, so the ask below stays in view.
  await say(`tell me more ${'about the walrus and its many long swims '.repeat(25)}`);
  await reply('reply to [tell me more');
  await settled();
  await rig.sock('threads.start', { cwd: rig.work, text: 'RUNBASH touch from-lumen.txt' });
  await page.getByTestId('lumen-needs-count').filter({ hasText: '1' }).waitFor({ timeout: 90_000 });
  // The app's ask list, the one the Needs page shows.
  const card = page.getByTestId('lumen-needs').getByTestId('ask-list').getByTestId('ask');
  const [top, bottom] = await card.evaluate((e) => [e.getBoundingClientRect().top, e.getBoundingClientRect().bottom]);
  assert.ok(top > 0 && bottom <= 640, `the ask is in view (${top}..${bottom})`);
  const box = await page.getByTestId('lumen-said').evaluate((e) => ({ h: e.clientHeight, sh: e.scrollHeight, at: e.scrollTop }));
  assert.ok(box.sh > box.h && box.h <= 320, `the reply scrolls in its half: ${JSON.stringify(box)}`);
  assert.ok(box.at > 0, 'at its end');
  assert.equal(await card.getByTestId('ask-input').innerText(), 'touch from-lumen.txt');
  assert.match(await page.getByTestId('lumen-needs').innerText(), /1 waiting/);
  await shot(page, 'ask');
  await card.getByTestId('allow').click();
  await page.getByTestId('lumen-needs-empty').waitFor({ timeout: 30_000 });
  assert.equal(await page.getByTestId('lumen-needs-count').count(), 0);
  await waitFor('the allowed command to run', () => existsSync(join(rig.work, 'from-lumen.txt')), 60_000);
});

it('a question from Lumen\'s own conversation is answered in place and the reply goes on', { ...T, skip: noClaude }, async () => {
  await openLumen();
  await say('ASKQUESTION please');
  const card = page.getByTestId('ask').filter({ hasText: 'Which color do you prefer?' });
  await card.waitFor({ timeout: 90_000 });
  // The card names the conversation it came from.
  assert.match(await card.innerText(), /Lumen/);
  await page.getByTestId('lumen-working').filter({ hasText: 'Waiting for you' }).waitFor();
  await card.getByTestId('ask-option').filter({ hasText: 'Red' }).click();
  await shot(page, 'question');
  await card.getByTestId('answer').click();
  await page.getByTestId('lumen-needs-empty').waitFor({ timeout: 30_000 });
  await waitFor(
    'the answer in the reply',
    async () => /Which color do you prefer\?.*Red/s.test((await page.getByTestId('lumen-text').allInnerTexts()).join('\n')),
    90_000,
  );
  await settled();
  await shot(page, 'answered');
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot(page, 'dark');
  await page.emulateMedia({ colorScheme: 'light' });
});

it('a reminder and an alarm that fall due show in Lumen, counted; Done and Snooze there', T, async () => {
  await openLumen();
  await page.getByTestId('lumen-needs-empty').waitFor();
  // A touch on the page first: only then may it make sound (lib/beep.ts).
  await page.getByTestId('lumen-input').click();
  await rig.sock('planner.add', { text: 'Water the basil on the balcony before the sun is up', at: 'in 2s' });
  await rig.sock('planner.add', { text: 'Tea is ready', kind: 'alarm', at: 'in 2s' });
  // A todo has no time: it never falls due, and never shows here.
  await rig.sock('planner.add', { text: 'Buy more tea', kind: 'todo' });
  const due = page.getByTestId('lumen-needs').getByTestId('due');
  const card = (text) => due.filter({ has: page.getByTestId('due-text').getByText(text, { exact: true }) });
  const basil = card('Water the basil on the balcony before the sun is up');
  const tea = card('Tea is ready');
  await basil.waitFor({ timeout: 15_000 });
  await tea.waitFor({ timeout: 15_000 });
  assert.equal(await due.count(), 2);
  assert.equal(await basil.getAttribute('data-kind'), 'reminder');
  assert.equal(await basil.locator('.kind').innerText(), 'Reminder');
  assert.match(await basil.getByTestId('due-when').innerText(), /^due (just now|1 min ago)$/);
  assert.equal(await tea.getAttribute('data-kind'), 'alarm');
  // Counted with what needs the person, above the asks.
  assert.equal(await page.getByTestId('lumen-needs-count').innerText(), '2');
  assert.match(await page.getByTestId('lumen-needs').innerText(), /2 waiting/);
  assert.equal(await page.getByTestId('lumen-needs-empty').count(), 0);
  // The page was touched, so the alarm beeps (three tones), as in the app.
  await waitFor('the alarm to beep', () => page.evaluate(() => window.__tones >= 3), 5000);
  // Each card whole in the narrow window: its words, its buttons.
  for (const c of [basil, tea]) {
    const box = await c.boundingBox();
    assert.ok(box.x >= 0 && box.x + box.width <= LUMEN.width, `the card fits the window: ${JSON.stringify(box)}`);
  }
  await shot(page, 'due');
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot(page, 'due-dark');
  await page.emulateMedia({ colorScheme: 'light' });

  // Done: it leaves Lumen at once, and vyred has it done.
  const [item] = (await rig.sock('planner.list', {})).filter((i) => i.text.startsWith('Water the basil'));
  await basil.getByTestId('due-done').click();
  await basil.waitFor({ state: 'detached' });
  assert.equal(await page.getByTestId('lumen-needs-count').innerText(), '1');
  assert.ok((await rig.sock('planner.list', { done: true })).find((i) => i.id === item.id).done_at, 'vyred has it done');

  // Snooze 10 min: it leaves too, and waits again ten minutes on.
  await tea.getByTestId('due-snooze').click();
  await tea.waitFor({ state: 'detached' });
  await page.getByTestId('lumen-needs-empty').waitFor();
  assert.equal(await page.getByTestId('lumen-needs-count').count(), 0);
  const later = (await rig.sock('planner.list', {})).find((i) => i.text === 'Tea is ready');
  assert.equal(later.fell_due_at, null, 'it waits again');
  assert.ok(Math.abs(later.due_at - (Date.now() + 600_000)) < 60_000, 'ten minutes on');
  // Out of the way of the tests after this one.
  for (const i of await rig.sock('planner.list', {})) await rig.sock('planner.remove', { item: i.id });
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('idle, Lumen asks vyred nothing: the one event stream is all', T, async () => {
  await openLumen();
  await page.getByTestId('lumen-needs').waitFor();
  await page.waitForTimeout(1000);
  const asked = [];
  const log = (r) => asked.push(`${r.method()} ${new URL(r.url()).pathname}`);
  page.on('request', log);
  await page.waitForTimeout(5000);
  page.off('request', log);
  assert.deepEqual(asked, []);
  // No timer left waiting either: a poll would show up as one here.
  const timers = await page.evaluate(
    () =>
      new Promise((ok) => {
        let n = 0;
        const set = window.setTimeout;
        const every = window.setInterval;
        window.setTimeout = (...a) => (n++, set(...a));
        window.setInterval = (...a) => (n++, every(...a));
        set(() => ok(n), 3000);
      }),
  );
  assert.equal(timers, 0, 'no timers set while idle');
});

it('inside the Mac app, Esc clears the line first and then hides Lumen', T, async () => {
  const other = await openBrowser();
  try {
    // What Tauri gives Lumen's window: its label and invoke (only hide_lumen is allowed).
    await other.context.addInitScript(() => {
      window.__hidden = [];
      window.__TAURI_INTERNALS__ = {
        metadata: { currentWindow: { label: 'lumen' } },
        invoke: async (cmd) => void window.__hidden.push(cmd),
      };
    });
    const { url } = await rig.sock('devices.link', {});
    await other.page.goto(url);
    await other.page.waitForURL((u) => u.pathname === '/app/');
    await openLumen(other.page);
    const box = other.page.getByTestId('lumen-input');
    await box.fill('half a thought');
    await box.press('Escape');
    assert.equal(await box.inputValue(), '');
    await other.page.waitForTimeout(50);
    assert.deepEqual(await other.page.evaluate(() => window.__hidden), []);
    await box.press('Escape');
    await waitFor('hide_lumen', async () => (await other.page.evaluate(() => window.__hidden)).length === 1, 5000);
    assert.deepEqual(await other.page.evaluate(() => window.__hidden), ['hide_lumen']);
    assert.deepEqual(other.errors, []);
  } finally {
    await other.close();
  }
});

it('a revoked device signs Lumen out through its event stream', T, async () => {
  await openLumen();
  const mine = (await rig.sock('devices.list')).filter((d) => d.kind === 'browser' && !d.revoked_at);
  for (const d of mine) await rig.sock('devices.revoke', { id: d.id });
  await page.getByTestId('signed-out').waitFor({ timeout: 30_000 });
  assert.match(await page.getByTestId('signed-out').innerText(), /signed out.*Open Vyre/s);
  await shot(page, 'revoked');
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});
