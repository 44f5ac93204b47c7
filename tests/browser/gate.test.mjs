// The Gate in the app (spec 7.7: nothing goes out as the person until they have seen the final
// words and where they go), in a real browser against a real vyred and the pinned Claude Code CLI
// on the fake Messages API: a session's `git push` to a bare repository beside the rig's folder
// is held; its card shows in the chat where the call is and in Needs, with where it goes and the
// commit it sends; Approve pushes, Reject (with a reason) pushes nothing, an edited command runs
// as edited, and Lumen approves one too. The tests share one vyred, one session and one browser
// and run in order.
// Screenshots: screenshots/gate-<name>-{desktop,phone}.png (1280x800, 390x844), gate-lumen.png.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_KEY, Rig, claudeMissing, waitFor } from './lib/rig.mjs';
import { SHOTS, openBrowser, shootingTest, shot } from './lib/browser.mjs';
import { onboardToChat } from './lib/onboard.mjs';

const noClaude = claudeMissing();
const LUMEN = { width: 420, height: 640 };
let rig;
let browser;
let page;
/** The bare repository the session pushes to (`origin`). */
let remote;
/** The session that pushes. */
let thread;

/** git in `dir`, with the rig's HOME (never the machine's config): its stdout. */
function git(dir, ...args) {
  return execFileSync('git', ['-C', dir, ...args], { env: { PATH: process.env.PATH, HOME: rig.home, GIT_CONFIG_NOSYSTEM: '1' }, encoding: 'utf8' }).trim();
}

/** The remote's branches, one a line. */
const branches = () => git(remote, 'branch', '--list', '--format=%(refname:short)');

before(async () => {
  if (noClaude) return;
  rig = await Rig.start('gate', { claude: true });
  // The rig's folder as a repository with one commit, and a bare remote beside it.
  remote = join(rig.dir, 'remote.git');
  mkdirSync(remote);
  git(remote, 'init', '-q', '--bare', '-b', 'main');
  git(rig.work, 'init', '-q', '-b', 'main');
  git(rig.work, 'config', 'user.email', 'dev@example.com');
  git(rig.work, 'config', 'user.name', 'Dev');
  writeFileSync(join(rig.work, 'notes.txt'), 'the walrus plan\n');
  git(rig.work, 'add', 'notes.txt');
  git(rig.work, 'commit', '-q', '-m', 'Add the walrus plan');
  git(rig.work, 'remote', 'add', 'origin', remote);

  browser = await openBrowser();
  page = browser.page;
  await onboardToChat(rig, page, API_KEY);
});

after(async () => {
  await browser?.close();
  await rig?.stop();
});

const T = { timeout: 240_000, skip: noClaude };

const it = shootingTest('gate-', () => page);

/** The thread's own state, as vyred says it. */
async function stateIs(want) {
  await waitFor(`the session to be ${want}`, async () => (await rig.sock('threads.get', { thread })).state === want, 90_000, 200);
}

async function send(text) {
  const box = page.getByTestId('composer');
  await box.fill(text);
  await box.press('Enter');
}

/** The held card in the chat (the newest one still held), once it shows. */
async function heldCard() {
  const card = page.getByTestId('messages').locator('[data-testid="gate-card"][data-state="held"]');
  await card.waitFor({ timeout: 90_000 });
  return card;
}

