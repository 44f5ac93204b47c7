// What memory gave a box's session, in gold in the Mac's chat of it (issue 22 on a paired box):
// two real vyreds, a box (`--role box`, the pinned Claude Code CLI against the fake Messages API)
// and a Mac (`--role local`), paired. A first session on the box says what Krill is; once the
// box's recall and curator have read it, a second session there gets the brief (SessionStart) and
// recall's quotes (UserPromptSubmit) through the box's harness hooks. The Mac's chat of that
// thread reads them from the box, not from its own vyred: gold cards where they happened, the
// answer's quoting words marked, "from memory" answered by the box's memory.why, and a new
// message's memory shown as it comes (the box thread's stream carries `harness.remembered`). A
// box whose link does not let the Mac read what memory gave before, or one out of reach, leaves
// the chat as it is: no error toasts, asked once.
//
// The box runs with vyred's default link.allow: the Mac reads what memory gave a thread before
// it opened with the box's `harness.remembered` and where a fact came from with `memory.why`,
// both in that default; a box whose link.allow leaves the first out is the refused case.
// Screenshots: screenshots/box-memory-{gold,why,refused,away}-{desktop,phone}.png.

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_KEY, Rig, claudeMissing, waitFor } from './lib/rig.mjs';
import { openBrowser, shootingTest, shot } from './lib/browser.mjs';

const noClaude = claudeMissing();
const FIRST = 'Krill is our inventory robot. the zebrafish inventory budget is 42 crates';
// The fake API answers "reply to [<prompt>]": the answer says what the prompt gives it.
const ASK = 'What is the zebrafish budget again? Say: Krill is our inventory robot and the budget is 42 crates';
/** vyred's default link.allow on a box (LinkConfig::DEFAULT_ALLOW) without what reads its memory. */
const NO_MEMORY_ALLOW = ['threads.list', 'threads.get', 'threads.timeline', 'threads.output', 'threads.commands', 'threads.files', 'threads.start', 'threads.send', 'threads.answer', 'threads.interrupt', 'agents.list', 'agents.threads', 'projects.list', 'files.*', 'system.status', 'memory.why'];
let box;
let mac;
let browser;
let page;
let pairing;
let first;
let second;
/** The Mac's page's warnings, and the tools it called on the box (pairing.call's `tool`). */
const warnings = [];
const onBox = [];

before(async () => {
  [box, mac] = await Promise.all([
    Rig.start('boxmem-box', { role: 'box', claude: !noClaude }),
    Rig.start('boxmem-mac', { role: 'local', config: { vault: { keystore: 'file' } } }),
  ]);
  await box.sock('vault.put', { name: 'anthropic-api-key', value: API_KEY });
  await box.sock('vault.grant', { item: 'anthropic-api-key', to: 'sessions' });
  // The sessions run in a project's folder on the box: its memory is that project's.
  await box.sock('projects.create', { name: 'acme', home: box.work });
  browser = await openBrowser();
  page = browser.page;
  page.on('console', (m) => m.type() === 'warning' && warnings.push(m.text()));
  page.on('request', (r) => {
    if (!r.url().endsWith('/v1/tools/pairing.call')) return;
    try {
      onBox.push(JSON.parse(r.postData() ?? '{}').tool);
    } catch {
      onBox.push('?');
    }
  });
  // Every error toast the page shows, however short it stays (a storm would be many).
  await page.addInitScript(() => {
    window.__errorToasts = [];
    new MutationObserver(() => {
      for (const t of document.querySelectorAll('[data-testid=toast][data-level=error]')) {
        if (!t.__seen) {
          t.__seen = true;
          window.__errorToasts.push(t.textContent);
        }
      }
    }).observe(document, { childList: true, subtree: true, attributes: true });
  });
  // The Mac's onboarding, straight from its page (app.test.mjs walks its screens).
  await page.goto(await mac.onboardLink());
  await page.waitForURL((u) => u.pathname === '/onboard' && !u.search.includes('t='));
  await page.evaluate(async () => {
    const post = async (path, body) => {
      const headers = { 'content-type': 'application/json', 'x-vyre-key': localStorage.getItem('vyre_key') };
      const r = await fetch(path, { method: 'POST', headers, body: JSON.stringify(body) });
      const j = await r.json();
      if (j.error) throw new Error(`${path}: ${j.error.code}: ${j.error.message}`);
      return j.data;
    };
    await post('/v1/tools/onboarding.you', { name: 'Ada', assistant_name: 'Juno' });
    return post('/v1/session/finish', {});
  });
  const code = await box.sock('pairing.code');
  pairing = await mac.sock('pairing.add', { address: code.address, code: code.code, name: 'Ada\'s Mac' });
});

after(async () => {
  await browser?.close();
  await Promise.all([box?.stop(), mac?.stop()]);
});

