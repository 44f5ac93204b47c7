// A session on Codex in the app (issue 28, ADR 0038), in a real browser against a real vyred
// and the real pinned Codex CLI on the fake Responses API: New session offers "Runs on" Codex;
// a session on it answers in the chat; its header's chip names Codex, and its model menu offers
// no Claude model but Codex's efforts, one of which the chip then says; the deck marks the
// session as Codex's; the usage popover says its turns have no price (none is set); Settings
// lets Lumen's sessions run on Codex, and Lumen itself starts its next conversation on Codex
// when the person picks it there. Screenshots:
// screenshots/codex-<name>-{desktop,phone}.png.

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { API_KEY, Rig, claudeMissing } from './lib/rig.mjs';
import { openBrowser, shootingTest, shot } from './lib/browser.mjs';
import { onboardToChat } from './lib/onboard.mjs';

const CODEX = process.env.VYRE_TEST_CODEX;
function codexMissing() {
  if (CODEX && existsSync(CODEX)) return false;
  const why = CODEX ? `VYRE_TEST_CODEX=${CODEX} does not exist` : 'VYRE_TEST_CODEX is not set';
  console.error(`\n*** SKIPPED: needs the pinned Codex CLI (${why}); tests/run installs it ***\n`);
  return `needs the Codex CLI: ${why}`;
}

const missing = claudeMissing() || codexMissing();
let rig;
let browser;
let page;

before(async () => {
  if (missing) return;
  rig = await Rig.start('codex', { claude: true, sessions: (r) => ({ codex: CODEX, codex_base_url: `${r.api.url}/v1` }) });
  browser = await openBrowser();
  page = browser.page;
  await onboardToChat(rig, page, API_KEY);
  // Codex's own key, as a person puts it in the vault and gives it to sessions.
  await rig.sock('vault.put', { name: 'openai-api-key', value: 'sk-proj-fake-browser-00000000' });
  await rig.sock('vault.grant', { item: 'openai-api-key', to: 'sessions' });
});

after(async () => {
  await browser?.close();
  await rig?.stop();
});

const T = { timeout: 120_000, skip: missing };
const it = shootingTest('codex-', () => page);

