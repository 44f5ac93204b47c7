// Every file change visible (issue 25) in the app, in a real browser against a real vyred and the
// pinned Claude Code CLI on the fake Messages API: a turn whose command runs `sed -i` and `touch`
// (no tool call says it changes a file) gets a row in the chat saying so, both files marked; the
// header's Changes opens the thread's changes with each file's diff, as a history entry of its
// own (Back closes it, Forward opens it again, a reload opens it as it was); a comment on a line
// goes to the session as its next message ("On `notes.txt:1`: ..."), is kept across a reload
// until it is sent, and while a turn runs goes after it when asked; a file is put back after a
// confirmation, and a file that changed again since is refused with vyred's words, nothing
// written. The tests share one vyred, one session and one browser and run in order.
// Screenshots: screenshots/changes-<name>-{desktop,phone}.png (1280x800, 390x844).

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_KEY, Rig, claudeMissing, waitFor } from './lib/rig.mjs';
import { PHONE, openBrowser, shootingTest, shot } from './lib/browser.mjs';
import { onboardToChat } from './lib/onboard.mjs';

const noClaude = claudeMissing();
let rig;
let browser;
let page;
/** The session that changes the files. */
let thread;
/** The turn that changed them (`<thread>:<n>`). */
let turn;
const NOTES = () => join(rig.work, 'notes.txt');
const MADE = () => join(rig.work, 'made.txt');
const COMMENT = "keep the word old: it is the team's term";

before(async () => {
  if (noClaude) return;
  rig = await Rig.start('changes', { claude: true });
  writeFileSync(NOTES(), 'the old plan\nline two\n');

  browser = await openBrowser();
  page = browser.page;
  await onboardToChat(rig, page, API_KEY);
});

after(async () => {
  await browser?.close();
  await rig?.stop();
});

const T = { timeout: 240_000, skip: noClaude };

const it = shootingTest('changes-', () => page);

/** The thread's own state, as vyred says it. */
async function stateIs(want) {
  await waitFor(`the session to be ${want}`, async () => (await rig.sock('threads.get', { thread })).state === want, 90_000, 200);
}

async function send(text) {
  const box = page.getByTestId('composer');
  await box.fill(text);
  await box.press('Enter');
}

/** A file's block in the Changes view. */
const fileIn = (path) => page.getByTestId('changes').locator(`[data-testid="changes-file"][data-path="${path}"]`);

/** Where the page is: its path and query. */
const address = () => page.evaluate(() => location.pathname + location.search);
const chatAddress = () => `/app/t/${encodeURIComponent(thread)}`;

