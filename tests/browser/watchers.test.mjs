// Watchers in the app (issue 23), in Chromium against a real vyred: a watcher the person wrote
// (through the API) shows on the Watchers screen live, "Waiting for you to turn it on", with Run
// now refused until then; Test before then says it is given its vault item only then; Turn on
// asks first and lists the vault items it will be given and shows the files it will run, the
// script opened and as text (Cancel keeps it paused); rewritten while the question is open, it
// is not turned on: the question is asked again, saying so, with what it runs now, and Turn on
// then turns that on. A row's Code shows the same; once on, Test
// shows what a dry run found and logged, filing nothing, and Run now files its item, which shows
// under Found lately as a link that opens in a new tab; Logs shows its lines; Pause and Remove
// (asked first) do what they say, and what it filed stays. One that fails says why, keeps what
// it logged before it failed, and is turned off after 5 failures in a row until the person turns
// it on again. One a session wrote (as the list says it: faked here) is said so in its Turn on
// question; when vyred cannot give a watcher's files, the question says so and Turn on still
// works. The person's clock (India's) is not vyred's (UTC): a schedule at a time of day
// says its zone; one every 15 minutes does not.
// Runs need bwrap (the script runs jailed). No Claude Code needed.
// Screenshots: screenshots/watchers-{screen,turn-on,turn-on-rewritten,turn-on-session,code,test,failed-log,off}-{desktop,phone}.png, copied to
// /tmp/shots/.

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Rig, waitFor } from './lib/rig.mjs';
import { onboardByScreens } from './lib/onboard.mjs';
import { DESKTOP, PHONE, SHOTS, openBrowser, shootingTest, shot } from './lib/browser.mjs';

/** Where the screenshots are copied for a person to look at. */
const OUT = '/tmp/shots';

/** The person's clock: half an hour off whole hours from vyred's (UTC), so any schedule whose
 * words hold only on vyred's clock says so. */
const BROWSER_ZONE = 'Asia/Kolkata';

/** A script that always fails, as a site that is down makes one. */
const FAILING = `export async function watch({ log }) {
  log('asking the site');
  throw new Error('the site said 503');
}
`;

/** A line of SCRIPT the person reads before turning it on. */
const MARK = '// hello-news: the news from example.com, one item a run';

/** A watcher's script: one item each run, and a line in its log; a line long enough to wrap on
 * a phone. */
const SCRIPT = `${MARK}
const where = 'https://example.com/news?from=vyre&kind=everything&sort=newest&page=1&limit=100';
export async function watch({ vault, since, emit, log }) {
  log('looking for news');
  emit({ title: 'hello', url: 'https://example.com/x', body: 'first line\\n<b>not bold</b>' });
}
`;

/** SCRIPT as the person writes it again while its Turn on question is open: a new first line. */
const REWRITTEN = SCRIPT.replace(MARK, '// hello-news, written again: still the news from example.com');

let rig;
let browser;
let page;

/** `name`'s desktop and phone screenshots, also in /tmp/shots, once the greeting's toast (no
 * Claude Code here) is gone; or at once, with the toast, `withToast`. */
async function keep(name, withToast = false) {
  if (!withToast) await page.getByTestId('toast').waitFor({ state: 'detached', timeout: 15_000 });
  await shot(page, name);
  mkdirSync(OUT, { recursive: true });
  for (const size of ['desktop', 'phone']) copyFileSync(join(SHOTS, `${name}-${size}.png`), join(OUT, `${name}-${size}.png`));
}

/** When a quarter hour is near, wait till it is past: "hello-news" (every 15 minutes) then runs
 * by itself only after the tests have paused it, about half a minute after it is turned on (a
 * minute on a loaded machine). Else its own run would file a second item, or be under way (no
 * next run) when the row is read. */
async function clearOfQuarterHour(margin = 90_000) {
  const quarter = 15 * 60_000;
  const left = quarter - (Date.now() % quarter);
  if (left < margin) await new Promise((r) => setTimeout(r, left + 2_000));
}

/** In `box` (the Turn on question, or the Code dialog), hello-news's files: watch.js first and
 * opened, `text` (its script: SCRIPT, or REWRITTEN) as text (its `<b>` is no tag), its long line
 * wrapped; watcher.json shut. */
