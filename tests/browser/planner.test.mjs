// The planner in the app (issue 23), in Chromium against a real vyred: a reminder added in words
// on the Planner screen ("in 2s") shows under Coming up with its time in the person's words,
// then falls due and shows in Needs live (no reload), with Done and Snooze 10 min; Done takes it
// out of Needs and puts it under Done. A todo is ticked off; words vyred cannot read as a time
// ("soon") are said under the field in vyred's own words, what was typed kept. Snooze 10 min puts
// a due item off; an item is removed after the app's own confirmation; an alarm falls due with no
// error, and beeps (three tones) once the page has been touched. One that fell due while vyred
// was down says so, live and after a reload. No Claude Code needed.
// Screenshots: screenshots/planner-{screen,needs}-{desktop,phone}.png, copied to /tmp/shots/.

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Rig, waitFor } from './lib/rig.mjs';
import { onboardByScreens } from './lib/onboard.mjs';
import { SHOTS, openBrowser, shootingTest, shot } from './lib/browser.mjs';

/** Where the screenshots are copied for a person to look at. */
const OUT = '/tmp/shots';

let rig;
let browser;
let page;

/** `name`'s desktop and phone screenshots, also in /tmp/shots, once the greeting's toast (no
 * Claude Code here) is gone. */
async function keep(name) {
  await page.getByTestId('toast').waitFor({ state: 'detached', timeout: 15_000 });
  await shot(page, name);
  mkdirSync(OUT, { recursive: true });
  for (const size of ['desktop', 'phone']) copyFileSync(join(SHOTS, `${name}-${size}.png`), join(OUT, `${name}-${size}.png`));
}

/** Go to a screen through the nav, as a person does (the page is not loaded again). */
async function go(screen) {
  await page.click(`[data-nav=${screen}]`);
  await page.waitForURL((u) => u.pathname === `/app/${screen}`);
}

/** The Planner's row for the item whose words are `text`. */
const row = (text) => page.locator('[data-testid=plan-item]', { has: page.getByText(text, { exact: true }) });
/** Needs' card for it. */
const card = (text) => page.locator('[data-testid=due]', { has: page.getByText(text, { exact: true }) });

/** Add an item on the Planner screen. */
async function add(text, kind, when = '') {
  await page.getByTestId('plan-kind').selectOption(kind);
  await page.getByTestId('plan-text').fill(text);
  if (kind !== 'note') await page.getByTestId('plan-when').fill(when);
  await page.getByTestId('plan-add').click();
}

before(async () => {
  rig = await Rig.start('planner');
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
  await onboardByScreens(rig, page);
  await page.waitForURL((u) => u.pathname.startsWith('/app'));
  // A marker that a full page load would wipe: "live" means it is still there.
  await page.evaluate(() => (window.__sameLoad = true));
});

after(async () => {
  await browser?.close();
  await rig?.stop();
});

const T = { timeout: 120_000 };
const it = shootingTest('planner-', () => page);

