// A project's page (/app/p/<name>), in Chromium against a real vyred: opened from its heading on
// the Deck, it shows the project's session (a terminal one, from a transcript written in its
// folder), its watcher with where it stands and the Watchers screen's actions (Turn on, Run now),
// the item it filed once run (a link in a new tab), and its open planner items (not another
// project's), each part kept live from the stream. The Watchers screen's project names open it
// too; a name no project has says so. What the watchers filed is found by its words
// (recall.filed): on the Deck, under "Filed by watchers" beside what was said in the sessions,
// and on the project page by its own search; a title a script filed with markup in it is text.
// Runs need bwrap (the script runs jailed). No Claude Code needed.
// Screenshots: screenshots/project-{deck,page,unknown,deck-filed,search,search-none,markup}-{desktop,phone}.png,
// copied to /tmp/shots/.

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Rig, waitFor } from './lib/rig.mjs';
import { onboardByScreens } from './lib/onboard.mjs';
import { SHOTS, openBrowser, shootingTest, shot } from './lib/browser.mjs';

/** Where the screenshots are copied for a person to look at. */
const OUT = '/tmp/shots';

/** A watcher's script: one item each run, and a line in its log. */
const SCRIPT = `export async function watch({ emit, log }) {
  log('looking for news');
  emit({ title: 'hello', url: 'https://example.com/x', body: 'first line' });
}
`;

/** A watcher's script that files a title and a text with markup in them: shown as text. */
const MARKUP = `export async function watch({ emit }) {
  emit({ title: '<img src=x onerror=alert(1)> quokka', url: 'https://example.com/q', body: '<b>quokka</b> seen <script>window.__pwned = 1</script>' });
}
`;

/** The terminal session in the project's folder: its transcript's id. */
const SESSION = '0b7e4c1e-0000-4000-8000-00000000b001';

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

