// What came from memory, shown in gold (issue 22), in Chromium against a real vyred and the
// pinned Claude Code CLI on the fake Messages API: a first session in a project says what Krill
// is; once recall and the memory's curator have read it, a second session in the same project
// gets the brief (SessionStart) and recall's quotes (UserPromptSubmit) through the harness's
// hooks, vyred says so in the thread (`harness.remembered`), and the chat shows both as gold
// cards where they happened, marks the answer's words that quote memory, and says where a fact
// came from (`memory.why`). Facts and quotes holding HTML are shown as the characters they are.
// Screenshots: screenshots/memory-gold-{light,dark,why}-{desktop,phone}.png.

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { API_KEY, Rig, claudeMissing, waitFor } from './lib/rig.mjs';
import { fromPage, openBrowser, shootingTest, shot } from './lib/browser.mjs';

const noClaude = claudeMissing();
const HOSTILE = '<img src=x onerror=alert(1)>';
const FIRST = 'Krill is our inventory robot. the zebrafish inventory budget is 42 crates';
// Two terms holding HTML (one named in backticks, one defined as it), and a quote holding it.
const SECOND = `\`${HOSTILE}\` is our hostile probe. Blorp is our ${HOSTILE} robot. the zebrafish probe ${HOSTILE} waits`;
// The fake API answers "reply to [<prompt>]": the answer says what the prompt gives it.
const ASK = 'What is the zebrafish budget again? Say: Krill is our inventory robot and the budget is 42 crates';
let rig;
let browser;
let page;
/** Dialogs the page opened (an alert() that ran). */
const alerts = [];

before(async () => {
  rig = await Rig.start('memory-gold', { claude: !noClaude });
  browser = await openBrowser();
  page = browser.page;
  page.on('dialog', (d) => {
    alerts.push(d.message());
    void d.dismiss();
  });
  await page.goto(await rig.onboardLink());
  await page.waitForURL((u) => u.pathname === '/onboard' && !u.search.includes('t='));
  for (const [tool, input] of [
    ['onboarding.you', { name: 'Ada', assistant_name: 'Juno' }],
    ['onboarding.claude', { mode: 'api-key', value: API_KEY }],
  ]) {
    const r = await fromPage(page, tool, input);
    if (r.error) throw new Error(`${tool}: ${r.error.code}: ${r.error.message}`);
  }
  await page.evaluate(async () => {
    const headers = { 'content-type': 'application/json', 'x-vyre-key': localStorage.getItem('vyre_key') };
    const r = await fetch('/v1/session/finish', { method: 'POST', headers, body: '{}' });
    if (!r.ok) throw new Error(`finish: ${r.status}`);
  });
  mkdirSync(join(rig.home, 'src/walrus'), { recursive: true });
  await rig.sock('projects.create', { name: 'walrus', home: join(rig.home, 'src/walrus') });
});

after(async () => {
  await browser?.close();
  await rig?.stop();
});

const T = { timeout: 300_000, skip: noClaude };
const it = shootingTest('memory-gold-', () => page);
const threadOfUrl = () => decodeURIComponent(new URL(page.url()).pathname.split('/').pop());

async function reply(words, timeout = 90_000) {
  await page.getByTestId('assistant-text').filter({ hasText: words }).first().waitFor({ timeout });
}

async function idle() {
  await page.getByTestId('thread-state').filter({ hasText: 'Idle' }).waitFor({ timeout: 60_000 });
}

