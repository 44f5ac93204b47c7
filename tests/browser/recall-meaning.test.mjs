// Search by meaning (dense recall), in Chromium against a real vyred with the embedding model in
// place (config `recall.model`): two terminal sessions in HOME's transcripts, one about a backup
// that failed because a disk filled up, one about bread. Once every turn is understood, Settings
// says so; in the Deck, a question that shares no word with the backup session ("which machine
// ran out of space") finds it, tagged as found by meaning, and a click opens it. No Claude Code
// needed; the model is VYRE_TEST_EMBED_MODEL (those tests skip without it). Without a model,
// Settings offers to get it (not clicked: that would reach PyPI).
// Screenshots: screenshots/recall-meaning-{deck,settings,missing}-{desktop,phone}.png, copied to
// /tmp/shots/.

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Rig, waitFor } from './lib/rig.mjs';
import { onboardByScreens } from './lib/onboard.mjs';
import { SHOTS, openBrowser, shootingTest, shot } from './lib/browser.mjs';

const MODEL = process.env.VYRE_TEST_EMBED_MODEL || '';
const noModel = MODEL && existsSync(MODEL) ? false : `needs the embedding model: VYRE_TEST_EMBED_MODEL=${MODEL || '(unset)'}`;
if (noModel) console.error(`\n*** SKIPPED: ${noModel} ***\n`);
/** Where the screenshots are copied for a person to look at. */
const OUT = '/tmp/shots';

const BACKUP = '5e1f0000-0000-4000-8000-0000000000b1';
const BREAD = '5e1f0000-0000-4000-8000-0000000000b2';
const SAID = "The nightly backup failed: the storage server's disk is completely full.";
/** No word of it is in either transcript: only its meaning finds the backup. */
const QUESTION = 'which machine ran out of space';

