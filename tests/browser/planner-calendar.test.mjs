// The Planner as a calendar, and its calendar files, in Chromium against a real vyred. Items
// added through the API show on their day in the month grid (time and words on a desktop, a dot
// with the count on a phone); the arrow keys and a press pick a day, whose agenda has the list's
// own actions: one is marked done there, and "Show done" brings it back struck through. The
// choice of view and "Show done" outlast a reload. Export saves vyre-planner.ics (a calendar
// file); Import reads a .ics file, says "Added 2; left out 1" with what was left out and why, and
// a second import of the same file leaves all of it out. Too big a file is refused before it is
// sent; one that is not a calendar is refused in vyred's words. No Claude Code needed.
// Screenshots: screenshots/planner-{calendar,import}-{desktop,phone}.png, copied to /tmp/shots/,
// and /tmp/shots/planner-calendar-agenda-desktop.png.

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Rig, waitFor } from './lib/rig.mjs';
import { onboardByScreens } from './lib/onboard.mjs';
import { DESKTOP, PHONE, SHOTS, openBrowser, shootingTest, shot } from './lib/browser.mjs';

const OUT = '/tmp/shots';
const DAY = 86_400_000;

let rig;
let browser;
let page;
/** The browser's time zone: the calendar's days are its days. */
let zone;

async function keep(name) {
  await page.getByTestId('toast').waitFor({ state: 'detached', timeout: 15_000 });
  await shot(page, name);
  mkdirSync(OUT, { recursive: true });
  for (const size of ['desktop', 'phone']) copyFileSync(join(SHOTS, `${name}-${size}.png`), join(OUT, `${name}-${size}.png`));
}

async function go(screen) {
  await page.click(`[data-nav=${screen}]`);
  await page.waitForURL((u) => u.pathname === `/app/${screen}`);
}

/** The day `ms` falls on in the browser, as the calendar names it: "2026-12-24". */
const dayIn = (ms) =>
  page.evaluate((ms) => {
    const d = new Date(ms);
    return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
  }, ms);

const cell = (day) => page.locator(`[data-testid=cal-day][data-day="${day}"]`);
const agenda = () => page.getByTestId('cal-agenda');
/** The agenda's row for the item whose words are `text`. */
const row = (text) => agenda().locator('[data-testid=plan-item]', { has: page.getByText(text, { exact: true }) });

/** Turn the months until `day` is in the grid, and pick it. */
async function pickDay(day) {
  for (let i = 0; i < 13 && !(await cell(day).count()); i++) {
    const shown = await page.getByTestId('cal-month').innerText();
    await page.getByTestId(day > (await agenda().getAttribute('data-day')) ? 'cal-next' : 'cal-prev').click();
    await waitFor('the month to turn', async () => (await page.getByTestId('cal-month').innerText()) !== shown);
  }
  await cell(day).click();
  await waitFor(`${day} to be picked`, async () => (await agenda().getAttribute('data-day')) === day);
}

/** A calendar file as a calendar app writes one: CRLF lines. */
const ics = (...lines) => ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//Some calendar//EN', ...lines, 'END:VCALENDAR', ''].join('\r\n');
/** `ms` as iCalendar's UTC time: 20261224T100000Z. */
const icsTime = (ms) => new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\.\d+/, '');

/** Pick `file` ({name, buffer}) in Import's file picker. */
async function importFile(file) {
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByTestId('plan-import').click()]);
  await chooser.setFiles({ mimeType: 'text/calendar', ...file });
}

before(async () => {
  rig = await Rig.start('planner-calendar');
  browser = await openBrowser();
  page = browser.page;
  await onboardByScreens(rig, page);
  await page.waitForURL((u) => u.pathname.startsWith('/app'));
  zone = await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
});

after(async () => {
  await browser?.close();
  await rig?.stop();
});

const T = { timeout: 120_000 };
const it = shootingTest('planner-calendar-', () => page);