const T = { timeout: 300_000, skip: noClaude };
const it = shootingTest('box-memory-', () => page);
const boxPath = (thread) => `/app/b/${pairing.id}/t/${thread}`;
const errorToasts = () => page.evaluate(() => window.__errorToasts);

async function reply(words, timeout = 90_000) {
  await page.getByTestId('assistant-text').filter({ hasText: words }).first().waitFor({ timeout });
}

async function idle() {
  await page.getByTestId('thread-state').filter({ hasText: 'Idle' }).waitFor({ timeout: 60_000 });
}

/** A session started on the box, once its first answer is in its timeline there. */
async function startOnBox(text, answer) {
  const { thread } = await box.sock('threads.start', { cwd: box.work, text });
  await waitFor(
    `the box's session to answer ${JSON.stringify(answer)}`,
    async () => {
      const [{ items }, d] = await Promise.all([box.sock('threads.timeline', { thread }), box.sock('threads.get', { thread })]);
      return d.state === 'idle' && items.some((i) => i.kind === 'assistant' && i.text.includes(answer));
    },
    120_000,
    250,
  );
  return thread;
}

/** What the box said its memory gave a thread (for a failure's message). */
const told = (thread) => box.sock('system.events', { types: ['harness.remembered'], thread, limit: 100 });

it('a first session on the box defines Krill, and the box\'s memory learns it', T, async () => {
  first = await startOnBox(FIRST, 'reply to [Krill is our inventory robot');
  await waitFor(
    'the box\'s memory to know Krill',
    async () => (await box.sock('memory.facts', { kind: 'term' })).some((f) => f.subject === 'Krill' && f.object === 'our inventory robot'),
    120_000,
    500,
  );
  // The Mac's own memory knows nothing of it: what shows must come from the box.
  assert.deepEqual(await mac.sock('memory.facts', { kind: 'term' }), []);
});

it('the Mac\'s chat of the next box session shows what the box\'s memory gave it in gold, where it happened', T, async () => {
  second = await startOnBox(ASK, 'Krill is our inventory robot and the budget is 42 crates');
  const remembered = await told(second);
  assert.ok(remembered.some((e) => e.payload.hook === 'SessionStart') && remembered.some((e) => e.payload.hook === 'UserPromptSubmit'), `the box gave the session memory: ${JSON.stringify(remembered)}`);
  await page.goto(`${mac.base}${boxPath(second)}`);
  await reply('Krill is our inventory robot and the budget is 42 crates');
  await idle();
  const brief = page.locator('[data-testid=memory-card][data-hook=SessionStart]');
  try {
    await brief.getByTestId('memory-fact').filter({ hasText: 'Krill is our inventory robot' }).waitFor({ timeout: 30_000 });
  } catch (e) {
    throw new Error(`no gold card; the box's harness.remembered for ${second}: ${JSON.stringify(remembered)}`, { cause: e });
  }
  const quote = page.locator(`[data-testid=memory-card][data-hook=UserPromptSubmit] [data-testid=memory-quote][data-thread="${first}"]`).first();
  await quote.waitFor();
  assert.match(await quote.innerText(), /zebrafish/);
  // The quoted session is the box's: it opens as the box's.
  assert.equal(await quote.getByTestId('memory-quote-link').getAttribute('href'), boxPath(first));

  // In time order: the brief before the first message, recall's quotes right after it, then the answer.
  const order = await page.evaluate(() =>
    [...document.querySelectorAll('[data-testid=messages] > *')]
      .map((e) => (e.dataset.testid === 'memory-card' ? `card:${e.dataset.hook}` : e.dataset.testid))
      .filter((t) => ['card:SessionStart', 'card:UserPromptSubmit', 'user-text', 'assistant-text'].includes(t)),
  );
  assert.deepEqual(order, ['card:SessionStart', 'user-text', 'card:UserPromptSubmit', 'assistant-text']);
  // In gold: its label in the theme's gold (as the Mac's own threads' cards).
  const colours = await brief.evaluate((el) => {
    const probe = document.createElement('span');
    probe.style.color = 'var(--gold)';
    document.body.append(probe);
    const gold = getComputedStyle(probe).color;
    probe.remove();
    return { label: getComputedStyle(el.querySelector('.label')).color, gold };
  });
  assert.equal(colours.label, colours.gold, JSON.stringify(colours));

  // The answer's words that quote memory are gold; the person's own message is not marked.
  const answer = page.getByTestId('assistant-text').last();
  const marked = await answer.locator('mark.memory').allInnerTexts();
  assert.ok(marked.includes('Krill'), `marked: ${marked}`);
  assert.equal(await page.getByTestId('user-text').locator('mark').count(), 0);
  // Read from the box, through the pairing.
  assert.ok(onBox.includes('harness.remembered'), `called on the box: ${onBox}`);
  await shot(page, 'box-memory-gold');
});