/** A terminal session Claude Code wrote: a prompt and its answer, `summary` its title. */
function transcript(home, id, folder, summary, prompt, answer, at) {
  const dir = join(home, `.claude/projects/-home-someone-${folder}`);
  mkdirSync(dir, { recursive: true });
  const cwd = `/home/someone/${folder}`;
  const lines = [
    { type: 'summary', summary, leafUuid: `${id}-a` },
    { parentUuid: null, isSidechain: false, type: 'user', message: { role: 'user', content: prompt }, uuid: `${id}-u`, timestamp: new Date(at).toISOString(), cwd, sessionId: id, entrypoint: 'cli' },
    {
      parentUuid: `${id}-u`,
      isSidechain: false,
      type: 'assistant',
      message: { id: `msg_${id.slice(-2)}`, role: 'assistant', content: [{ type: 'text', text: answer }] },
      uuid: `${id}-a`,
      timestamp: new Date(at + 5000).toISOString(),
      cwd,
      sessionId: id,
    },
  ];
  writeFileSync(join(dir, `${id}.jsonl`), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
}

/** `name`'s desktop and phone screenshots, also in /tmp/shots. */
async function keep(page, name) {
  await shot(page, name);
  mkdirSync(OUT, { recursive: true });
  for (const size of ['desktop', 'phone']) copyFileSync(join(SHOTS, `${name}-${size}.png`), join(OUT, `${name}-${size}.png`));
}

let rig;
let browser;
let page;

before(async () => {
  if (noModel) return;
  rig = await Rig.start('recall-meaning', { config: { recall: { model: MODEL } } });
  const day = Date.parse('2026-05-04T03:00:00Z');
  transcript(rig.home, BACKUP, 'ops', 'Nightly backup trouble', "Why did last night's job not finish?", SAID, day);
  transcript(rig.home, BREAD, 'kitchen', 'Sourdough', 'How do I bake sourdough with a crunchy crust?', 'Bake it hot in a covered pot, then uncover it for the last twenty minutes.', day + 3600_000);
  browser = await openBrowser();
  page = browser.page;
  await onboardByScreens(rig, page);
  await page.waitForURL((u) => u.pathname.startsWith('/app'));
});

after(async () => {
  await browser?.close();
  await rig?.stop();
});

const T = { timeout: 240_000, skip: noModel };
const it = shootingTest('recall-meaning-', () => page);

it('once every turn is understood, Settings says the model is ready', T, async () => {
  // Recall reads the transcripts, then the model gives each turn its meaning, in the background.
  const status = await waitFor(
    'every turn to be understood',
    async () => {
      const s = await rig.sock('recall.status');
      return s.turns >= 4 && s.dense.embedded === s.turns && s;
    },
    180_000,
    500,
  );
  assert.equal(status.dense.state, 'ready', JSON.stringify(status.dense));
  await page.goto(`${rig.base}/app/settings`);
  const state = page.getByTestId('meaning-state');
  await waitFor('Settings to say the model is ready', async () => (await state.getAttribute('data-state')) === 'ready');
  assert.equal(await page.getByTestId('meaning-text').innerText(), `Ready: all ${status.turns} turns understood.`);
  assert.equal(await page.getByTestId('meaning-fetch').count(), 0, 'no "Get the model" when it is there');
  await page.getByTestId('meaning').scrollIntoViewIfNeeded();
  await keep(page, 'recall-meaning-settings');
});

it('the Deck finds a session by what a question means, says so, and opens it', T, async () => {
  await page.goto(`${rig.base}/app/deck`);
  await page.getByTestId('deck-search').fill(QUESTION);
  const hits = page.getByTestId('recall-hits');
  await waitFor('the hits for the question', async () => (await hits.getAttribute('data-for')) === QUESTION);
  const hit = page.locator(`[data-testid=recall-hit][data-thread="${BACKUP}"]`).first();
  await hit.waitFor();
  assert.equal(await page.getByTestId('recall-hit').first().getAttribute('data-thread'), BACKUP, 'the backup session comes first');
  assert.equal(await hit.getAttribute('data-found'), 'meaning', 'found by meaning alone: no word is shared');
  assert.equal(await hit.getByTestId('recall-hit-found').innerText(), 'meaning');
  assert.equal(await hit.getByTestId('recall-hit-title').innerText(), 'Nightly backup trouble');
  assert.match(await hit.getByTestId('recall-hit-snippet').innerText(), /storage server|job not finish/);
  await keep(page, 'recall-meaning-deck');

  // Words the session has are found by them too (and marked).
  await page.getByTestId('deck-search').fill('sourdough');
  await waitFor('the hits for "sourdough"', async () => (await hits.getAttribute('data-for')) === 'sourdough');
  const bread = page.locator(`[data-testid=recall-hit][data-thread="${BREAD}"]`).first();
  await bread.waitFor();
  assert.match(await bread.getAttribute('data-found'), /\bwords\b/);
  assert.ok((await bread.locator('mark').allInnerTexts()).some((t) => /sourdough/i.test(t)), 'the matched word is marked');

  // A click opens the session the hit is in.
  await page.getByTestId('deck-search').fill(QUESTION);
  await waitFor('the hits for the question again', async () => (await hits.getAttribute('data-for')) === QUESTION);
  await hit.locator('a').click();
  await page.waitForURL((u) => u.pathname === `/app/t/${BACKUP}`);
  await page.getByText(SAID).first().waitFor();
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('without the model, Settings says search finds the words, and offers to get the model', { timeout: 120_000 }, async () => {
  const bare = await Rig.start('recall-missing', { config: { recall: { model: '/nonexistent/vyre-embed-model' } } });
  const other = await openBrowser();
  try {
    await onboardByScreens(bare, other.page);
    await other.page.waitForURL((u) => u.pathname.startsWith('/app'));
    await other.page.goto(`${bare.base}/app/settings`);
    const state = other.page.getByTestId('meaning-state');
    await waitFor('Settings to say the model is missing', async () => (await state.getAttribute('data-state')) === 'missing');
    assert.match(await other.page.getByTestId('meaning-text').innerText(), /finds the words you type/);
    assert.equal(await other.page.getByTestId('meaning-fetch').innerText(), 'Get the model (83 MB)');
    await other.page.getByTestId('meaning').scrollIntoViewIfNeeded();
    await keep(other.page, 'recall-meaning-missing');
    assert.deepEqual(other.errors, [], 'no script errors on the page');
  } finally {
    await other.close();
    await bare.stop();
  }
});