it('a push waits in the chat and in Needs with where it goes and what it sends; Approve pushes it', T, async () => {
  ({ thread } = await rig.sock('threads.start', { cwd: rig.work, text: 'RUNBASH git push origin main' }));
  await page.goto(`${rig.base}/app/t/${encodeURIComponent(thread)}`);
  const card = await heldCard();
  // Where the call is: right after the tool row of the call it holds.
  const item = await card.getAttribute('data-item');
  const [held] = await rig.sock('gate.held', { thread });
  assert.equal(held.item, item);
  const row = page.locator(`[data-testid="tool-row"][data-call="${held.call}"]`);
  await row.waitFor();
  assert.equal(await row.evaluate((r) => r.nextElementSibling?.getAttribute('data-item')), item, 'the card follows its tool row');
  // The row says the Gate holds it, not that it ran without asking.
  assert.equal(await row.getByTestId('tool-gate').innerText(), 'held');
  assert.match(await card.getByTestId('gate-what').innerText(), /^Held: git push/);
  assert.equal(await card.getByTestId('gate-kind').innerText(), 'Sends as you');
  const to = await card.getByTestId('gate-destination').innerText();
  assert.ok(to.startsWith('To:') && to.includes(remote) && to.includes('main'), to);
  const content = await card.getByTestId('gate-content').innerText();
  assert.match(content, /^git push origin main/);
  assert.match(content, /Add the walrus plan/);
  assert.match(content, /\+the walrus plan/);
  // The session waits on the person, no ask is raised, and nothing went out.
  await stateIs('waiting');
  assert.equal(await page.getByTestId('ask').count(), 0, 'held, not asked');
  assert.equal(branches(), '', 'nothing pushed before approval');
  await page.getByTestId('needs-count').filter({ hasText: '1' }).waitFor();
  await shot(page, 'gate-held');
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot(page, 'gate-held-dark');
  await page.emulateMedia({ colorScheme: 'light' });

  // Needs shows it too, first.
  await page.click('[data-nav=needs]');
  const needed = page.getByTestId('gate-list').getByTestId('gate-card');
  await needed.waitFor();
  assert.equal(await needed.getAttribute('data-item'), item);
  assert.match(await needed.getByTestId('gate-content').innerText(), /Add the walrus plan/);
  assert.equal(await page.getByTestId('needs-empty').count(), 0);
  await shot(page, 'gate-needs');

  // Back in the chat, Approve: the push happens, and the card says so in one line.
  await page.goBack();
  const again = await heldCard();
  await again.getByTestId('gate-approve').click();
  const done = page.locator(`[data-testid="gate-card"][data-item="${item}"]`);
  await waitFor('the card to say approved', async () => (await done.getAttribute('data-state')) === 'approved', 30_000);
  assert.equal(await done.getByTestId('gate-outcome').innerText(), 'Approved');
  assert.equal(await row.getByTestId('tool-gate').innerText(), 'approved');
  await waitFor('the push to reach the remote', () => branches() === 'main', 60_000, 200);
  await stateIs('idle');
  assert.equal(await page.getByTestId('needs-count').count(), 0, 'nothing waits any more');
  assert.equal((await rig.sock('gate.held', { thread, all: true }))[0].state, 'approved');
  await shot(page, 'gate-approved');
});

it('Reject with a reason: the card says why, and nothing is pushed', T, async () => {
  writeFileSync(join(rig.work, 'notes.txt'), 'the walrus plan\nand the seal plan\n');
  git(rig.work, 'commit', '-q', '-am', 'Add the seal plan');
  const before = git(remote, 'rev-parse', 'main');
  await send('RUNBASH git push origin main');
  const card = await heldCard();
  assert.match(await card.getByTestId('gate-content').innerText(), /Add the seal plan/);
  await card.getByTestId('gate-reject').click();
  await card.getByTestId('gate-why').fill('not before the review on Friday');
  await shot(page, 'gate-rejecting');
  const item = await card.getAttribute('data-item');
  await card.getByTestId('gate-reject-confirm').click();
  const done = page.locator(`[data-testid="gate-card"][data-item="${item}"]`);
  await waitFor('the card to say rejected', async () => (await done.getAttribute('data-state')) === 'rejected', 30_000);
  assert.equal(await done.getByTestId('gate-outcome').innerText(), 'Rejected: not before the review on Friday');
  await stateIs('idle');
  assert.equal(git(remote, 'rev-parse', 'main'), before, 'a rejected push sends nothing');
  assert.equal(branches(), 'main');
  // A reload shows the same: decided items come back from vyred with their outcome.
  await page.reload();
  const reread = page.locator(`[data-testid="gate-card"][data-item="${item}"]`);
  await reread.waitFor();
  assert.equal(await reread.getByTestId('gate-outcome').innerText(), 'Rejected: not before the review on Friday');
});

