// Writing in a closed thread starts its session (issue 26): the greeting's session closes for
// idleness (`sessions.idle_minutes` of three seconds here); the person starts writing in the
// assistant's chat and, before they press Enter, its session is running again (the chat called
// `threads.warm`), so the message goes to a running session and its answer comes as usual.
// Lumen does the same for its conversation with the assistant.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { API_KEY, Rig, claudeMissing, waitFor } from './lib/rig.mjs';
import { fromPage, openBrowser } from './lib/browser.mjs';
import { onboardToChat } from './lib/onboard.mjs';

const noClaude = claudeMissing();
let rig;
let browser;
let page;

before(async () => {
  if (noClaude) return;
  rig = await Rig.start('warm', { claude: true, sessions: { idle_minutes: 0.05 } });
  browser = await openBrowser();
  page = browser.page;
  await onboardToChat(rig, page, API_KEY);
});

after(async () => {
  await browser?.close();
  await rig?.stop();
});

const T = { timeout: 180_000, skip: noClaude };

async function thread() {
  const agents = (await fromPage(page, 'agents.list')).data;
  return agents.find((a) => a.kind === 'assistant').thread;
}

async function info(t) {
  return (await fromPage(page, 'threads.get', { thread: t })).data;
}

test('writing in a closed thread starts its session before the message is sent', T, async () => {
  const t = await thread();
  await waitFor('the greeting session to close for idleness', async () => (await info(t)).state === 'stopped', 60_000);
  const composer = page.getByTestId('composer');
  await composer.click();
  await composer.pressSequentially('what was that again', { delay: 30 });
  await waitFor('the session to run again while the words are still being written', async () => (await info(t)).live === true, 20_000);
  assert.equal(await composer.inputValue(), 'what was that again', 'nothing was sent yet');
  const started = (await fromPage(page, 'system.events', { types: ['thread.started'], thread: t })).data;
  assert.equal(started.at(-1).payload.resumed, true, 'it resumed its transcript');
  const before = started.length;

  await composer.press('Enter');
  await page.getByText('reply to [what was that again]').waitFor({ timeout: 60_000 });
  const after = (await fromPage(page, 'system.events', { types: ['thread.started'], thread: t })).data;
  assert.equal(after.length, before, 'the send found it running: no second start');
});

test('Lumen starts its closed conversation as the person types to it', T, async () => {
  await page.setViewportSize({ width: 440, height: 560 });
  await page.goto(`${rig.base}/app/lumen`);
  const box = page.getByTestId('lumen-input');
  await box.waitFor();
  await box.fill('a first question');
  await box.press('Enter');
  await page.getByTestId('lumen-text').filter({ hasText: 'reply to [a first question]' }).first().waitFor({ timeout: 90_000 });
  const threads = (await fromPage(page, 'threads.list')).data;
  const t = threads.find((x) => x.purpose === 'capsule').thread;
  await waitFor('the conversation to close for idleness', async () => (await info(t)).state === 'stopped', 60_000);

  await box.pressSequentially('and a second', { delay: 30 });
  await waitFor('Lumen to start it while the words are written', async () => (await info(t)).live === true, 20_000);
  assert.equal(await box.inputValue(), 'and a second', 'nothing was sent yet');
  await box.press('Enter');
  await page.getByTestId('lumen-text').filter({ hasText: 'reply to [and a second]' }).first().waitFor({ timeout: 60_000 });
});