async function seesWhatItRuns(box, text = SCRIPT) {
  const files = box.getByTestId('watcher-source-file');
  await files.first().waitFor();
  assert.deepEqual(await files.evaluateAll((all) => all.map((d) => [d.dataset.name, d.open])), [
    ['watch.js', true],
    ['watcher.json', false],
  ]);
  const script = files.first().getByTestId('watcher-source-text');
  assert.equal(await script.textContent(), text, 'the script as it is, to the letter');
  assert.ok((await script.innerText()).includes(text.split('\n')[0]));
  assert.equal(await script.locator('*').count(), 0, 'plain text: no element in it');
  assert.match(await files.last().locator('summary').innerText(), /^watcher\.json\s+its settings$/);
  await files.last().locator('summary').click();
  assert.match(await files.last().getByTestId('watcher-source-text').innerText(), /"needs":\s*\[\s*"example-token"\s*\]/);
  await files.last().locator('summary').click();
  // A long line wraps, on a phone and on a wide screen: nothing of it hides off the side.
  for (const size of [PHONE, DESKTOP]) {
    await page.setViewportSize(size);
    const sideways = await script.evaluate((e) => e.scrollWidth - e.clientWidth);
    assert.ok(sideways <= 0, `the script wraps at ${size.width} px (${sideways}px wider)`);
  }
}

/** The Watchers screen's row for `name`. */
const row = (name) => page.locator(`[data-testid=watcher][data-name="${name}"]`);
const status = (name) => row(name).getByTestId('watcher-status');

before(async () => {
  // vyred's clock, as a box's: what its schedules are read in.
  rig = await Rig.start('watchers', { env: { TZ: 'UTC' } });
  browser = await openBrowser({ timezoneId: BROWSER_ZONE });
  page = browser.page;
  await onboardByScreens(rig, page);
  await page.waitForURL((u) => u.pathname.startsWith('/app'));
  await rig.sock('projects.create', { name: 'news', home: rig.work });
  await rig.sock('vault.put', { name: 'example-token', value: 'not-a-real-token' });
  // A marker that a full page load would wipe: "live" means it is still there.
  await page.evaluate(() => (window.__sameLoad = true));
});

after(async () => {
  await browser?.close();
  await rig?.stop();
});

const T = { timeout: 180_000 };
const it = shootingTest('watchers-', () => page);