/** A session Claude Code ran in a terminal in `cwd`, as its transcript says it. */
function transcript(cwd) {
  const at = (s) => new Date(Date.now() - 60_000 + s * 1000).toISOString();
  const lines = [
    { type: 'summary', summary: 'Reading the morning news', leafUuid: 'n-a-1' },
    { parentUuid: null, isSidechain: false, userType: 'external', cwd, sessionId: SESSION, version: '1.0.51', type: 'user', message: { role: 'user', content: 'what is in the news today?' }, uuid: 'n-u-1', timestamp: at(0) },
    {
      parentUuid: 'n-u-1',
      isSidechain: false,
      cwd,
      sessionId: SESSION,
      type: 'assistant',
      message: { id: 'msg_n_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4', content: [{ type: 'text', text: 'A walrus was seen in the harbour.' }] },
      uuid: 'n-a-1',
      timestamp: at(5),
    },
  ];
  const dir = join(rig.home, '.claude/projects', cwd.replace(/\//g, '-'));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${SESSION}.jsonl`), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
}

const part = (name) => page.getByTestId(`project-${name}`);
const watcherRow = (name) => part('watchers').locator(`[data-testid=watcher][data-name="${name}"]`);
const planRow = (text) => part('plans').locator('[data-testid=plan-item]', { has: page.getByText(text, { exact: true }) });

before(async () => {
  rig = await Rig.start('project', { env: { TZ: 'UTC' } });
  browser = await openBrowser();
  page = browser.page;
  await onboardByScreens(rig, page);
  await page.waitForURL((u) => u.pathname.startsWith('/app'));
  await rig.sock('projects.create', { name: 'news', home: rig.work });
  mkdirSync(join(rig.dir, 'garden'), { recursive: true });
  await rig.sock('projects.create', { name: 'garden', home: join(rig.dir, 'garden') });
  transcript(rig.work);
  await rig.sock('watchers.create', { name: 'hello-news', project: 'news', schedule: '*/15 * * * *', script: SCRIPT });
  await rig.sock('planner.add', { text: 'Renew the feed key', kind: 'todo', project: 'news' });
  await rig.sock('planner.add', { text: 'Dig the beds', kind: 'todo', project: 'garden' });
  await rig.sock('planner.add', { text: 'Read the morning digest', at: 'tomorrow 9am', project: 'news' });
  // A marker that a full page load would wipe: "live" means it is still there.
  await page.evaluate(() => (window.__sameLoad = true));
});

after(async () => {
  await browser?.close();
  await rig?.stop();
});

const T = { timeout: 180_000 };
const it = shootingTest('project-', () => page);

it('the Deck\'s heading opens the project: its session, its watcher, what it filed, its todos', T, async () => {
  await page.click('[data-nav=deck]');
  await page.waitForURL((u) => u.pathname === '/app/deck');
  // The transcript is read as it is written: its session comes under the project's heading.
  const heading = page.locator('section[data-project=news]').getByTestId('deck-project');
  await waitFor(
    'the session under news on the Deck',
    async () => {
      if (await heading.count()) return true;
      // The Deck loads again on a new session's events only: a terminal one has none.
      await page.reload();
      await page.getByTestId('deck-search').waitFor();
      await page.waitForTimeout(500);
      return false;
    },
    30_000,
    500,
  );
  await page.evaluate(() => (window.__sameLoad = true));
  assert.equal(await heading.textContent(), 'news');
  assert.equal(await heading.getAttribute('href'), '/app/p/news');
  await keep('project-deck');
  await heading.click();
  await page.waitForURL((u) => u.pathname === '/app/p/news');
  assert.equal(await page.evaluate(() => window.__sameLoad), true, 'opened in place, with no reload');
  assert.equal(await page.getByTestId('project-name').innerText(), 'news');
  assert.equal(await page.locator('[data-nav=deck]').getAttribute('aria-current'), 'page', 'the Deck is where it is');
  // Its folder (outside the sessions' HOME here: said whole).
  assert.equal(await page.getByTestId('project-folders').innerText(), rig.work);

  // Its session: the Deck's row.
  const session = part('sessions').getByTestId('deck-entry');
  await session.first().waitFor();
  assert.equal(await session.count(), 1);
  assert.equal(await session.getAttribute('data-thread'), SESSION);
  assert.equal(await session.getByTestId('deck-title').innerText(), 'Reading the morning news');
  assert.match(await session.innerText(), /terminal/);

  // Its watcher, where it stands; its project is the page's, not said again.
  const row = watcherRow('hello-news');
  await row.waitFor();
  assert.equal(await row.getAttribute('data-state'), 'waiting');
  assert.equal(await row.getByTestId('watcher-status').innerText(), 'Waiting for you to turn it on');
  assert.equal(await row.getByTestId('watcher-last').innerText(), 'Not run yet');
  assert.equal(await row.getByTestId('project-link').count(), 0);
  assert.equal(await part('found').count(), 0, 'nothing filed yet');

  // Its open planner items, the one with a time first; not another project's.
  await planRow('Renew the feed key').waitFor();
  assert.deepEqual(await part('plans').getByTestId('plan-text-shown').allInnerTexts(), ['Read the morning digest', 'Renew the feed key']);
  assert.equal(await planRow('Read the morning digest').getByTestId('plan-when-shown').innerText(), 'tomorrow 09:00');

  // Added elsewhere (a session, the CLI): it comes from the stream; another project's does not.
  await rig.sock('planner.add', { text: 'Check the feed by hand', kind: 'todo', project: 'news' });
  await rig.sock('planner.add', { text: 'Water the beds', kind: 'todo', project: 'garden' });
  await planRow('Check the feed by hand').waitFor();
  assert.equal(await part('plans').getByText('Water the beds').count(), 0);
  // Ticked off here, it leaves the list (a click: check() would look for the tick on a row
  // that may be gone already).
  await planRow('Check the feed by hand').getByTestId('plan-check').click();
  await planRow('Check the feed by hand').waitFor({ state: 'detached' });

  // Turn on, as on the Watchers screen: asked first, then it runs on its schedule.
  await row.getByTestId('watcher-on').click();
  await page.getByTestId('confirm').getByText('Turn on “hello-news”?').waitFor();
  await page.getByTestId('confirm-ok').click();
  await waitFor('it to run', async () => (await row.getByTestId('watcher-status').innerText()) === 'Runs every 15 minutes');
  assert.match(await row.getByTestId('watcher-next').innerText(), /^Next: (today|tomorrow) \d\d:\d\d, in \d+ min$/);

  // Run now: the item it files shows, a link in a new tab; its run is the row's last.
  await row.getByTestId('watcher-run').click();
  const item = part('found').getByTestId('watch-item').filter({ hasText: 'hello' }).first();
  await item.waitFor();
  const link = item.getByTestId('watch-item-title');
  assert.equal(await link.getAttribute('href'), 'https://example.com/x');
  assert.equal(await link.getAttribute('target'), '_blank');
  assert.equal(await item.getByTestId('project-link').count(), 0, 'its project is the page\'s');
  await waitFor('the row to count it', async () => /Filed 1 item/.test(await row.innerText()));
  assert.match(await row.getByTestId('watcher-last').innerText(), /^Last ran today \d\d:\d\d$/);
  assert.equal(await page.evaluate(() => window.__sameLoad), true, 'all of it live, with no reload');
  await keep('project-page');
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('the Watchers screen\'s project names open the project', T, async () => {
  await page.click('[data-nav=watchers]');
  await page.waitForURL((u) => u.pathname === '/app/watchers');
  const badge = page.locator('[data-testid=watcher][data-name="hello-news"]').getByTestId('project-link');
  await badge.waitFor();
  assert.equal(await badge.innerText(), 'news');
  // What it filed names the project too.
  assert.equal(await page.getByTestId('watch-item').first().getByTestId('project-link').getAttribute('href'), '/app/p/news');
  await badge.click();
  await page.waitForURL((u) => u.pathname === '/app/p/news');
  await watcherRow('hello-news').waitFor();
  // Back to the Deck from the page.
  await page.getByTestId('project-back').click();
  await page.waitForURL((u) => u.pathname === '/app/deck');
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('what the watchers filed is found from the Deck\'s search, under its own heading; a word none holds shows no such part', T, async () => {
  await page.click('[data-nav=deck]');
  await page.waitForURL((u) => u.pathname === '/app/deck');
  const search = page.getByTestId('deck-search');
  const filed = page.getByTestId('filed-found');
  await search.fill('hello');
  await filed.waitFor();
  assert.match(await filed.locator('h2').innerText(), /^Filed by watchers\s+1$/i);
  const hit = filed.getByTestId('filed-hit');
  assert.equal(await hit.count(), 1);
  assert.equal(await hit.getAttribute('data-watcher'), 'hello-news');
  // Its title: a link in a new tab, the matched word marked (the title matched: said once).
  const title = hit.getByTestId('filed-hit-title');
  assert.equal(await title.innerText(), 'hello');
  assert.equal(await title.getAttribute('href'), 'https://example.com/x');
  assert.equal(await title.getAttribute('target'), '_blank');
  assert.equal(await title.getAttribute('rel'), 'noopener noreferrer');
  assert.deepEqual(await title.locator('mark').allInnerTexts(), ['hello']);
  assert.equal(await hit.getByTestId('filed-hit-watcher').innerText(), 'hello-news');
  const badge = hit.getByTestId('project-link');
  assert.equal(await badge.innerText(), 'news');
  assert.equal(await badge.getAttribute('href'), '/app/p/news');
  // The sessions' search is there as it was, beside it.
  await page.locator('[data-testid=recall-hits][data-for="hello"]').waitFor();

  // A word of its text: the words around it, the word marked.
  await search.fill('first');
  const snippet = filed.getByTestId('filed-hit-snippet');
  await snippet.waitFor();
  assert.equal(await snippet.innerText(), 'first line');
  assert.deepEqual(await snippet.locator('mark').allInnerTexts(), ['first']);
  assert.equal(await filed.getByTestId('filed-hit-title').innerText(), 'hello');
  await keep('project-deck-filed');

  // A word no item holds: the part goes (the sessions' search still answers).
  await search.fill('xylophone');
  await filed.waitFor({ state: 'detached' });
  await page.locator('[data-testid=recall-hits][data-for="xylophone"]').waitFor();
  // Typed afresh, it never shows.
  await search.fill('');
  await search.fill('xylophone');
  await page.locator('[data-testid=recall-hits][data-for="xylophone"]').waitFor();
  await page.waitForTimeout(700);
  assert.equal(await filed.count(), 0, 'no "Filed by watchers" when nothing matches');

  // Its project badge opens the project in place.
  await search.fill('hello');
  await filed.getByTestId('project-link').click();
  await page.waitForURL((u) => u.pathname === '/app/p/news');
  assert.equal(await page.getByTestId('project-name').innerText(), 'news');
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('the project page searches what its watchers filed; a word none holds says nothing matched', T, async () => {
  if (new URL(page.url()).pathname !== '/app/p/news') await page.goto(`${rig.base}/app/p/news`);
  const found = part('found');
  await found.getByTestId('watch-item').first().waitFor();
  const search = found.getByTestId('project-found-search');
  await search.fill('hello');
  const hit = found.getByTestId('filed-hit');
  await hit.first().waitFor();
  // The matches in place of the newest.
  assert.equal(await found.getByTestId('watch-item').count(), 0);
  assert.equal(await hit.count(), 1);
  const title = hit.getByTestId('filed-hit-title');
  assert.equal(await title.innerText(), 'hello');
  assert.equal(await title.getAttribute('href'), 'https://example.com/x');
  assert.equal(await title.getAttribute('target'), '_blank');
  assert.equal(await hit.getByTestId('project-link').count(), 0, 'its project is the page\'s');
  assert.equal(await found.getByTestId('project-found-count').textContent(), '1 matching');
  await keep('project-search');

  await search.fill('xylophone');
  const none = found.getByTestId('project-found-none');
  await none.waitFor();
  assert.equal(await none.innerText(), 'Nothing its watchers filed matches “xylophone”.');
  assert.equal(await hit.count(), 0);
  await keep('project-search-none');

  // Cleared: the newest again.
  await search.fill('');
  await found.getByTestId('watch-item').first().waitFor();
  assert.equal(await none.count(), 0);
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('a title a watcher filed with markup in it is shown as text, on the Deck and on the project page', T, async () => {
  const dialogs = [];
  const onDialog = (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  };
  page.on('dialog', onDialog);
  try {
    await rig.sock('watchers.create', { name: 'odd-news', project: 'news', schedule: '@daily', script: MARKUP });
    await rig.sock('watchers.resume', { name: 'odd-news' });
    const ran = await rig.sock('watchers.run', { name: 'odd-news' });
    assert.equal(ran.filed, 1, JSON.stringify(ran));
    const TITLE = '<img src=x onerror=alert(1)> quokka';

    await page.click('[data-nav=deck]');
    await page.waitForURL((u) => u.pathname === '/app/deck');
    await page.getByTestId('deck-search').fill('quokka');
    const filed = page.getByTestId('filed-found');
    const hit = filed.getByTestId('filed-hit');
    await hit.first().waitFor();
    assert.equal(await hit.count(), 1);
    assert.equal(await hit.getByTestId('filed-hit-title').innerText(), TITLE);
    assert.equal(await filed.locator('img, script, b').count(), 0, 'no element from the script');
    await keep('project-markup');

    await filed.getByTestId('project-link').click();
    await page.waitForURL((u) => u.pathname === '/app/p/news');
    const found = part('found');
    // The newest list shows it as text too.
    await found.getByTestId('watch-item').filter({ hasText: 'quokka' }).first().waitFor();
    await found.getByTestId('project-found-search').fill('quokka');
    const there = found.getByTestId('filed-hit');
    await there.first().waitFor();
    assert.equal(await there.count(), 1);
    assert.equal(await there.getByTestId('filed-hit-title').innerText(), TITLE);
    assert.equal(await found.locator('img, script, b').count(), 0, 'no element from the script');
    assert.equal(await page.locator('main img[src=x]').count(), 0);
    assert.equal(await page.evaluate(() => window.__pwned), undefined, 'no script of its ran');
    assert.deepEqual(dialogs, [], 'no alert');
    assert.deepEqual(browser.errors, [], 'no script errors on the page');
  } finally {
    page.off('dialog', onDialog);
  }
});

it('a vyred that cannot search what was filed (an older one) leaves the search out, and the sessions\' hits are as they were', T, async () => {
  const filedCalls = [];
  const handler = (route) => {
    filedCalls.push(route.request().postData());
    return route.fulfill({ status: 404, json: { error: { code: 'unknown_tool', message: 'there is no tool named "recall.filed"' } } });
  };
  await page.route('**/v1/tools/recall.filed', handler);
  try {
    await page.click('[data-nav=deck]');
    await page.waitForURL((u) => u.pathname === '/app/deck');
    const search = page.getByTestId('deck-search');
    await search.fill('walrus');
    // The sessions' search finds the terminal session's words as before.
    await page.locator('[data-testid=recall-hits][data-for="walrus"]').waitFor();
    const said = page.locator(`[data-testid=recall-hit][data-thread="${SESSION}"]`).first();
    await said.waitFor();
    assert.deepEqual(await said.getByTestId('recall-hit-snippet').locator('mark').allInnerTexts(), ['walrus'], 'its matched word marked');
    await waitFor('recall.filed to be asked', () => filedCalls.length > 0);
    await page.waitForTimeout(500);
    assert.equal(await page.getByTestId('filed-found').count(), 0, 'no "Filed by watchers"');
    assert.equal(await page.getByTestId('toast').count(), 0, 'nothing to tell the person');
    // Asked no more once vyred said it has no such tool.
    const asked = filedCalls.length;
    await search.fill('hello');
    await page.locator('[data-testid=recall-hits][data-for="hello"]').waitFor();
    await page.waitForTimeout(500);
    assert.equal(filedCalls.length, asked);
    assert.equal(await page.getByTestId('filed-found').count(), 0);

    // The project page: its newest, with no search box once vyred said so.
    await page.goto(`${rig.base}/app/p/news`);
    const found = part('found');
    await found.getByTestId('watch-item').first().waitFor();
    const box = found.getByTestId('project-found-search');
    await box.fill('hello');
    await box.waitFor({ state: 'detached' });
    assert.ok((await found.getByTestId('watch-item').count()) >= 2, 'the newest stay');
    assert.equal(await page.getByTestId('toast').count(), 0);
    assert.deepEqual(browser.errors, [], 'no script errors on the page');
  } finally {
    await page.unroute('**/v1/tools/recall.filed', handler);
  }
});

it('a name no project has says so, not a blank page', T, async () => {
  await page.goto(`${rig.base}/app/p/${encodeURIComponent('no such thing')}`);
  const missing = page.getByTestId('project-unknown');
  await missing.waitFor();
  assert.match(await missing.innerText(), /^There is no project named “no such thing”\. The Deck shows the projects there are\.$/);
  assert.equal(await page.getByTestId('project-name').innerText(), 'no such thing');
  for (const p of ['sessions', 'watchers', 'plans']) assert.equal(await part(p).count(), 0, `no ${p} part`);
  await keep('project-unknown');
  // Made meanwhile (here, through the socket), the page shows it.
  mkdirSync(join(rig.dir, 'thing'), { recursive: true });
  await rig.sock('projects.create', { name: 'no such thing', home: join(rig.dir, 'thing') });
  await part('sessions-empty').waitFor({ timeout: 15_000 });
  assert.equal(await missing.count(), 0);
  assert.equal(await part('watchers-empty').count(), 1);
  assert.equal(await part('plans-empty').count(), 1);
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});