it('an item shows on its day; the picked day\'s agenda marks it done; the view is remembered', T, async () => {
  await go('planner');
  await page.getByTestId('plan-form').waitFor();
  const dentist = await rig.sock('planner.add', { text: 'Dentist', at: 'tomorrow 9am', zone });
  await rig.sock('planner.add', { text: 'Call the bank', kind: 'todo', at: 'tomorrow 14:30', zone });
  await rig.sock('planner.add', { text: 'Buy stamps', kind: 'todo' });
  await page.getByTestId('plan-todo').getByText('Buy stamps', { exact: true }).waitFor();
  assert.equal(await page.getByTestId('plan-view-list').getAttribute('aria-pressed'), 'true', 'the list first');

  await page.getByTestId('plan-view-calendar').click();
  const grid = page.getByTestId('cal-grid');
  await grid.waitFor();
  assert.equal(await page.getByTestId('plan-view-calendar').getAttribute('aria-pressed'), 'true');
  assert.equal(await page.getByTestId('plan-coming').count(), 0, 'the lists give way to the calendar');
  assert.equal(await grid.getAttribute('role'), 'grid');
  assert.equal(await grid.getAttribute('aria-label'), await page.getByTestId('cal-month').innerText());
  assert.deepEqual(await grid.locator('th').allInnerTexts(), ['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'], 'weeks start on Monday');
  // Today: marked, picked, its agenda open under the grid.
  const today = await dayIn(Date.now());
  const todayCell = page.locator('[data-testid=cal-day][aria-current=date]');
  assert.equal(await todayCell.getAttribute('data-day'), today);
  assert.equal(await todayCell.getAttribute('aria-selected'), 'true');
  assert.match(await todayCell.getAttribute('aria-label'), /^(Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day \d{1,2} [A-Z][a-z]+ \d{4}, today, nothing planned$/);
  assert.equal(await agenda().getAttribute('data-day'), today);
  await page.getByTestId('cal-agenda-empty').waitFor();
  assert.match(await agenda().innerText(), /One todo or note has no time, so no day: they are in the List\./);

  // The next day by the keyboard, the month following when it must.
  await todayCell.focus();
  await page.keyboard.press('ArrowRight');
  const tomorrow = await dayIn(dentist.due_at);
  await waitFor('tomorrow to be picked', async () => (await agenda().getAttribute('data-day')) === tomorrow);
  const day = cell(tomorrow);
  assert.equal(await day.evaluate((e) => e === document.activeElement), true, 'the focus follows the picked day');
  assert.equal(await day.getAttribute('tabindex'), '0');
  assert.equal(await todayCell.getAttribute('tabindex'), '-1', 'one day in the Tab order');
  const date = Number(tomorrow.slice(8));
  assert.match(await day.getAttribute('aria-label'), new RegExp(`^[A-Z][a-z]+day ${date} [A-Z][a-z]+ \\d{4}, 2 items$`));
  assert.deepEqual((await day.getByTestId('cal-entry').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ')), ['09:00 Dentist', '14:30 Call the bank'], 'time and words, soonest first');
  assert.equal(await day.locator('svg[data-kind=reminder]').count(), 1, 'the kind as a small icon');
  assert.equal(await day.locator('svg[data-kind=todo]').count(), 1);
  assert.match((await agenda().locator('h2').textContent()).replace(/\s+/g, ' ').trim(), new RegExp(`^[A-Z][a-z]+day ${date} [A-Z][a-z]+ \\d{4} 2$`));
  assert.deepEqual(await agenda().getByTestId('plan-text-shown').allInnerTexts(), ['Dentist', 'Call the bank']);
  await keep('planner-calendar');
  // The agenda is under the fold on a desktop: a picture of it alone.
  await agenda().screenshot({ path: join(OUT, 'planner-calendar-agenda-desktop.png') });

  // A phone: a dot with the count in the grid, the words in the agenda.
  await page.setViewportSize(PHONE);
  await day.getByTestId('cal-dot').waitFor({ state: 'visible' });
  assert.equal(await day.getByTestId('cal-dot').innerText(), '2');
  assert.equal(await day.getByTestId('cal-entry').first().isVisible(), false, 'no words in the grid');
  assert.equal(await row('Dentist').isVisible(), true);
  await page.setViewportSize(DESKTOP);

  // Done from the agenda: it leaves the day, and comes back struck through with "Show done".
  // A click, not check(): the row leaves the agenda as it is ticked.
  await row('Dentist').getByTestId('plan-check').click();
  await row('Dentist').waitFor({ state: 'detached' });
  assert.equal(await day.getAttribute('data-count'), '1');
  assert.ok((await rig.sock('planner.list', { done: true })).find((i) => i.id === dentist.id).done_at, 'vyred has it done');
  await page.getByTestId('cal-show-done').check();
  await row('Dentist').waitFor();
  assert.equal(await row('Dentist').getAttribute('data-done'), 'true');
  const struck = day.locator('[data-testid=cal-entry].done .text');
  assert.equal(await struck.innerText(), 'Dentist');
  assert.match(await struck.evaluate((e) => getComputedStyle(e).textDecorationLine), /line-through/);

  // A month on by the keyboard, and back to today; the previous and next month by the buttons.
  const month = await page.getByTestId('cal-month').innerText();
  await day.focus();
  await page.keyboard.press('PageDown');
  await waitFor('the next month', async () => (await page.getByTestId('cal-month').innerText()) !== month);
  await page.getByTestId('cal-today').click();
  await waitFor('today again', async () => (await agenda().getAttribute('data-day')) === today);
  assert.equal(await page.getByTestId('cal-today').isDisabled(), true);
  await page.getByTestId('cal-next').click();
  assert.match(await agenda().getAttribute('data-day'), /-01$/, 'the next month from its first');
  await page.getByTestId('cal-prev').click();
  assert.equal(await agenda().getAttribute('data-day'), today, 'this month again: today');

  // A reload keeps the calendar and "Show done".
  await page.reload();
  await page.getByTestId('cal-grid').waitFor();
  assert.equal(await page.getByTestId('cal-show-done').isChecked(), true);
  await pickDay(tomorrow);
  await row('Dentist').waitFor();

  // Added with the form on the calendar: its day is picked, there to be seen.
  const far = await dayIn(Date.now() + 40 * DAY);
  await page.getByTestId('plan-text').fill('Renew the passport');
  await page.getByTestId('plan-when').fill(`${far} 18:00`);
  await page.getByTestId('plan-add').click();
  await waitFor('its day to be picked', async () => (await agenda().getAttribute('data-day')) === far);
  await row('Renew the passport').waitFor();
  assert.equal(await cell(far).getAttribute('aria-selected'), 'true');
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('Export saves vyre-planner.ics, a calendar file with the items', T, async () => {
  const sent = page.waitForRequest((r) => r.url().endsWith('/v1/tools/planner.export'));
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('plan-export').click()]);
  assert.deepEqual((await sent).postDataJSON(), { done: true }, 'done ones too');
  assert.equal(download.suggestedFilename(), 'vyre-planner.ics');
  const text = readFileSync(await download.path(), 'utf8');
  assert.ok(text.startsWith('BEGIN:VCALENDAR'), text.slice(0, 80));
  assert.match(text, /SUMMARY:Dentist/);
  assert.match(text, /SUMMARY:Buy stamps/);
});

it('Import adds a calendar file\'s items and says what it left out; the same file again adds none', T, async () => {
  // 10:00 in the browser nine days on: the to-do two hours later is the same day, whatever the hour now.
  const lesson = await page.evaluate(() => {
    const d = new Date();
    d.setDate(d.getDate() + 9);
    return d.setHours(10, 0, 0, 0);
  });
  const file = {
    name: 'lessons.ics',
    buffer: Buffer.from(
      ics(
        ...['BEGIN:VEVENT', 'UID:piano-1@example.com', `DTSTART:${icsTime(lesson)}`, 'SUMMARY:Piano lesson', 'END:VEVENT'],
        ...['BEGIN:VTODO', 'UID:tax-1@example.com', `DUE:${icsTime(lesson + 2 * 3600_000)}`, 'SUMMARY:Send the tax form', 'END:VTODO'],
        ...['BEGIN:VEVENT', 'UID:party-2020@example.com', 'DTSTART:20200101T200000Z', 'SUMMARY:New year party', 'END:VEVENT'],
      ),
    ),
  };
  const sent = page.waitForRequest((r) => r.url().endsWith('/v1/tools/planner.import'));
  await importFile(file);
  const body = (await sent).postDataJSON();
  assert.equal(body.zone, zone, 'times without a zone are the browser\'s');
  assert.ok(body.ics.startsWith('BEGIN:VCALENDAR'));
  const told = page.getByTestId('plan-import-result');
  await told.getByTestId('plan-import-summary').waitFor();
  assert.equal(await told.getByTestId('plan-import-summary').innerText(), 'Added 2; left out 1');
  assert.deepEqual(await told.getByTestId('plan-import-left-out').allInnerTexts(), ['New year party — it was in the past']);
  await keep('planner-import');
  await told.getByTestId('plan-import-close').click();
  await told.getByTestId('plan-import-summary').waitFor({ state: 'detached' });

  // On their day in the calendar.
  await pickDay(await dayIn(lesson));
  await row('Piano lesson').waitFor();
  assert.equal(await row('Piano lesson').getAttribute('data-kind'), 'reminder');
  await row('Send the tax form').waitFor();
  assert.equal(await row('Send the tax form').getAttribute('data-kind'), 'todo');
  // A full day: two in words, "2 more" for the rest; the agenda has all four.
  const lessonDay = await dayIn(lesson);
  for (const at of ['22:00', '23:00']) await rig.sock('planner.add', { text: `Late one ${at}`, at: `${lessonDay} ${at}`, zone });
  await waitFor('four on the day', async () => (await cell(lessonDay).getAttribute('data-count')) === '4');
  assert.equal(await cell(lessonDay).getByTestId('cal-entry').count(), 2);
  assert.equal(await cell(lessonDay).locator('.more').innerText(), '2 more');
  assert.equal(await agenda().getByTestId('plan-item').count(), 4);

  // The same file again: all of it here already, or past.
  await importFile(file);
  await waitFor('the second answer', async () => (await told.getByTestId('plan-import-summary').innerText()) === 'Added 0; left out 3');
  const whys = await told.getByTestId('plan-import-left-out').allInnerTexts();
  assert.equal(whys.filter((w) => /imported before/.test(w)).length, 2, whys.join('\n'));
  assert.equal((await rig.sock('planner.list', {})).filter((i) => i.text === 'Piano lesson').length, 1, 'added once');
  await page.keyboard.press('Escape');
  await told.getByTestId('plan-import-summary').waitFor({ state: 'detached' });

  // Too big: refused here, never sent.
  let asked = 0;
  const count = (r) => r.url().endsWith('/v1/tools/planner.import') && asked++;
  page.on('request', count);
  await importFile({ name: 'huge.ics', buffer: Buffer.alloc(2 * 1024 * 1024 + 1, 'A') });
  await told.getByTestId('plan-import-error').waitFor();
  assert.equal(await told.getByTestId('plan-import-error').innerText(), 'It is 2.1 MB; Vyre reads calendar files up to 2 MB.');
  page.off('request', count);
  assert.equal(asked, 0, 'nothing sent');
  await told.getByTestId('plan-import-close').click();

  // Not a calendar: vyred's own words.
  await importFile({ name: 'notes.ics', buffer: Buffer.from('hello\r\n') });
  await told.getByTestId('plan-import-error').waitFor();
  assert.match(await told.getByTestId('plan-import-error').innerText(), /not an iCalendar file/);
  await told.getByTestId('plan-import-close').click();
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});