it('Edit the command, Approve edited: the edited words are what runs', T, async () => {
  await send('RUNBASH git push origin main');
  const card = await heldCard();
  await card.getByTestId('gate-edit').click();
  const box = card.getByTestId('gate-edited');
  assert.equal(await box.inputValue(), 'git push origin main', 'the edit starts from the command');
  await box.fill('git push origin main:reviewed');
  await shot(page, 'gate-editing');
  const item = await card.getAttribute('data-item');
  await card.getByTestId('gate-approve-edited').click();
  const done = page.locator(`[data-testid="gate-card"][data-item="${item}"]`);
  await waitFor('the card to say approved', async () => (await done.getAttribute('data-state')) === 'approved', 30_000);
  assert.equal(await done.getByTestId('gate-outcome').innerText(), 'Approved with your edit');
  await waitFor('the edited push to reach the remote', () => branches().split('\n').includes('reviewed'), 60_000, 200);
  assert.equal(git(remote, 'rev-parse', 'reviewed'), git(rig.work, 'rev-parse', 'main'));
  await stateIs('idle');
  const [decided] = (await rig.sock('gate.held', { thread, all: true })).filter((i) => i.item === item);
  assert.equal(decided.edited, 'git push origin main:reviewed');
  // Every decided card is one line in the chat.
  assert.deepEqual(await page.getByTestId('messages').getByTestId('gate-outcome').allInnerTexts(), [
    'Approved',
    'Rejected: not before the review on Friday',
    'Approved with your edit',
  ]);
  await shot(page, 'gate-decided');
  // Folded to one line, each fits a phone's width.
  await page.setViewportSize({ width: 390, height: 844 });
  const over = await page.getByTestId('gate-card').evaluateAll((cards) => cards.filter((c) => c.scrollWidth > c.clientWidth || c.getBoundingClientRect().right > window.innerWidth).length);
  assert.equal(over, 0, 'a folded card sticks out on a phone');
  // Open again on a click: the edited words are shown with what was held.
  await done.locator('button.fold').click();
  assert.equal(await done.getByTestId('gate-edited-words').innerText(), 'git push origin main:reviewed');
  await page.setViewportSize({ width: 1280, height: 800 });
});

it('a decision made elsewhere shows at once, and an interrupted turn withdraws what it held', T, async () => {
  await send('RUNBASH git push origin main:elsewhere');
  let card = await heldCard();
  let item = await card.getAttribute('data-item');
  // Approved from another surface (here vyred's socket): the card follows the event.
  await rig.sock('gate.approve', { item });
  const approved = page.locator(`[data-testid="gate-card"][data-item="${item}"]`);
  await waitFor('the card to say approved', async () => (await approved.getAttribute('data-state')) === 'approved', 30_000);
  assert.equal(await approved.getByTestId('gate-outcome').innerText(), 'Approved');
  await waitFor('the push to reach the remote', () => branches().split('\n').includes('elsewhere'), 60_000, 200);
  await stateIs('idle');

  await send('RUNBASH git push origin main:never');
  card = await heldCard();
  item = await card.getAttribute('data-item');
  await page.getByTestId('working').waitFor();
  assert.match(await page.getByTestId('working').innerText(), /approve or reject/);
  await rig.sock('threads.interrupt', { thread });
  const withdrawn = page.locator(`[data-testid="gate-card"][data-item="${item}"]`);
  await waitFor('the card to say withdrawn', async () => (await withdrawn.getAttribute('data-state')) === 'withdrawn', 30_000);
  assert.match(await withdrawn.getByTestId('gate-outcome').innerText(), /^Withdrawn/);
  assert.ok(!branches().split('\n').includes('never'), 'a withdrawn push sends nothing');
  await stateIs('idle');
});

it('Lumen shows a held push above the asks and approves it in place', T, async () => {
  await page.setViewportSize(LUMEN);
  await page.goto(`${rig.base}/app/lumen`);
  await page.getByTestId('lumen-input').waitFor();
  await page.getByTestId('lumen-needs-empty').waitFor();
  await rig.sock('threads.send', { thread, text: 'RUNBASH git push origin main:from-lumen' });
  const card = page.getByTestId('lumen-needs').getByTestId('gate-list').getByTestId('gate-card');
  await card.waitFor({ timeout: 90_000 });
  await page.getByTestId('lumen-needs-count').filter({ hasText: '1' }).waitFor();
  assert.match(await card.getByTestId('gate-content').innerText(), /^git push origin main:from-lumen/);
  assert.ok((await card.getByTestId('gate-destination').innerText()).includes(remote));
  // No edit in the small window: Open goes to the chat for that.
  assert.equal(await card.getByTestId('gate-edit').count(), 0);
  assert.equal(await card.getByTestId('gate-open').count(), 1);
  const [top, bottom] = await card.evaluate((e) => [e.getBoundingClientRect().top, e.getBoundingClientRect().bottom]);
  assert.ok(top > 0 && top < LUMEN.height, `the card is in view (${top}..${bottom})`);
  const wide = await page.evaluate(() => [document.documentElement, ...document.querySelectorAll('.needs')].some((e) => e.scrollWidth > e.clientWidth));
  assert.equal(wide, false, 'Lumen does not scroll sideways');
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, 'gate-lumen.png') });
  await card.getByTestId('gate-approve').click();
  await page.getByTestId('lumen-needs-empty').waitFor({ timeout: 30_000 });
  await waitFor('the push from Lumen to reach the remote', () => branches().split('\n').includes('from-lumen'), 60_000, 200);
  await stateIs('idle');
  await page.setViewportSize({ width: 1280, height: 800 });
});