it('a new watcher waits for the person; Test files nothing; Turn on lists what it is given', T, async () => {
  await page.click('[data-nav=watchers]');
  await page.waitForURL((u) => u.pathname === '/app/watchers');
  await page.getByTestId('watchers-empty').waitFor();

  // Written while the screen is open: it comes from the stream.
  await rig.sock('watchers.create', { name: 'hello-news', project: 'news', schedule: '*/15 * * * *', script: SCRIPT, needs: ['example-token'] });
  await row('hello-news').waitFor();
  assert.equal(await page.evaluate(() => window.__sameLoad), true, 'it came live, with no reload');
  assert.equal(await row('hello-news').getAttribute('data-state'), 'waiting');
  assert.equal(await status('hello-news').innerText(), 'Waiting for you to turn it on');
  // Every 15 minutes is so on any clock: no zone said.
  assert.equal(await row('hello-news').getByTestId('watcher-schedule').innerText(), 'Set to run every 15 minutes');
  assert.equal(await row('hello-news').getByTestId('watcher-last').innerText(), 'Not run yet');
  assert.equal(await row('hello-news').getByTestId('watcher-run').isDisabled(), true, 'no run before it is turned on');
  assert.equal(await row('hello-news').getByTestId('watcher-pause').count(), 0);

  // Test before it is on: it is not given its vault items yet, and vyred's words say so.
  await row('hello-news').getByTestId('watcher-test').click();
  const dialog = page.getByTestId('watcher-dialog');
  const tested = dialog.getByTestId('watcher-tested');
  await tested.waitFor();
  assert.match(await tested.innerText(), /^It failed after \d+(\.\d)? m?s: it needs the vault item "example-token", which it is given when the person turns it on$/);
  assert.equal(await tested.getAttribute('class').then((c) => c.split(' ').includes('err')), true, 'said as an error');
  await dialog.getByTestId('watcher-dialog-close').click();
  await tested.waitFor({ state: 'detached' });

  // Turn on asks first, listing the vault items it will be given; Cancel keeps it paused.
  await row('hello-news').getByTestId('watcher-on').click();
  const confirm = page.getByTestId('confirm');
  await confirm.getByText('Turn on “hello-news”?').waitFor();
  // Opened at its top, its title focused: Enter does not turn it on unread.
  await waitFor('the title to have the focus', async () => (await page.evaluate(() => document.activeElement?.id)) === 'confirm-title');
  assert.deepEqual(await page.getByTestId('confirm-list').locator('li').allInnerTexts(), ['example-token']);
  assert.match(await confirm.innerText(), /It will be given these items from your vault/);
  assert.match(await confirm.innerText(), /It will run every 15 minutes and file what it finds in the project “news”\. Written by you\./);
  // What it runs: the script first, opened, its text as text; watcher.json shut. The person
  // wrote it: no warning.
  await seesWhatItRuns(confirm);
  assert.equal(await confirm.getByRole('heading', { name: 'What it runs' }).count(), 1);
  assert.equal(await confirm.getByTestId('watcher-source-note').count(), 0, 'the person\'s own: no warning');
  await keep('watchers-turn-on');
  await page.getByTestId('confirm-cancel').click();
  assert.equal((await rig.sock('watchers.list', {})).find((w) => w.name === 'hello-news').paused, true, 'cancelled: still paused');

  // Written again (through the API, as the person) while its question is open, after its code
  // was shown: Turn on does not turn on what nobody read. The question is asked again, saying
  // so, with the new code; Turn on then turns that on.
  await clearOfQuarterHour();
  await row('hello-news').getByTestId('watcher-on').click();
  const shownFirst = confirm.getByTestId('watcher-source-text').first();
  await shownFirst.waitFor();
  assert.equal(await shownFirst.textContent(), SCRIPT);
  await rig.sock('watchers.create', { name: 'hello-news', project: 'news', schedule: '*/15 * * * *', script: REWRITTEN, needs: ['example-token'], replace: true });
  await page.getByTestId('confirm-ok').click();
  const warning = confirm.getByTestId('confirm-warning');
  await warning.waitFor();
  assert.equal(
    await warning.innerText(),
    '“hello-news” was rewritten while you were reading it, so it was not turned on. What it runs now is below: read it before you turn it on.',
  );
  assert.equal((await rig.sock('watchers.list', {})).find((w) => w.name === 'hello-news').paused, true, 'refused: still paused');
  assert.equal(await row('hello-news').getAttribute('data-state'), 'waiting');
  await confirm.getByText('Turn on “hello-news”?').waitFor();
  await waitFor('the title to have the focus again', async () => (await page.evaluate(() => document.activeElement?.id)) === 'confirm-title');
  assert.deepEqual(await page.getByTestId('confirm-list').locator('li').allInnerTexts(), ['example-token']);
  await seesWhatItRuns(confirm, REWRITTEN);
  assert.ok(!(await confirm.innerText()).includes(MARK), 'the old code is gone from the question');
  await keep('watchers-turn-on-rewritten');
  await page.getByTestId('confirm-ok').click();
  await waitFor('it to run', async () => (await status('hello-news').innerText()) === 'Runs every 15 minutes');
  await warning.waitFor({ state: 'detached' });
  assert.match(await row('hello-news').getByTestId('watcher-next').innerText(), /^Next: (today|tomorrow) \d\d:\d\d, in \d+ min$/);
  assert.equal((await rig.sock('watchers.list', {})).find((w) => w.name === 'hello-news').paused, false, 'vyred has it on');

  // Test, now that it is on: what it would find and what it logged; nothing filed.
  await row('hello-news').getByTestId('watcher-test').click();
  await tested.waitFor();
  assert.match(await tested.innerText(), /^Found 1 item in \d+(\.\d)? m?s\. Nothing was filed\.$/);
  const found = dialog.getByTestId('watcher-test-item');
  assert.equal(await found.locator('a').innerText(), 'hello');
  assert.equal(await found.locator('a').getAttribute('href'), 'https://example.com/x');
  assert.match(await dialog.getByTestId('watcher-test-logs').innerText(), /looking for news/);
  await keep('watchers-test');
  await dialog.getByTestId('watcher-dialog-close').click();
  await tested.waitFor({ state: 'detached' });
  assert.equal((await rig.sock('watchers.items', {})).items.length, 0, 'a test files nothing');
  assert.equal(await page.getByTestId('watch-found').count(), 0);
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('Run now files its item, a link in a new tab; Logs, Pause and Remove', T, async () => {
  await row('hello-news').getByTestId('watcher-run').click();
  const item = page.getByTestId('watch-item').filter({ hasText: 'hello' });
  await item.waitFor();
  await waitFor('the toast', async () => /hello-news: Filed 1 new item\./.test(await page.getByTestId('toast').innerText()));
  const link = item.getByTestId('watch-item-title');
  assert.equal(await link.getAttribute('href'), 'https://example.com/x');
  assert.equal(await link.getAttribute('target'), '_blank');
  assert.match(await link.getAttribute('rel'), /\bnoopener\b/);
  assert.equal(await item.getByTestId('watch-item-body').innerText(), 'first line\n<b>not bold</b>', 'the text is text');
  assert.equal(await item.locator('b').count(), 0);
  await waitFor('the row to count it', async () => /Filed 1 item/.test(await row('hello-news').innerText()));
  assert.match(await row('hello-news').getByTestId('watcher-last').innerText(), /^Last ran today \d\d:\d\d$/);
  await keep('watchers-screen');

  // Code: the same files, read only.
  await row('hello-news').getByTestId('watcher-code').click();
  const dialog = page.getByTestId('watcher-dialog');
  await dialog.getByText('What “hello-news” runs').waitFor();
  await seesWhatItRuns(dialog, REWRITTEN);
  assert.equal(await dialog.getByTestId('watcher-source-note').count(), 0);
  assert.equal(await dialog.locator('button').allInnerTexts().then((b) => b.join()), 'Close', 'read only: nothing to do but close');
  await keep('watchers-code');
  await page.getByTestId('watcher-dialog-close').click();
  await dialog.getByTestId('watcher-source').waitFor({ state: 'detached' });

  await row('hello-news').getByTestId('watcher-logs').click();
  const lines = page.getByTestId('watcher-log-lines');
  await lines.waitFor();
  assert.match(await lines.innerText(), /\d\d:\d\d:\d\d looking for news/);
  await page.getByTestId('watcher-dialog-close').click();
  await lines.waitFor({ state: 'detached' });

  await row('hello-news').getByTestId('watcher-pause').click();
  await waitFor('it to be paused', async () => (await status('hello-news').innerText()) === 'Paused');
  assert.equal(await row('hello-news').getByTestId('watcher-next').count(), 0, 'no next run while paused');

  // Removed, after the app's own question (Cancel keeps it); what it filed stays.
  await row('hello-news').getByTestId('watcher-remove').click();
  const confirm = page.getByTestId('confirm');
  await confirm.getByText('Remove “hello-news”?').waitFor();
  assert.match(await confirm.innerText(), /The item it filed stays\./);
  await page.getByTestId('confirm-cancel').click();
  assert.equal(await row('hello-news').count(), 1, 'cancelled: still there');
  await row('hello-news').getByTestId('watcher-remove').click();
  await page.getByTestId('confirm-ok').click();
  await page.getByTestId('watchers-empty').waitFor();
  assert.equal(await page.getByTestId('watch-item').count(), 1, 'its item stays');
  assert.deepEqual(await rig.sock('watchers.list', {}), []);
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('a watcher that fails says why and keeps its log, is turned off after failures in a row, and can be turned on again', T, async () => {
  // The app cannot write one as a session does, so watchers.list says a session wrote this one
  // (its thread), until its Turn on question has been read.
  const LIST = '**/v1/tools/watchers.list';
  await page.route(LIST, async (r) => {
    const res = await r.fetch();
    const json = await res.json();
    for (const w of json.data ?? []) if (w.name === 'down-site') w.created_by = '0191b2c3-thread';
    await r.fulfill({ response: res, json });
  });
  const made = await rig.sock('watchers.create', { name: 'down-site', project: 'news', schedule: '0 9 * * 1-5', script: FAILING });
  assert.equal(made.zone, 'UTC', 'vyred reads its schedule on its own clock');
  await row('down-site').waitFor();
  // 09:00 is vyred's clock's, not the person's: the words say which.
  assert.equal(await row('down-site').getByTestId('watcher-schedule').innerText(), 'Set to run on weekdays at 09:00 (UTC)');
  // vyred cannot give its files this once: the question says so, and Turn on still works.
  const SOURCE = '**/v1/tools/watchers.source';
  await page.route(SOURCE, (r) => r.fulfill({ status: 500, contentType: 'application/json', body: JSON.stringify({ error: { code: 'internal', message: 'the disk said no' } }) }));
  await row('down-site').getByTestId('watcher-on').click();
  const confirm = page.getByTestId('confirm');
  await confirm.getByText('Turn on “down-site”?').waitFor();
  const failed = confirm.getByTestId('watcher-source-failed');
  await failed.waitFor();
  assert.match(await failed.innerText(), /^Could not show what it runs\.\s+the disk said no$/);
  assert.equal(await confirm.getByTestId('watcher-source-file').count(), 0);
  assert.equal(await page.getByTestId('confirm-ok').isEnabled(), true, 'Turn on stays possible');
  // Written by a session: said plainly, above what it runs.
  assert.equal(await confirm.getByTestId('watcher-source-note').innerText(), 'Written by Claude in a chat. Read what it runs before you turn it on.');
  assert.doesNotMatch(await confirm.innerText(), /Written by you/);
  await keep('watchers-turn-on-session');
  await page.unroute(SOURCE);
  await page.unroute(LIST);
  assert.match(await confirm.innerText(), /It is given nothing from your vault\./);
  assert.equal(await page.getByTestId('confirm-list').count(), 0, 'no list when it needs nothing');
  assert.match(await confirm.innerText(), /It will run on weekdays at 09:00 \(UTC\) and file/);
  await page.getByTestId('confirm-ok').click();
  await waitFor('it to run', async () => (await status('down-site').innerText()) === 'Runs on weekdays at 09:00 (UTC)');

  // Run now: it fails, the toast and the row say why.
  await row('down-site').getByTestId('watcher-run').click();
  await waitFor('the toast', async () => /^down-site: It failed: .*the site said 503$/.test(await page.getByTestId('toast').innerText()));
  await waitFor('the row to say it failed', async () => /^Last run today \d\d:\d\d failed: .*the site said 503/.test(await row('down-site').getByTestId('watcher-last').innerText()));
  // Its log: what the script logged before it failed, then why it failed.
  await row('down-site').getByTestId('watcher-logs').click();
  const lines = page.getByTestId('watcher-log-lines');
  await lines.waitFor();
  assert.match(await lines.innerText(), /\d\d:\d\d:\d\d asking the site\n\d\d:\d\d:\d\d failed: .*the site said 503 \(exit status: 1\)/);
  await keep('watchers-failed-log', true);
  await page.getByTestId('watcher-dialog-close').click();
  await lines.waitFor({ state: 'detached' });

  // Again until vyred turns it off (its own retries count too).
  await waitFor(
    'it to be turned off',
    async () => {
      if ((await row('down-site').getAttribute('data-state')) === 'off') return true;
      const run = row('down-site').getByTestId('watcher-run');
      if (await run.isEnabled()) await run.click();
      await page.waitForTimeout(300);
      return false;
    },
    60_000,
  );
  assert.match(await status('down-site').innerText(), /^Turned off after 5 failures: .*the site said 503/);
  assert.equal(await row('down-site').getByTestId('watcher-run').isDisabled(), true);
  assert.equal(await row('down-site').getByTestId('watcher-next').count(), 0, 'no next run while off');
  await keep('watchers-off');

  // Turned on again: it runs on its schedule, its failures cleared.
  await row('down-site').getByTestId('watcher-on').click();
  await page.getByTestId('confirm-ok').click();
  await waitFor('it to run again', async () => (await status('down-site').innerText()) === 'Runs on weekdays at 09:00 (UTC)');
  const w = (await rig.sock('watchers.list', {})).find((x) => x.name === 'down-site');
  assert.equal(w.disabled, null);
  assert.equal(w.failures, 0);
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});