it('a command that changes files without saying so: a row in the chat names both, marked', T, async () => {
  ({ thread } = await rig.sock('threads.start', { cwd: rig.work, text: 'a session in the folder' }));
  await page.goto(`${rig.base}/app/t/${encodeURIComponent(thread)}`);
  await page.getByTestId('assistant-text').filter({ hasText: 'reply to [a session in the folder]' }).waitFor({ timeout: 90_000 });
  await stateIs('idle');
  // Nothing changed yet: no row, no Changes in the header.
  assert.equal(await page.getByTestId('change-row').count(), 0);
  assert.equal(await page.getByTestId('changes-open').count(), 0);

  await send('RUNBASH sed -i s/old/new/ notes.txt && touch made.txt');
  const ask = page.locator('[data-testid=ask]:not([data-outcome])');
  await ask.waitFor({ timeout: 90_000 });
  await ask.getByTestId('allow').click();
  await waitFor('the command to run', () => existsSync(MADE()), 60_000, 200);
  await stateIs('idle');

  const row = page.getByTestId('change-row');
  await row.waitFor({ timeout: 30_000 });
  turn = await row.getAttribute('data-turn');
  assert.ok(turn.startsWith(`${thread}:`), turn);
  assert.equal(await row.getAttribute('data-files'), '2');
  assert.equal(await row.getAttribute('data-unannounced'), '2');
  assert.equal(await row.getByTestId('change-row-text').innerText(), 'Changed 2 files · 2 without a tool saying so');
  const paths = row.getByTestId('change-row-path');
  assert.deepEqual((await paths.allInnerTexts()).map((t) => t.replace(/^!/, '')).sort(), ['made.txt', 'notes.txt']);
  assert.deepEqual(await paths.evaluateAll((ps) => ps.map((p) => p.dataset.announced)), ['no', 'no']);
  // After the turn, in the chat's order: below the command's tool row.
  const tool = page.getByTestId('tool-row').filter({ hasText: 'sed -i' });
  assert.equal(await tool.evaluate((t, r) => !!(t.compareDocumentPosition(r) & Node.DOCUMENT_POSITION_FOLLOWING), await row.elementHandle()), true);
  // The header counts the files, on a phone too.
  assert.equal(await page.getByTestId('changes-count').innerText(), '2');
  await page.getByTestId('composer').blur();
  await shot(page, 'changes-row');
  await page.setViewportSize(PHONE);
  assert.ok(await page.getByTestId('changes-open').isVisible(), 'Changes is in the phone header');
  await page.setViewportSize({ width: 1280, height: 800 });

  // A reload shows the same row: it is read back from the thread's events.
  await page.reload();
  await page.getByTestId('change-row').waitFor();
  assert.equal(await page.getByTestId('change-row').getAttribute('data-turn'), turn);
  assert.equal(await page.getByTestId('changes-count').innerText(), '2');
});

it('the row opens the turn\'s changes: each file with its status, its mark and its diff', T, async () => {
  await page.getByTestId('change-row-open').click();
  const view = page.getByTestId('changes');
  await view.waitFor();
  // The view has its address: the turn, by its number.
  assert.equal(await address(), `${chatAddress()}?changes=${turn.split(':').pop()}`);
  const turnBlock = view.locator(`[data-testid="changes-turn"][data-turn="${turn}"]`);
  await turnBlock.waitFor();
  assert.equal(await turnBlock.getByTestId('turn-unannounced').innerText(), '2 without a tool saying so');
  const notes = fileIn('notes.txt');
  assert.equal(await notes.getAttribute('data-status'), 'modified');
  assert.equal(await notes.getAttribute('data-announced'), 'no');
  assert.equal(await notes.getByTestId('file-unannounced').innerText(), 'no tool said so');
  // The diff: the removed line and the added one, numbered where they are in the file.
  const del = notes.locator('tr[data-kind="del"]');
  const ins = notes.locator('tr[data-kind="ins"]');
  await ins.waitFor();
  assert.match(await del.innerText(), /the old plan/);
  assert.equal(await del.getAttribute('data-old'), '1');
  assert.match(await ins.innerText(), /the new plan/);
  assert.equal(await ins.getAttribute('data-new'), '1');
  assert.match(await notes.locator('tr[data-kind="eq"]').innerText(), /line two/);
  assert.equal(await notes.getByTestId('diff-added').innerText(), '+1');
  assert.equal(await notes.getByTestId('diff-removed').innerText(), '−1');
  // `touch`: a new, empty file, said so rather than drawn.
  const made = fileIn('made.txt');
  assert.equal(await made.getAttribute('data-status'), 'added');
  assert.equal(await made.getAttribute('data-announced'), 'no');
  assert.equal(await made.getByTestId('diff-none').innerText(), 'A new, empty file.');
  await shot(page, 'changes-view');
  // Esc goes back to the chat, and interrupts nothing: back in the history, not a new entry.
  const entries = await page.evaluate(() => history.length);
  await page.keyboard.press('Escape');
  await view.waitFor({ state: 'detached' });
  assert.equal(await page.locator('.notice', { hasText: 'Interrupted' }).count(), 0);
  assert.equal(await address(), chatAddress());
  assert.equal(await page.evaluate(() => history.length), entries, 'no entry pushed by closing');
});

