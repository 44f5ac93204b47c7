// The Vault's cards and env sets, its grants and its live list, in Chromium against a real
// vyred. A card is added through the form (its number and code in password fields): a bad
// expiry is refused in words before anything is sent (vyred refuses it too, in its words), then
// it is listed as "•••• 1234 · expires 08/29". An env set is added from rows and a pasted .env
// file (export, quotes, a comment), a bad name said under its row, and listed with its
// variables' names; the search finds both by those facts. With the vault passphrase (set through
// the API) the card's number and the env set's NAME=value lines are shown, and gone once
// hidden. An item is granted to sessions, asked first in words ("use it without seeing it"), and
// revoked. An item put, granted and deleted through the API (the terminal's way) shows in the
// open list without a reload. No value is left on the page once hidden; no script error.
// No Claude Code needed.
// Screenshots: screenshots/vault-kinds-{card,env,list,shown,grant,grants}-{desktop,phone}.png.

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { Rig, waitFor } from './lib/rig.mjs';
import { onboardByScreens } from './lib/onboard.mjs';
import { openBrowser, shootingTest, shot } from './lib/browser.mjs';

const NUMBER = '4111 1111 1111 1234';
const DIGITS = '4111111111111234';
const HOLDER = 'Ada Card-Holder';
const CODE = '9371';
const CARD_NOTES = 'card-notes-3Lq9';
const API_KEY = 'sk-env-VALUE-51f0';
const NEWS_URL = 'https://news.example.com/api?key=a b';
const TOKEN = "tok-'quoted'-8Zr";
const PASSPHRASE = 'kinds passphrase staple 77';
const ENV_FILE = ['# the news watcher', `export NEWS_URL="${NEWS_URL}"`, '', `TOKEN="${TOKEN}"`, 'not a line'].join('\n');
/** What the person typed as a value: none may stay on the page. */
const VALUES = [NUMBER, DIGITS, CODE, CARD_NOTES, API_KEY, 'news.example.com/api', TOKEN, PASSPHRASE];

let rig;
let browser;
let page;

before(async () => {
  rig = await Rig.start('vault-kinds');
  browser = await openBrowser();
  page = browser.page;
  await onboardByScreens(rig, page);
  await page.waitForURL((u) => u.pathname.startsWith('/app'));
});

after(async () => {
  await browser?.close();
  await rig?.stop();
});

const T = { timeout: 120_000 };
const it = shootingTest('vault-kinds-', () => page);
const row = (name) => page.locator(`[data-testid=vault-item][data-name="${name}"]`);
const fieldOf = (name, field) => row(name).locator(`[data-testid=vault-field][data-field="${field}"]`);
const names = () => page.getByTestId('vault-item').evaluateAll((all) => all.map((r) => r.dataset.name));

/** None of `values` is on the page: in its text or left in a field. */
async function noValues(where, values = VALUES) {
  const text = await page.evaluate(() => document.body.innerText);
  const fields = await page.evaluate(() => [...document.querySelectorAll('input, textarea')].map((e) => e.value).join('\n'));
  for (const v of values) {
    assert.ok(!text.includes(v), `${where}: the page shows ${v}`);
    assert.ok(!fields.includes(v), `${where}: a field still holds ${v}`);
  }
}

async function openItem(name) {
  const detail = row(name).getByTestId('vault-detail');
  if (!(await detail.isVisible())) await row(name).getByTestId('vault-item-open').click();
  await detail.waitFor();
  return detail;
}

async function closeItem(name) {
  if (await row(name).getByTestId('vault-detail').isVisible()) await row(name).getByTestId('vault-item-open').click();
  await row(name).getByTestId('vault-detail').waitFor({ state: 'detached' });
}

