// A session on an ACP agent in the app (issue 28, ADR 0037), in a real browser against a real
// vyred: with an agent in `sessions.acp`, New session offers "Runs on" (Claude Code first, the
// agent as "fake (ACP)"); a session started on the agent answers in the chat, and its header's
// chip names the agent. The agent is the fake one in tests/fixtures/acp (the real agent's tests
// are in tests/it/acp.rs). Screenshots: screenshots/acp-<name>-{desktop,phone}.png.

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { API_KEY, Rig, claudeMissing } from './lib/rig.mjs';
import { openBrowser, shootingTest, shot } from './lib/browser.mjs';
import { onboardToChat } from './lib/onboard.mjs';

const noClaude = claudeMissing();
const FAKE_AGENT = join(fileURLToPath(new URL('.', import.meta.url)), '../fixtures/acp/fake_agent.py');
let rig;
let browser;
let page;

before(async () => {
  if (noClaude) return;
  rig = await Rig.start('acp', { claude: true, sessions: { acp: { fake: { command: FAKE_AGENT } } } });
  browser = await openBrowser();
  page = browser.page;
  await onboardToChat(rig, page, API_KEY);
});

after(async () => {
  await browser?.close();
  await rig?.stop();
});

const T = { timeout: 120_000, skip: noClaude };
const it = shootingTest('acp-', () => page);

it('New session offers the ACP agent, and a session on it answers in the chat', T, async () => {
  await page.click('[data-nav=deck]');
  await page.getByTestId('new-session').click();
  await page.getByTestId('new-session-form').waitFor();
  const runsOn = page.getByTestId('new-session-provider');
  await runsOn.waitFor();
  const options = await runsOn.locator('option').allInnerTexts();
  assert.deepEqual(options, ['Claude Code', 'fake (ACP)']);
  assert.equal(await runsOn.inputValue(), 'claude', 'Claude Code is the default');
  await runsOn.selectOption('acp-fake');
  await page.getByTestId('new-cwd').fill(rig.work);
  await page.getByTestId('new-text').fill('hello agent');
  await shot(page, 'acp-new-session');
  await page.getByTestId('new-start').click();
  await page.waitForURL(/\/app\/t\//);
  const thread = decodeURIComponent(new URL(page.url()).pathname.split('/').pop());
  await page.getByTestId('assistant-text').filter({ hasText: 'fake reply' }).waitFor({ timeout: 60_000 });
  const started = await rig.sock('threads.get', { thread });
  assert.equal(started.provider, 'acp-fake', JSON.stringify(started));
  // The agent names its own model (no Claude default is passed to it) and signs in its own way.
  assert.equal(started.model, null, JSON.stringify(started));
  assert.equal(await page.getByTestId('model-chip').first().innerText(), 'fake (ACP) · default model');
  await shot(page, 'acp-chat');
});