it('Back closes the view onto the chat as it was, Forward opens it again, and a reload at its address opens it', T, async () => {
  const view = page.getByTestId('changes');
  // On a small phone, the chat scrolled up to its start (far enough from the end that it does not
  // stick there); its list marked: the same one, at the same place, once the view is closed.
  await page.setViewportSize({ width: 390, height: 400 });
  const list = page.getByTestId('messages');
  assert.ok(await list.evaluate((l) => l.scrollHeight > l.clientHeight + 100), 'the chat scrolls more than the 80px it sticks within');
  await list.evaluate((l) => (l.dataset.mark = 'before'));
  // At its end, then scrolled up as a person scrolls (the chat stops following its end).
  await list.evaluate((l) => (l.scrollTop = l.scrollHeight));
  await waitFor('the chat at its end', () => list.evaluate((l) => l.scrollTop > 100), 5000, 50);
  await list.hover();
  await page.mouse.wheel(0, -2000);
  await waitFor('the chat to be scrolled to its start', () => list.evaluate((l) => l.scrollTop === 0), 5000, 50);
  await page.waitForTimeout(100);
  await page.getByTestId('changes-open').click();
  await view.waitFor();
  assert.equal(await address(), `${chatAddress()}?changes=all`);

  // The phone's back gesture is the browser's Back.
  await page.goBack();
  await view.waitFor({ state: 'detached' });
  assert.equal(await address(), chatAddress());
  assert.equal(await list.getAttribute('data-mark'), 'before', 'the chat was not built again');
  await page.waitForTimeout(100);
  assert.equal(await list.evaluate((l) => l.scrollTop), 0, 'at the same place');
  assert.ok(await page.getByTestId('composer').isVisible());
  await page.setViewportSize({ width: 1280, height: 800 });

  await page.goForward();
  await view.waitFor();
  assert.equal(await address(), `${chatAddress()}?changes=all`);
  await fileIn('notes.txt').locator('tr[data-kind="ins"]').waitFor();

  // A reload at the view's address opens it directly, its newest turn unfolded.
  await page.reload();
  await view.waitFor();
  await fileIn('notes.txt').locator('tr[data-kind="ins"]').waitFor();
  assert.equal(await address(), `${chatAddress()}?changes=all`);
  // Its close button goes back to the chat's entry (the history is kept across the reload).
  const entries = await page.evaluate(() => history.length);
  await page.getByTestId('changes-close').click();
  await view.waitFor({ state: 'detached' });
  assert.equal(await address(), chatAddress());
  assert.equal(await page.evaluate(() => history.length), entries);

  // From a link (nothing of the app's under it), closing puts the chat in its place: the
  // history does not grow.
  await page.goto(`${rig.base}${chatAddress()}?changes=${turn.split(':').pop()}`);
  await view.locator(`[data-testid="changes-turn"][data-turn="${turn}"]`).waitFor();
  const linked = await page.evaluate(() => history.length);
  await page.getByTestId('changes-close').click();
  await view.waitFor({ state: 'detached' });
  assert.equal(await address(), chatAddress());
  assert.equal(await page.evaluate(() => history.length), linked);
  await page.getByTestId('change-row').waitFor();
  assert.deepEqual(browser.errors, []);
});