it('a card is added through the form: a bad expiry is refused in words, then it is listed with its last digits and expiry', T, async () => {
  await page.locator('[data-nav="vault"]').click();
  await page.waitForURL((u) => u.pathname === '/app/vault');
  await page.getByTestId('vault-empty').waitFor();
  await page.getByTestId('toast').waitFor({ state: 'detached', timeout: 15_000 }).catch(() => {});
  await page.getByTestId('vault-open-add').click();
  const form = page.getByTestId('vault-add');
  await form.getByTestId('vault-add-kind-card').check();
  const number = form.getByTestId('vault-add-card-number');
  assert.equal(await number.getAttribute('type'), 'password');
  assert.equal(await form.getByTestId('vault-add-card-code').getAttribute('type'), 'password');
  await form.getByTestId('vault-add-name').fill('work-visa');
  await number.fill(NUMBER);
  // Show lets the person check what they typed; Hide (and storing it) hides it again.
  await form.getByTestId('vault-add-card-show').click();
  assert.equal(await number.getAttribute('type'), 'text');
  await form.getByTestId('vault-add-card-show').click();
  assert.equal(await number.getAttribute('type'), 'password');
  await form.getByTestId('vault-add-card-holder').fill(HOLDER);
  await form.getByTestId('vault-add-card-expiry').fill('13/29');
  await form.getByTestId('vault-add-card-code').fill(CODE);
  await form.getByTestId('vault-add-card-notes').fill(CARD_NOTES);
  await form.getByTestId('vault-add-save').click();
  const error = form.getByTestId('vault-add-error');
  await error.waitFor();
  assert.equal(await error.innerText(), 'Expiry: must be the month and year as MM/YY or MM/YYYY, like 08/29.');
  assert.deepEqual(await rig.sock('vault.list'), [], 'nothing was sent');
  assert.equal(await number.inputValue(), NUMBER, 'what was typed stays');
  // vyred's own rule is the same, said in its words, never with the value.
  await assert.rejects(rig.sock('vault.put', { name: 'x', kind: 'card', number: DIGITS, expiry: '13/29' }), (e) => /expiry: must be the expiry as MM\/YY or MM\/YYYY/.test(e.message) && !e.message.includes(DIGITS));

  await form.getByTestId('vault-add-card-expiry').fill('8/29');
  await shot(page, 'vault-kinds-card', form);
  await form.getByTestId('vault-add-save').click();
  await form.getByTestId('vault-add-done').filter({ hasText: 'Added “work-visa”.' }).waitFor();
  await row('work-visa').waitFor();
  for (const f of ['vault-add-name', 'vault-add-card-number', 'vault-add-card-holder', 'vault-add-card-expiry', 'vault-add-card-code', 'vault-add-card-notes']) {
    assert.equal(await form.getByTestId(f).inputValue(), '', `${f} is emptied`);
  }
  const [kept] = await rig.sock('vault.list');
  assert.equal(kept.kind, 'card');
  assert.equal(kept.last4, '1234');
  assert.equal(kept.expiry, '08/29', 'sent as MM/YY');
  assert.equal(await row('work-visa').getByTestId('vault-item-kind').innerText(), 'Card');
  assert.equal(await row('work-visa').getByTestId('vault-item-card').innerText(), '•••• 1234 · expires 08/29');
  await noValues('the card added', VALUES.filter((v) => v !== PASSPHRASE));
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('an env set is added from rows and a pasted .env file; a bad name is said under its row and nothing is sent', T, async () => {
  const form = page.getByTestId('vault-add');
  await form.getByTestId('vault-add-kind-env').check();
  await form.getByTestId('vault-add-name').fill('news-env');
  const rows = form.getByTestId('vault-env-row');
  assert.equal(await rows.count(), 1);
  await rows.nth(0).getByTestId('vault-env-name').fill('API_KEY');
  await rows.nth(0).getByTestId('vault-env-value').fill(API_KEY);
  assert.equal(await rows.nth(0).getByTestId('vault-env-value').getAttribute('type'), 'password');
  await form.getByTestId('vault-env-add').click();
  await rows.nth(1).getByTestId('vault-env-name').fill('1BAD');
  await rows.nth(1).getByTestId('vault-env-value').fill('x');
  const problem = rows.nth(1).getByTestId('vault-env-problem');
  await problem.waitFor();
  assert.equal(await problem.innerText(), '“1BAD” is not a variable’s name: letters, digits and _, not starting with a digit.');
  await form.getByTestId('vault-add-save').click();
  await form.getByTestId('vault-add-error').filter({ hasText: 'is not a variable’s name' }).waitFor();
  assert.equal((await rig.sock('vault.list')).length, 1, 'nothing was sent');
  await rows.nth(1).getByTestId('vault-env-remove').click();
  await waitFor('one row', async () => (await rows.count()) === 1);

  // A .env file pasted: its lines fill rows; the comment, the blank line and a line that is not
  // NAME=value are left out, said by line number only; the text is emptied.
  await form.getByTestId('vault-env-paste').click();
  await form.getByTestId('vault-env-paste-text').fill(ENV_FILE);
  await form.getByTestId('vault-env-paste-go').click();
  await form.getByTestId('vault-env-pasted').filter({ hasText: 'Filled in 2 variables; left out line 5 (not NAME=value).' }).waitFor();
  assert.equal(await form.getByTestId('vault-env-paste-text').count(), 0, 'the paste box closes');
  assert.deepEqual(await rows.getByTestId('vault-env-name').evaluateAll((is) => is.map((i) => i.value)), ['API_KEY', 'NEWS_URL', 'TOKEN']);
  assert.deepEqual(await rows.getByTestId('vault-env-value').evaluateAll((is) => is.map((i) => i.value)), [API_KEY, NEWS_URL, TOKEN], 'quotes taken off');
  await shot(page, 'vault-kinds-env', form);
  await form.getByTestId('vault-add-save').click();
  await form.getByTestId('vault-add-done').filter({ hasText: 'Added “news-env”.' }).waitFor();
  await row('news-env').waitFor();
  assert.deepEqual(await rows.getByTestId('vault-env-name').evaluateAll((is) => is.map((i) => i.value)), [''], 'the rows are emptied');
  const kept = (await rig.sock('vault.list')).find((i) => i.name === 'news-env');
  assert.deepEqual(kept.vars, ['API_KEY', 'NEWS_URL', 'TOKEN']);
  await page.getByTestId('vault-add-close').click();

  assert.equal(await row('news-env').getByTestId('vault-item-kind').innerText(), 'Env set');
  assert.equal(await row('news-env').getByTestId('vault-item-vars').innerText(), 'API_KEY, NEWS_URL, TOKEN');
  await shot(page, 'vault-kinds-list');
  // The search finds them by those facts.
  const search = page.getByTestId('vault-search');
  await search.fill('1234');
  await waitFor('the card', async () => (await names()).join() === 'work-visa');
  await search.fill('news_url');
  await waitFor('the env set', async () => (await names()).join() === 'news-env');
  await search.fill('env set');
  await waitFor('the env set by its kind', async () => (await names()).join() === 'news-env');
  await search.fill('');
  await waitFor('both', async () => (await names()).length === 2);
  await noValues('the env set added', VALUES.filter((v) => v !== PASSPHRASE));
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('with the vault passphrase the card\'s number and the env set\'s NAME=value lines are shown, and gone once hidden', T, async () => {
  await rig.sock('vault.passphrase', { passphrase: PASSPHRASE });
  const detail = await openItem('work-visa');
  assert.equal(await detail.getByTestId('vault-detail-card').innerText(), '•••• 1234 · expires 08/29');
  assert.deepEqual(await detail.getByTestId('vault-field').evaluateAll((fs) => fs.map((f) => f.dataset.field)), ['number', 'holder', 'expiry', 'code', 'notes']);
  assert.deepEqual(await detail.locator('[data-testid=vault-field] .label').allInnerTexts(), ['Number', 'Name on card', 'Expiry', 'Security code', 'Notes']);
  const number = fieldOf('work-visa', 'number');
  await number.getByTestId('vault-show').click();
  await number.getByTestId('vault-passphrase').fill(PASSPHRASE);
  await number.getByTestId('vault-passphrase-go').click();
  await waitFor('the number', async () => (await number.getByTestId('vault-value').innerText()) === DIGITS);
  await number.getByTestId('vault-hide').click();
  await number.getByTestId('vault-value').waitFor({ state: 'detached' });
  await closeItem('work-visa');

  const env = await openItem('news-env');
  assert.equal(await env.getByTestId('vault-detail-vars').innerText(), 'API_KEY, NEWS_URL, TOKEN');
  const vars = fieldOf('news-env', 'value');
  assert.equal(await vars.locator('.label').innerText(), 'Variables');
  await vars.getByTestId('vault-show').click();
  await vars.getByTestId('vault-passphrase').fill(PASSPHRASE);
  await vars.getByTestId('vault-passphrase-go').click();
  const value = vars.getByTestId('vault-value');
  await value.waitFor();
  const lines = (await value.evaluate((e) => e.textContent)).split('\n');
  assert.deepEqual(lines.slice(0, 3).map((l) => l.split('=')[0]), ['API_KEY', 'NEWS_URL', 'TOKEN'], 'one line a variable');
  assert.ok(lines[0] === `API_KEY=${API_KEY}`, lines[0]);
  assert.equal(lines.at(-1), '', 'ending in a newline');
  await shot(page, 'vault-kinds-shown', vars);
  await vars.getByTestId('vault-hide').click();
  await value.waitFor({ state: 'detached' });
  await noValues('hidden');
  await closeItem('news-env');
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('an item is granted to sessions, asked first in words, and revoked', T, async () => {
  const detail = await openItem('news-env');
  const grants = detail.getByTestId('vault-grants');
  await grants.getByTestId('vault-grants-none').waitFor();
  const select = grants.getByTestId('vault-grant-to');
  assert.equal(await select.inputValue(), 'sessions', 'sessions first');
  assert.ok((await select.locator('option').allInnerTexts()).includes('Sessions'));
  await grants.getByTestId('vault-grant-go').click();
  const dialog = page.getByTestId('confirm');
  await dialog.getByTestId('confirm-ok').waitFor();
  assert.match(await dialog.innerText(), /Grant “news-env” to sessions\?/);
  assert.match(await dialog.innerText(), /Claude Code sessions on this machine will be able to use it without seeing it/);
  await dialog.getByTestId('confirm-cancel').click();
  assert.deepEqual((await rig.sock('vault.list')).find((i) => i.name === 'news-env').grants, [], 'Cancel grants nothing');

  await grants.getByTestId('vault-grant-go').click();
  await dialog.getByTestId('confirm-ok').waitFor();
  await shot(page, 'vault-kinds-grant');
  await dialog.getByTestId('confirm-ok').click();
  const granted = grants.getByTestId('vault-grant');
  await granted.waitFor();
  assert.equal(await granted.getAttribute('data-to'), 'module:sessions');
  assert.match(await granted.innerText(), /Sessions\s*uses it without seeing it/);
  assert.equal(await detail.getByTestId('vault-detail-grants').innerText(), 'sessions');
  assert.equal(await row('news-env').getByTestId('vault-item-grants').innerText(), 'sessions');
  assert.deepEqual((await rig.sock('vault.list')).find((i) => i.name === 'news-env').grants, ['module:sessions']);
  assert.equal(await grants.getByTestId('vault-grant-to').locator('option[value=sessions]').count(), 0, 'not offered twice');
  await shot(page, 'vault-kinds-grants', grants);

  await granted.getByTestId('vault-revoke').click();
  await grants.getByTestId('vault-grants-none').waitFor();
  assert.deepEqual((await rig.sock('vault.list')).find((i) => i.name === 'news-env').grants, []);
  assert.equal(await detail.getByTestId('vault-detail-grants').innerText(), 'Not granted to anything');
  await closeItem('news-env');
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('an item put, granted and deleted through the API shows in the open list without a reload', T, async () => {
  await page.evaluate(() => (window.__sameVaultPage = true));
  await rig.sock('vault.put', { name: 'from-terminal', kind: 'env', vars: { TERM_KEY: 'terminal-value-2Kd' } });
  await row('from-terminal').waitFor({ timeout: 15_000 });
  assert.equal(await row('from-terminal').getByTestId('vault-item-vars').innerText(), 'TERM_KEY');
  await rig.sock('vault.grant', { item: 'from-terminal', to: 'sessions' });
  await waitFor('the grant in the list', async () => (await row('from-terminal').getByTestId('vault-item-grants').innerText()) === 'sessions', 15_000);
  await rig.sock('vault.delete', { name: 'from-terminal' });
  await row('from-terminal').waitFor({ state: 'detached', timeout: 15_000 });
  assert.equal(await page.evaluate(() => window.__sameVaultPage), true, 'no reload');
  await noValues('live', ['terminal-value-2Kd', ...VALUES]);
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});