it('a reminder added in words is coming up, then due in Needs live, and Done moves it to Done', T, async () => {
  assert.equal(await page.evaluate(() => window.__tones), 0, 'no sound but an alarm\'s');
  await go('planner');
  await page.getByTestId('plan-form').waitFor();
  assert.equal(await page.getByTestId('plan-text').getAttribute('placeholder'), 'Remind me…');
  assert.equal(await page.getByTestId('plan-when').getAttribute('placeholder'), 'in 20m, tomorrow 9am');
  assert.deepEqual(await page.getByTestId('plan-kind').locator('option').allInnerTexts(), ['Reminder', 'Todo', 'Note', 'Alarm', 'Timer']);

  const sent = page.waitForRequest((r) => r.url().endsWith('/v1/tools/planner.add'));
  await add('Stretch your legs', 'reminder', 'in 2s');
  const body = (await sent).postDataJSON();
  assert.equal(body.zone, await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone), 'the person\'s time zone goes with the words');
  assert.equal(body.kind, 'reminder');
  const coming = page.getByTestId('plan-coming');
  await coming.getByText('Stretch your legs', { exact: true }).waitFor();
  assert.match(await row('Stretch your legs').getByTestId('plan-when-shown').innerText(), /^(today|tomorrow) \d\d:\d\d$/);
  assert.equal(await page.getByTestId('plan-text').inputValue(), '', 'the field is ready for the next one');
  const [item] = (await rig.sock('planner.list', {})).filter((i) => i.text === 'Stretch your legs');

  // Needs, before it is due: nothing yet; then it arrives from the stream.
  await go('needs');
  if (Date.now() < item.due_at - 300) assert.equal(await card('Stretch your legs').count(), 0, 'not due yet');
  const due = card('Stretch your legs');
  await due.waitFor({ timeout: 15_000 });
  assert.equal(await page.evaluate(() => window.__sameLoad), true, 'it came live, with no reload');
  assert.equal(await due.getAttribute('data-kind'), 'reminder');
  assert.equal(await due.locator('.kind').innerText(), 'Reminder');
  assert.match(await due.getByTestId('due-when').innerText(), /^due (just now|1 min ago)$/);
  assert.equal(await due.getByTestId('due-done').innerText(), 'Done');
  assert.equal(await due.getByTestId('due-snooze').innerText(), 'Snooze 10 min');
  assert.equal(await page.getByTestId('needs-count').innerText(), '1', 'the nav counts it');
  await keep('planner-needs');

  await due.getByTestId('due-done').click();
  await due.waitFor({ state: 'detached' });
  await page.getByTestId('needs-empty').waitFor();
  assert.equal(await page.getByTestId('needs-count').count(), 0);
  assert.ok((await rig.sock('planner.list', { done: true })).find((i) => i.id === item.id).done_at, 'vyred has it done');

  await go('planner');
  const doneList = page.getByTestId('plan-done');
  await doneList.waitFor();
  assert.equal(await page.getByTestId('plan-done-count').innerText(), '1');
  assert.equal(await doneList.evaluate((d) => d.open), false, 'Done is folded');
  await doneList.locator('summary').click();
  await doneList.getByText('Stretch your legs', { exact: true }).waitFor();
  assert.match(await row('Stretch your legs').innerText(), /done today \d\d:\d\d|done tomorrow/);
  assert.equal(await page.getByTestId('plan-coming').count(), 0, 'nothing else is coming up');
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('a todo is added without a time and ticked off', T, async () => {
  await add('Buy bread', 'todo');
  const todo = page.getByTestId('plan-todo');
  await todo.getByText('Buy bread', { exact: true }).waitFor();
  assert.equal(await row('Buy bread').locator('.badge').count(), 0, 'a todo in To do needs no badge');
  await row('Buy bread').getByTestId('plan-check').check();
  await todo.waitFor({ state: 'detached' });
  await waitFor('Done to count 2', async () => (await page.getByTestId('plan-done-count').innerText()) === '2');
  await page.getByTestId('plan-done').getByText('Buy bread', { exact: true }).waitFor();
  assert.equal(await row('Buy bread').getByTestId('plan-check').isChecked(), true);
});

it('words vyred cannot read as a time are said under the field, what was typed kept', T, async () => {
  await add('Call mum', 'reminder', 'soon');
  const error = page.getByTestId('plan-error');
  await error.waitFor();
  assert.match(await error.innerText(), /^"soon" is not a time Vyre reads: say e\.g\. "in 20m"/);
  assert.equal(await page.getByTestId('plan-text').inputValue(), 'Call mum');
  assert.equal(await page.getByTestId('plan-when').inputValue(), 'soon');
  // A reminder with no time at all: vyred's words too.
  await page.getByTestId('plan-when').fill('');
  await page.getByTestId('plan-add').click();
  await waitFor('the reminder-needs-a-time message', async () => /^a reminder needs a time/.test(await error.innerText()));
  // Put right, it goes in, and the message goes.
  await page.getByTestId('plan-when').fill('tomorrow 9am');
  assert.equal(await error.count(), 0, 'typing clears the message');
  await page.getByTestId('plan-add').click();
  await page.getByTestId('plan-coming').getByText('Call mum', { exact: true }).waitFor();
  assert.equal(await row('Call mum').getByTestId('plan-when-shown').innerText(), 'tomorrow 09:00');
});

it('the Planner screen: every list, a note, an alarm, a session\'s item live, a removal confirmed', T, async () => {
  await add('Wifi password is on the fridge', 'note');
  await page.getByTestId('plan-notes').getByText('Wifi password is on the fridge', { exact: true }).waitFor();
  await add('Team call', 'alarm', 'in 3h');
  await row('Team call').waitFor();
  assert.match(await row('Team call').innerText(), /Alarm[\s\S]*(today|tomorrow) \d\d:\d\d[\s\S]*in (2 h 59 min|3 h)/);
  await add('Pasta', 'timer', 'in 9m');
  await row('Pasta').waitFor();
  assert.match(await row('Pasta').innerText(), /in 9 min/);
  // Added elsewhere (the CLI, a session): the screen follows the stream.
  await rig.sock('planner.add', { text: 'Water the plants', kind: 'todo' });
  await page.getByTestId('plan-todo').getByText('Water the plants', { exact: true }).waitFor();
  // Coming up is soonest first.
  assert.deepEqual(await page.getByTestId('plan-coming').locator('[data-testid=plan-text-shown]').allInnerTexts(), ['Pasta', 'Team call', 'Call mum']);
  await keep('planner-screen');

  // Snoozed from the list: it moves to its new time.
  await row('Call mum').getByTestId('plan-snooze').selectOption('1h');
  await waitFor('Call mum to move up', async () => (await page.getByTestId('plan-coming').locator('[data-testid=plan-text-shown]').allInnerTexts())[1] === 'Call mum');
  assert.match(await row('Call mum').innerText(), /in 1 h|in 59 min/);

  // Removed, after the app's own question (Cancel keeps it).
  await row('Wifi password is on the fridge').getByTestId('plan-remove').click();
  const confirm = page.getByTestId('confirm');
  await confirm.getByText('Remove “Wifi password is on the fridge”?').waitFor();
  await page.getByTestId('confirm-cancel').click();
  assert.equal(await row('Wifi password is on the fridge').count(), 1, 'cancelled: still there');
  await row('Wifi password is on the fridge').getByTestId('plan-remove').click();
  await page.getByTestId('confirm-ok').click();
  await page.getByTestId('plan-notes').waitFor({ state: 'detached' });
  assert.equal((await rig.sock('planner.list', { done: true })).some((i) => i.text.startsWith('Wifi')), false, 'gone from vyred');
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('Snooze 10 min in Needs puts a due item off; an alarm falls due with no error', T, async () => {
  await go('needs');
  await page.getByTestId('needs-empty').waitFor();
  await rig.sock('planner.add', { text: 'Take the cake out', kind: 'alarm', at: 'in 1s' });
  await rig.sock('planner.add', { text: 'Move the car', at: 'in 1s' });
  const alarm = card('Take the cake out');
  await alarm.waitFor({ timeout: 15_000 });
  assert.equal(await alarm.getAttribute('data-kind'), 'alarm');
  assert.equal(await alarm.locator('.kind').innerText(), 'Alarm');
  // The page was touched (clicked) before, so it may make sound: the alarm beeps.
  await waitFor('the alarm to beep', () => page.evaluate(() => window.__tones >= 3), 5000);
  const car = card('Move the car');
  await car.waitFor({ timeout: 15_000 });
  await car.getByTestId('due-snooze').click();
  await car.waitFor({ state: 'detached' });
  const moved = (await rig.sock('planner.list', {})).find((i) => i.text === 'Move the car');
  assert.equal(moved.fell_due_at, null, 'it waits again');
  assert.ok(Math.abs(moved.due_at - (Date.now() + 600_000)) < 60_000, 'ten minutes on');
  await alarm.getByTestId('due-done').click();
  await page.getByTestId('needs-empty').waitFor();
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('one that fell due while vyred was down says so, live and after a reload', T, async () => {
  await go('needs');
  await page.getByTestId('needs-empty').waitFor();
  await rig.sock('planner.add', { text: 'Feed the cat', at: 'in 2s' });
  // vyred stops before it is due, and starts again once it is past.
  const port = new URL(rig.base).port;
  await rig.halt();
  await new Promise((r) => setTimeout(r, 4000));
  rmSync(join(rig.vyreHome, 'vyred.addr'), { force: true });
  await rig.launch(port);
  const late = card('Feed the cat');
  await late.waitFor({ timeout: 60_000 });
  assert.match(await late.getByTestId('due-when').innerText(), /^was due (at \d\d:\d\d|yesterday \d\d:\d\d) while Vyre was off$/);
  // A fresh load reads the lateness from vyred's events.
  await page.reload();
  await late.waitFor();
  assert.match(await late.getByTestId('due-when').innerText(), /while Vyre was off$/);
  await late.getByTestId('due-done').click();
  await page.getByTestId('needs-empty').waitFor();
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});