it('a comment on the added line goes to the session as its next message', T, async () => {
  await page.getByTestId('changes-open').click();
  const notes = fileIn('notes.txt');
  await notes.locator('tr[data-kind="ins"]').click();
  const form = notes.getByTestId('comment-form');
  await form.waitFor();
  assert.match(await form.innerText(), /On `notes\.txt:1`:/);
  await form.getByTestId('comment-text').fill(COMMENT);
  await shot(page, 'changes-commenting');
  await form.getByTestId('comment-add').click();
  await notes.getByTestId('comment-saved').waitFor();
  // What will be sent, shown before it is.
  const want = `On \`notes.txt:1\`: ${COMMENT}`;
  assert.equal(await page.getByTestId('changes-message').innerText(), want);
  assert.match(await notes.locator('tr[data-kind="ins"]').getAttribute('class'), /\bpicked\b/);
  await shot(page, 'changes-comment');
  // Side by side, a click on the old half is a comment on the removed line, named by its old
  // number; removed again, it is not sent.
  await notes.getByTestId('diff-split').click();
  const pair = notes.locator('table.split tr[data-old="1"][data-new="1"]');
  await pair.locator('td').nth(2).click();
  assert.match(await notes.getByTestId('comment-form').innerText(), /On `notes\.txt`, the removed line 1:/);
  await notes.getByTestId('comment-text').fill('why?');
  await notes.getByTestId('comment-add').click();
  await shot(page, 'changes-split');
  assert.equal(await page.getByTestId('changes-message').innerText(), `${want}\n\nOn \`notes.txt\`, the removed line 1: why?`);
  await notes.getByTestId('comment-saved').filter({ hasText: 'why?' }).getByRole('button', { name: 'Remove the comment' }).click();
  assert.equal(await page.getByTestId('changes-message').innerText(), want);
  await notes.getByTestId('diff-split').click();
  await notes.locator('table.unified').waitFor();

  await page.getByTestId('comments-send').click();
  // Sent: the view closes on the chat, where the message is.
  await page.getByTestId('changes').waitFor({ state: 'detached' });
  await page.getByTestId('user-text').filter({ hasText: COMMENT }).waitFor();
  // The fake API answers with the words it got (drawn as Markdown: the backticks make code).
  await page.getByTestId('assistant-text').filter({ hasText: `reply to [On notes.txt:1: ${COMMENT}]` }).waitFor({ timeout: 90_000 });
  await stateIs('idle');
  const { items } = await rig.sock('threads.timeline', { thread });
  const said = items.filter((i) => i.kind === 'user').map((i) => i.text);
  assert.equal(said[said.length - 1], want, 'the session got the comment as its next message');
  assert.equal(said[said.length - 2], 'RUNBASH sed -i s/old/new/ notes.txt && touch made.txt');
  assert.equal(await page.evaluate((t) => localStorage.getItem(`vyre_comments:${t}`), thread), null, 'nothing kept once sent');
});

it('a comment is kept across a reload, and while a turn runs it goes after the turn when asked', T, async () => {
  const LATER = 'after this turn, say why the plan changed';
  await page.getByTestId('changes-open').click();
  const notes = fileIn('notes.txt');
  await notes.locator('tr[data-kind="ins"]').click();
  await notes.getByTestId('comment-text').fill(LATER);
  await notes.getByTestId('comment-add').click();
  const want = `On \`notes.txt:1\`: ${LATER}`;
  assert.equal(await page.getByTestId('changes-message').innerText(), want);
  // Nothing runs: one way to send it, a new turn.
  assert.equal(await page.getByTestId('comments-send').innerText(), 'Send');
  assert.equal(await page.getByTestId('comments-after').count(), 0);

  // A reload (the view's address opens it again): the comment is still there, not sent.
  await page.reload();
  await notes.getByTestId('comment-saved').filter({ hasText: LATER }).waitFor();
  assert.equal(await page.getByTestId('changes-message').innerText(), want);
  // Closed, the header says a comment waits; opened again, it is still there.
  await page.getByTestId('changes-close').click();
  await page.getByTestId('changes').waitFor({ state: 'detached' });
  assert.equal(await page.getByTestId('changes-unsent').innerText(), '✎ 1');
  assert.match(await page.getByTestId('changes-open').getAttribute('title'), /1 comment not sent yet/);
  await page.getByTestId('composer').blur();
  await shot(page, 'changes-unsent');
  await page.getByTestId('changes-open').click();
  await page.getByTestId('changes-message').filter({ hasText: LATER }).waitFor();

  // A turn starts (sent from elsewhere, as another device would) while the view is open: the
  // comments may join it or wait for its end, as the composer's words may.
  await rig.sock('threads.send', { thread, text: 'SLOWLY keep going' });
  const after = page.getByTestId('comments-after');
  await after.waitFor({ timeout: 60_000 });
  assert.equal(await page.getByTestId('comments-send').innerText(), 'Steer');
  await after.check();
  assert.equal(await page.getByTestId('comments-send').innerText(), 'Queue');
  await shot(page, 'changes-queue');
  await page.getByTestId('comments-send').click();
  await page.getByTestId('changes').waitFor({ state: 'detached' });
  assert.equal(await address(), chatAddress());
  // Waiting for the turn's end, in the chat's "After this turn".
  await page.getByTestId('queued-text').filter({ hasText: LATER }).waitFor();
  assert.equal(await page.evaluate((t) => localStorage.getItem(`vyre_comments:${t}`), thread), null, 'nothing kept once sent');
  assert.equal(await page.getByTestId('changes-unsent').count(), 0);
  await page.getByTestId('assistant-text').filter({ hasText: 'reply to [SLOWLY keep going]' }).waitFor({ timeout: 90_000 });
  await page.getByTestId('assistant-text').filter({ hasText: `reply to [On notes.txt:1: ${LATER}]` }).waitFor({ timeout: 90_000 });
  await stateIs('idle');
  const { items } = await rig.sock('threads.timeline', { thread });
  const users = items.filter((i) => i.kind === 'user');
  assert.deepEqual(
    users.slice(-2).map((i) => i.text),
    ['SLOWLY keep going', want],
    'the comment came after the turn',
  );
  assert.equal(users.at(-1).via, 'queued', 'queued, not steered in');
  assert.deepEqual(browser.errors, []);
});