it('New session offers Codex, and a session on it answers in the chat', T, async () => {
  await page.click('[data-nav=deck]');
  await page.getByTestId('new-session').click();
  await page.getByTestId('new-session-form').waitFor();
  const runsOn = page.getByTestId('new-session-provider');
  await runsOn.waitFor();
  assert.deepEqual(await runsOn.locator('option').allInnerTexts(), ['Claude Code', 'Codex']);
  await runsOn.selectOption('codex');
  await page.getByTestId('new-cwd').fill(rig.work);
  await page.getByTestId('new-text').fill('hello codex');
  await shot(page, 'codex-new-session');
  await page.getByTestId('new-start').click();
  await page.waitForURL(/\/app\/t\//);
  const thread = decodeURIComponent(new URL(page.url()).pathname.split('/').pop());
  await page.getByTestId('assistant-text').filter({ hasText: 'reply to [hello codex]' }).waitFor({ timeout: 60_000 });
  const started = await rig.sock('threads.get', { thread });
  assert.equal(started.provider, 'codex', JSON.stringify(started));
  assert.equal(started.model, null, 'no Claude default model is passed to Codex');
  // Codex cannot go back to a message: its messages offer a fork from them, not a rewind.
  await page.getByTestId('user-text').filter({ hasText: 'hello codex' }).getByText('Fork').waitFor({ state: 'attached' });
  assert.equal(await page.getByTestId('rewind').count(), 0);
  assert.equal(await page.getByTestId('model-chip').first().innerText(), 'Codex · default model · api-key');
  // Its model menu names no Claude model (the default, or a model id to type), and offers
  // Codex's reasoning efforts.
  await page.getByTestId('model-chip').first().click();
  const menu = page.getByTestId('model-menu');
  await menu.waitFor();
  const efforts = ['low', 'medium', 'high', 'xhigh', 'max', 'ultra'];
  assert.deepEqual(await menu.getByRole('menuitem').allInnerTexts(), ['Default model', 'Default', ...efforts]);
  await shot(page, 'codex-chat');
  await page.getByTestId('effort-menu').getByRole('menuitem', { name: 'high', exact: true }).click();
  await page.getByTestId('model-chip').first().filter({ hasText: 'Codex · default model · high effort · api-key' }).waitFor();
  assert.equal((await rig.sock('threads.get', { thread })).effort, 'high');
  // The deck says which sessions run on Codex.
  await page.click('[data-nav=deck]');
  await page.getByTestId('deck-provider').filter({ hasText: 'Codex' }).first().waitFor();
  await shot(page, 'codex-deck');
});

it("a Codex turn with no price set is said to have none in the usage popover, not to have cost $0", T, async () => {
  // The rig sets no `sessions.prices`: the session above's turn is unpriced.
  const { total } = await rig.sock('usage.summary', { by: 'thread' });
  assert.ok(total.unpriced_turns >= 1, JSON.stringify(total));
  await page.getByTestId('usage-meter').click();
  const pop = page.getByTestId('usage-popover');
  await pop.waitFor();
  const unpriced = pop.getByTestId('usage-unpriced');
  await unpriced.waitFor();
  assert.match(await unpriced.innerText(), /^and \d+ turns? with no price \(a model with no price set\)$/);
  await shot(page, 'codex-unpriced');
  await page.keyboard.press('Escape');
  await pop.waitFor({ state: 'detached' });
});

it('Settings lets Lumen run on Codex, and a session started for it then does', T, async () => {
  await page.click('[data-nav=settings]');
  const row = page.locator('[data-testid=purpose-row][data-purpose=capsule]');
  await row.waitFor();
  assert.equal(await row.getByTestId('purpose-provider').inputValue(), 'claude');
  await row.getByTestId('purpose-provider').selectOption('codex');
  await row.getByTestId('purpose-save').click();
  await row.getByTestId('purpose-reset').waitFor();
  const models = await rig.sock('sessions.models.get', {});
  assert.deepEqual(models.capsule, { model: null, provider: 'codex', source: 'set' });
  await row.scrollIntoViewIfNeeded();
  await shot(page, 'codex-settings');
  // Lumen starts its thread with purpose `capsule` and no provider: it runs on Codex now.
  const { thread } = await rig.sock('threads.start', { cwd: rig.work, purpose: 'capsule', text: 'from lumen' });
  assert.equal((await rig.sock('threads.get', { thread })).provider, 'codex');
  // Reset, it is Claude Code's again.
  await row.getByTestId('purpose-reset').click();
  await row.getByTestId('purpose-save').or(row.getByTestId('purpose-reset')).waitFor({ state: 'detached' });
  assert.equal((await rig.sock('sessions.models.get', {})).capsule.provider, 'claude');
});

it('Lumen starts its next conversation on the provider picked in it, and Default is Settings\' choice', T, async () => {
  await page.goto(`${rig.base}/app/lumen`);
  await page.locator('[data-testid="lumen-input"][placeholder="Ask Juno"]').waitFor();
  const runsOn = page.getByTestId('lumen-provider');
  await runsOn.waitFor();
  assert.deepEqual(await runsOn.locator('option').allInnerTexts(), ['Default', 'Claude Code', 'Codex']);
  assert.equal(await runsOn.inputValue(), '', 'nothing picked yet: as Settings say');
  await runsOn.selectOption('codex');
  const box = page.getByTestId('lumen-input');
  await box.fill('hello from lumen on codex');
  await box.press('Enter');
  await page.getByTestId('lumen-text').filter({ hasText: 'reply to [hello from lumen on codex]' }).waitFor({ timeout: 60_000 });
  const thread = await page.getByTestId('lumen-reply').getAttribute('data-thread');
  const info = await rig.sock('threads.get', { thread });
  assert.equal(info.provider, 'codex', JSON.stringify(info));
  assert.equal(info.purpose, 'capsule');
  await shot(page, 'codex-lumen');
  // Remembered across openings; Default again, the next conversation is Claude Code's (Settings
  // give Lumen no provider of its own now).
  await page.reload();
  await runsOn.waitFor();
  assert.equal(await runsOn.inputValue(), 'codex');
  await runsOn.selectOption('');
  await page.getByTestId('lumen-new').click();
  await box.fill('hello from lumen again');
  await box.press('Enter');
  await page.getByTestId('lumen-text').filter({ hasText: 'reply to [hello from lumen again]' }).waitFor({ timeout: 60_000 });
  const again = await page.getByTestId('lumen-reply').getAttribute('data-thread');
  assert.notEqual(again, thread);
  assert.equal((await rig.sock('threads.get', { thread: again })).provider, 'claude');
  await page.goto(`${rig.base}/app/`);
});