it('"from memory" asks the box where the fact came from: the first session\'s turn, opened on the box', T, async () => {
  const fact = page.locator('[data-testid=memory-card][data-hook=SessionStart] [data-testid=memory-fact]').filter({ hasText: 'Krill is our inventory robot' });
  const asked = onBox.length;
  await fact.getByTestId('memory-why').click();
  const dialog = page.getByTestId('memory-why-dialog');
  const source = dialog.locator(`[data-testid=memory-why-source][data-thread="${first}"]`).first();
  await source.waitFor();
  assert.ok(onBox.slice(asked).includes('memory.why'), `asked the box: ${onBox.slice(asked)}`);
  assert.match(await source.innerText(), /Krill is our inventory robot/);
  assert.equal(await source.getByTestId('memory-why-link').getAttribute('href'), boxPath(first));
  await shot(page, 'box-memory-why');
  await dialog.getByTestId('memory-why-close').click();
  await dialog.locator('[data-testid=memory-why-source]').first().waitFor({ state: 'detached' });

  // The gold word in the answer opens the same, and its link opens the first session, the box's.
  await page.getByTestId('assistant-text').last().getByTestId('memory-word').filter({ hasText: 'Krill' }).first().click();
  await source.waitFor();
  await source.getByTestId('memory-why-link').click();
  await page.waitForURL((u) => u.pathname === boxPath(first));
  await page.getByTestId('user-text').filter({ hasText: 'Krill is our inventory robot' }).waitFor();
  assert.equal(await page.getByTestId('chat-where').count(), 1, 'shown as the box\'s');
});

it('a message sent from the Mac: what the box\'s memory gives it shows as it comes, without a reload', T, async () => {
  await page.goto(`${mac.base}${boxPath(second)}`);
  const prompts = page.locator('[data-testid=memory-card][data-hook=UserPromptSubmit]');
  await prompts.first().waitFor();
  assert.equal(await prompts.count(), 1);
  const composer = page.getByTestId('composer');
  await composer.fill('and the zebrafish crates, once more?');
  await composer.press('Enter');
  await reply('reply to [and the zebrafish crates, once more?]');
  await waitFor('a second gold card for the new message', async () => (await prompts.count()) === 2, 30_000, 100);
  const order = await page.evaluate(() =>
    [...document.querySelectorAll('[data-testid=messages] > *')]
      .map((e) => (e.dataset.testid === 'memory-card' ? `card:${e.dataset.hook}` : e.dataset.testid))
      .filter((t) => ['card:UserPromptSubmit', 'user-text'].includes(t)),
  );
  assert.deepEqual(order.slice(-2), ['user-text', 'card:UserPromptSubmit'], 'right after the message it came with');
  await prompts.nth(1).locator(`[data-testid=memory-quote][data-thread="${first}"]`).first().waitFor();
  await idle();
  assert.deepEqual(await errorToasts(), []);
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('a box whose link does not let the Mac read what memory gave before: the chat as it is, asked once, no error', T, async () => {
  // The box's link.allow without harness.remembered.
  const config = JSON.parse(readFileSync(join(box.vyreHome, 'config.json'), 'utf8'));
  config.link = { ...config.link, allow: NO_MEMORY_ALLOW };
  writeFileSync(join(box.vyreHome, 'config.json'), JSON.stringify(config));
  await box.restart();
  await waitFor('the Mac\'s link to the box to be up again', async () => (await mac.sock('pairing.list')).some((p) => p.id === pairing.id && (p.link ?? 'up') === 'up'), 60_000, 250);
  warnings.length = 0;
  const from = onBox.length;
  await page.goto(`${mac.base}${boxPath(second)}`);
  await reply('Krill is our inventory robot and the budget is 42 crates');
  // (Its session ended with the box's restart: the message below starts it again.)
  // A turn on the box (its moves would read memory again, were it allowed).
  const composer = page.getByTestId('composer');
  await composer.fill('one more, with no memory shown');
  await composer.press('Enter');
  await reply('reply to [one more, with no memory shown]');
  await idle();
  // (What memory gives the session from now on still comes live, on the box thread's stream.)
  assert.equal(onBox.slice(from).filter((t) => t === 'harness.remembered').length, 1, `asked once: ${onBox.slice(from)}`);
  assert.equal(warnings.filter((w) => w.startsWith('memory events')).length, 1, `said once: ${warnings}`);
  assert.deepEqual(await errorToasts(), []);
  await shot(page, 'box-memory-refused');
});

it('a box out of reach: the chat says so in its line, with no gold and no error toasts', T, async () => {
  await box.halt();
  warnings.length = 0;
  await page.goto(`${mac.base}${boxPath(second)}`);
  await page.getByTestId('box-away').waitFor({ timeout: 30_000 });
  await page.waitForTimeout(1500);
  assert.equal(await page.getByTestId('memory-card').count(), 0);
  assert.deepEqual(await errorToasts(), []);
  assert.ok(warnings.filter((w) => w.startsWith('memory events')).length <= 1, `said once at most: ${warnings}`);
  await shot(page, 'box-memory-away');
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});