it('a file is put back after a confirmation; one changed again since is refused, nothing written', T, async () => {
  await page.getByTestId('changes-open').click();
  const made = fileIn('made.txt');
  await made.getByTestId('revert-file').click();
  const confirm = page.getByTestId('confirm');
  await confirm.waitFor();
  assert.match(await confirm.innerText(), /Put back made\.txt\?/);
  assert.match(await confirm.innerText(), /removes it from the folder/);
  await confirm.getByTestId('confirm-ok').click();
  await waitFor('made.txt to say it was put back', async () => (await made.getAttribute('data-reverted')) === 'yes', 30_000);
  assert.equal(existsSync(MADE()), false, 'made.txt is gone from the folder');
  assert.equal(await made.getByTestId('file-reverted-text').innerText(), 'Put back: removed from the folder, as before this turn.');
  assert.equal(await made.getByTestId('revert-file').count(), 0);
  assert.equal(readFileSync(NOTES(), 'utf8'), 'the new plan\nline two\n', 'the other file is as the turn left it');

  // The person edits notes.txt after the turn: putting the turn's change back would lose it.
  writeFileSync(NOTES(), 'the new plan\nline two\nmy own line\n');
  const notes = fileIn('notes.txt');
  await notes.getByTestId('revert-file').click();
  await confirm.getByTestId('confirm-ok').click();
  const refused = page.getByTestId('changes').getByTestId('revert-refused');
  await refused.waitFor({ timeout: 30_000 });
  assert.match(await refused.innerText(), /notes\.txt/);
  assert.equal(readFileSync(NOTES(), 'utf8'), 'the new plan\nline two\nmy own line\n', 'nothing was written');
  assert.equal(await notes.getAttribute('data-reverted'), 'no');
  await shot(page, 'changes-reverted');

  // Back in the chat, the row says what was put back; after a reload too (from the events).
  await page.getByTestId('changes-close').click();
  await page.getByTestId('change-row-reverted').filter({ hasText: '1 put back' }).waitFor();
  await page.reload();
  await page.getByTestId('change-row-reverted').filter({ hasText: '1 put back' }).waitFor();
  await page.getByTestId('changes-open').click();
  await waitFor('made.txt to still say it was put back', async () => (await fileIn('made.txt').getAttribute('data-reverted')) === 'yes', 10_000);
});