/** A new session in the project's folder from the Deck, with a first message. */
async function start(text) {
  await page.goto(`${rig.base}/app/deck`);
  await page.getByTestId('new-session').click();
  await page.getByTestId('new-cwd').fill('~/src/walrus');
  await page.getByTestId('new-text').fill(text);
  await page.getByTestId('new-start').click();
  await page.waitForURL(/\/app\/t\//);
}

/** What vyred said the memory gave a thread (for the failure's message). */
const told = (thread) => rig.sock('system.events', { types: ['harness.remembered'], thread, limit: 100 });

let first;
let second;

it('a first session in the project defines Krill, and the memory learns it', T, async () => {
  await start(FIRST);
  first = threadOfUrl();
  await reply('reply to [Krill is our inventory robot');
  await idle();
  const box = page.getByTestId('composer');
  await box.fill(SECOND);
  await box.press('Enter');
  await reply('hostile probe');
  await idle();
  // Recall reads the transcript, then the curator reads recall's turns.
  const terms = await waitFor(
    'the memory to know Krill and Blorp',
    async () => {
      const t = await rig.sock('memory.facts', { kind: 'term' });
      return ['Krill', 'Blorp'].every((s) => t.some((f) => f.subject === s)) && t;
    },
    120_000,
    500,
  );
  const krill = terms.find((f) => f.subject === 'Krill');
  assert.equal(krill.object, 'our inventory robot');
  assert.ok(terms.some((f) => f.subject === HOSTILE), JSON.stringify(terms));
});

it('the next session shows what memory gave it in gold, where it happened, and marks the answer\'s quoting words', T, async () => {
  await start(ASK);
  second = threadOfUrl();
  await reply('Krill is our inventory robot and the budget is 42 crates');
  await idle();
  const cards = page.getByTestId('memory-card');
  try {
    await page.locator('[data-testid=memory-card][data-hook=SessionStart]').waitFor({ timeout: 30_000 });
    await page.locator('[data-testid=memory-card][data-hook=UserPromptSubmit]').waitFor({ timeout: 30_000 });
  } catch (e) {
    throw new Error(`no gold cards: vyred's harness.remembered for ${second}: ${JSON.stringify(await told(second))}; all: ${JSON.stringify(await rig.sock('system.events', { types: ['harness.*'], limit: 50 }))}`, { cause: e });
  }
  const brief = page.locator('[data-testid=memory-card][data-hook=SessionStart]');
  await brief.getByTestId('memory-fact').filter({ hasText: 'Krill is our inventory robot' }).waitFor();
  const quote = page.locator(`[data-testid=memory-card][data-hook=UserPromptSubmit] [data-testid=memory-quote][data-thread="${first}"]`).first();
  await quote.waitFor();
  assert.match(await quote.innerText(), /zebrafish/);
  assert.equal(await quote.getByTestId('memory-quote-link').getAttribute('href'), `/app/t/${first}`);

  // In time order: the brief before the first message, recall's quotes right after it, then the answer.
  const order = await page.evaluate(() =>
    [...document.querySelectorAll('[data-testid=messages] > *')]
      .map((e) => (e.dataset.testid === 'memory-card' ? `card:${e.dataset.hook}` : e.dataset.testid))
      .filter((t) => ['card:SessionStart', 'card:UserPromptSubmit', 'user-text', 'assistant-text'].includes(t)),
  );
  assert.deepEqual(order, ['card:SessionStart', 'user-text', 'card:UserPromptSubmit', 'assistant-text']);

  // The answer's words that quote memory are gold; the person's own message is not marked.
  const answer = page.getByTestId('assistant-text').last();
  const marked = await answer.locator('mark.memory').allInnerTexts();
  assert.ok(marked.includes('Krill'), `marked: ${marked}`);
  assert.equal(await page.getByTestId('user-text').locator('mark').count(), 0);

  // Facts and quotes holding HTML are its characters: no element made, nothing ran.
  const cardsText = (await cards.allInnerTexts()).join('\n');
  assert.ok(cardsText.includes(`${HOSTILE} is our hostile probe`), cardsText);
  assert.ok(cardsText.includes(`Blorp is our ${HOSTILE} robot`), cardsText);
  assert.equal(await page.locator('[data-testid=messages] img').count(), 0, 'no element from memory\'s words');
  assert.deepEqual(alerts, []);

  await shot(page, 'memory-gold-light');
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot(page, 'memory-gold-dark');
  await page.emulateMedia({ colorScheme: 'light' });
});

it('"from memory" and a gold word open where the fact came from: the first session\'s turn', T, async () => {
  const fact = page.locator('[data-testid=memory-card][data-hook=SessionStart] [data-testid=memory-fact]').filter({ hasText: 'Krill is our inventory robot' });
  await fact.getByTestId('memory-why').click();
  const dialog = page.getByTestId('memory-why-dialog');
  const source = dialog.locator(`[data-testid=memory-why-source][data-thread="${first}"]`).first();
  await source.waitFor();
  assert.match(await source.innerText(), /Krill is our inventory robot/);
  assert.equal(await source.getByTestId('memory-why-link').getAttribute('href'), `/app/t/${first}`);
  await shot(page, 'memory-gold-why');
  await dialog.getByTestId('memory-why-close').click();
  await dialog.locator('[data-testid=memory-why-source]').first().waitFor({ state: 'detached' });

  // The gold word in the answer opens the same.
  await page.getByTestId('assistant-text').last().getByTestId('memory-word').filter({ hasText: 'Krill' }).first().click();
  await source.waitFor();
  // Its link opens the first session.
  await source.getByTestId('memory-why-link').click();
  await page.waitForURL((u) => u.pathname === `/app/t/${first}`);
  await page.getByTestId('user-text').filter({ hasText: 'Krill is our inventory robot' }).waitFor();
});

it('after a reload the gold is the same (read from the thread\'s events)', T, async () => {
  await page.goto(`${rig.base}/app/t/${second}`);
  await page.locator('[data-testid=memory-card][data-hook=SessionStart] [data-testid=memory-fact]').filter({ hasText: 'Krill is our inventory robot' }).waitFor();
  await page.locator(`[data-testid=memory-card][data-hook=UserPromptSubmit] [data-testid=memory-quote][data-thread="${first}"]`).first().waitFor();
  await page.getByTestId('assistant-text').last().locator('mark.memory').filter({ hasText: 'Krill' }).first().waitFor();
  assert.equal(await page.locator('[data-testid=messages] img').count(), 0);
  assert.deepEqual(alerts, []);
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});
