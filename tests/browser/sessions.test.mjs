// Starting and finding sessions, the ask card, and the small things of issue 18 (items 7, 8 and
// 9), in a real browser against a real vyred and (for the chats) the pinned Claude Code CLI on
// the fake Messages API. The tests share one vyred and one browser and run in order.
// Screenshots: screenshots/sessions-<name>-{desktop,phone}.png at 1440x900 and 390x844.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_KEY, Rig, claudeMissing, waitFor } from './lib/rig.mjs';
import { SHOTS, openBrowser, shootingTest } from './lib/browser.mjs';
import { onboardWithKey } from './lib/onboard.mjs';

const noClaude = claudeMissing();
const DESKTOP = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };
let rig;
let browser;
let page;
/** Tool calls the page made that vyred answered 404 (a thread it should not have asked for). */
const missing = [];

before(async () => {
  rig = await Rig.start('sessions', { claude: !noClaude });
  browser = await openBrowser();
  page = browser.page;
  await page.setViewportSize(DESKTOP);
  page.on('response', (r) => {
    if (r.status() === 404 && new URL(r.url()).pathname.startsWith('/v1/tools/')) missing.push(new URL(r.url()).pathname);
  });
  await onboardWithKey(rig, page, API_KEY);
  mkdirSync(join(rig.home, 'src/tilde-app'), { recursive: true });
  await page.goto(`${rig.base}/app/`);
  await page.getByTestId('chat-title').filter({ hasText: 'Juno' }).waitFor();
});

after(async () => {
  await browser?.close();
  await rig?.stop();
});

const T = { timeout: 180_000 };

const it = shootingTest('sessions-', () => page);

/** `sessions-<name>-desktop.png` (1440x900) and `-phone.png` (390x844); the phone never scrolls sideways. */
async function shot(name) {
  mkdirSync(SHOTS, { recursive: true });
  await page.setViewportSize(DESKTOP);
  await page.waitForTimeout(150);
  await page.screenshot({ path: join(SHOTS, `sessions-${name}-desktop.png`) });
  await page.setViewportSize(PHONE);
  await page.waitForTimeout(150);
  await page.screenshot({ path: join(SHOTS, `sessions-${name}-phone.png`) });
  const wide = await page.evaluate(() => {
    const main = document.querySelector('main');
    return Math.max(document.documentElement.scrollWidth - window.innerWidth, main ? main.scrollWidth - main.clientWidth : 0);
  });
  await page.setViewportSize(DESKTOP);
  assert.equal(wide, 0, `${name}: the phone layout scrolls sideways`);
}

const threadOfUrl = () => decodeURIComponent(new URL(page.url()).pathname.split('/').pop());

async function reply(words, timeout = 90_000) {
  await page.getByTestId('assistant-text').filter({ hasText: words }).first().waitFor({ timeout });
}

async function send(text) {
  const box = page.getByTestId('composer');
  await box.fill(text);
  await box.press('Enter');
}

async function idle() {
  await page.getByTestId('thread-state').filter({ hasText: 'Idle' }).waitFor({ timeout: 60_000 });
}

async function deck() {
  await page.click('[data-nav=deck]');
  await page.getByTestId('new-session').waitFor();
}

/** A new session in `folder` from the Deck, with a first message. */
async function start(folder, text) {
  await deck();
  await page.getByTestId('new-session').click();
  await page.getByTestId('new-cwd').fill(folder);
  await page.getByTestId('new-text').fill(text);
  await page.getByTestId('new-start').click();
  await page.waitForURL(/\/app\/t\//);
}

// ---- item 7: starting and finding sessions ----

it('a project is made from the Deck, its folder typed from ~; a missing folder is said in the form', T, async () => {
  await deck();
  await page.getByTestId('new-project').click();
  await page.getByTestId('project-home').fill('~/no/such/folder');
  await page.getByTestId('project-name').fill('ghost');
  await page.getByTestId('project-create').click();
  const err = page.getByTestId('project-error');
  await err.waitFor();
  assert.match(await err.innerText(), /~\/no\/such\/folder/);
  assert.deepEqual(await rig.sock('projects.list'), [], 'nothing was made');

  await page.getByTestId('project-home').fill('~/src/tilde-app');
  await page.getByTestId('project-name').fill('tilde');
  await page.getByTestId('project-create').click();
  await page.getByTestId('new-project-form').waitFor({ state: 'detached' });
  const projects = await rig.sock('projects.list');
  assert.deepEqual(
    projects.map((p) => [p.name, p.home]),
    [['tilde', join(rig.home, 'src/tilde-app')]],
  );
  assert.ok(existsSync(join(rig.home, 'src/tilde-app/.vyre/project.json')));
});

it('a new session with a missing folder says so in the form, and no toast follows to the next screen', T, async () => {
  await deck();
  await page.getByTestId('new-session').click();
  await page.getByTestId('new-cwd').fill('~/not-here');
  await page.getByTestId('new-start').click();
  const err = page.getByTestId('new-error');
  await err.waitFor();
  assert.match(await err.innerText(), /~\/not-here/);
  assert.equal(await page.locator('.toast.error').count(), 0, 'said in the form, not in a toast');
  assert.match(new URL(page.url()).pathname, /\/app\/deck/);
  await shot('new-session-error');
  // Typing again clears it.
  await page.getByTestId('new-cwd').fill('~/src');
  assert.equal(await err.count(), 0);
});

it('the folder field suggests the projects\' and sessions\' folders, from ~', T, async () => {
  await deck();
  if (!(await page.getByTestId('new-session-form').count())) await page.getByTestId('new-session').click();
  const box = page.getByTestId('new-cwd');
  await box.fill('');
  await box.focus();
  const option = page.getByTestId('folder-option').filter({ hasText: '~/src/tilde-app' });
  await option.waitFor();
  assert.match(await option.innerText(), /tilde/, 'with its project');
  // The assistant's own folder is Vyre's, never offered.
  assert.ok((await page.getByTestId('folder-option').allInnerTexts()).every((t) => !t.includes('agents/juno')));
  await shot('new-session-folders');
  // Typing narrows; arrows and Enter pick.
  await box.fill('tilde');
  await waitFor('the list narrowed to the project\'s folder', async () => (await page.getByTestId('folder-option').allInnerTexts()).every((t) => t.includes('tilde')));
  await box.press('ArrowDown');
  await box.press('Enter');
  assert.equal(await box.inputValue(), '~/src/tilde-app');
  assert.equal(await page.getByTestId('new-session-project').inputValue(), 'tilde', 'the folder\'s project is chosen');
});

it('a new session is titled by its first message, opens with the composer focused, and asks for no missing thread', { ...T, skip: noClaude }, async () => {
  missing.length = 0;
  await page.getByTestId('new-text').fill('Plan the tilde release');
  await page.getByTestId('new-start').click();
  await page.waitForURL(/\/app\/t\//);
  await page.getByTestId('composer').waitFor();
  await waitFor('the composer to have the keyboard', () => page.evaluate(() => document.activeElement?.getAttribute('data-testid') === 'composer'));
  await reply('reply to [Plan the tilde release]');
  await page.getByTestId('chat-title').filter({ hasText: 'Plan the tilde release' }).waitFor();
  const info = await rig.sock('threads.get', { thread: threadOfUrl() });
  assert.equal(info.title, 'Plan the tilde release');
  assert.equal(info.cwd, join(rig.home, 'src/tilde-app'), '~ was read against the sessions\' HOME');
  // The header shows the folder from ~.
  assert.match(await page.getByTestId('chat-header').innerText(), /~\/src\/tilde-app/);
  assert.deepEqual(missing, [], 'no call for a thread that is not there (recall.thread)');
  await idle();
  await shot('chat');
});

it('a session is renamed from its header, and the Deck follows', { ...T, skip: noClaude }, async () => {
  const thread = threadOfUrl();
  await page.getByTestId('rename').click();
  const input = page.getByTestId('rename-input');
  await input.fill('Tilde 1.0');
  await input.press('Enter');
  await page.getByTestId('chat-title').filter({ hasText: 'Tilde 1.0' }).waitFor();
  const info = await rig.sock('threads.get', { thread });
  assert.equal(info.title, 'Tilde 1.0');
  assert.equal(info.renamed, true);
  await deck();
  await page.getByTestId('deck-entry').filter({ has: page.getByTestId('deck-title').filter({ hasText: 'Tilde 1.0' }) }).waitFor();
  await page.getByTestId('deck-entry').filter({ hasText: 'Tilde 1.0' }).locator('a.list-main').click();
  await page.getByTestId('chat-title').filter({ hasText: 'Tilde 1.0' }).waitFor();
});

it('a fork names its parent, in its header and in the Deck', { ...T, skip: noClaude }, async () => {
  const parent = threadOfUrl();
  await page.getByTestId('chat-header').getByRole('button', { name: 'Fork' }).click();
  await page.waitForURL((u) => !u.pathname.endsWith(parent));
  const child = threadOfUrl();
  const link = page.getByTestId('forked-from');
  await link.filter({ hasText: 'Tilde 1.0' }).waitFor();
  const info = await rig.sock('threads.get', { thread: child });
  assert.equal(info.forked_from, parent);
  // It opens on the history it was forked with, not blank.
  await page.getByTestId('user-text').filter({ hasText: 'Plan the tilde release' }).waitFor();
  await shot('fork');
  await deck();
  const entry = page.locator(`[data-testid=deck-entry][data-thread="${child}"]`);
  await entry.getByTestId('deck-fork').filter({ hasText: 'Tilde 1.0' }).waitFor({ timeout: 10_000 });
  assert.match(await entry.innerText(), /~\/src\/tilde-app/, 'the folder from ~');
  assert.doesNotMatch(await page.locator('.deck').innerText(), /agents\/juno/, 'no agent folder');
  await shot('deck');
  // Back to the parent from the fork's header.
  await entry.locator('a.list-main').click();
  await page.getByTestId('forked-from').click();
  await page.waitForURL((u) => u.pathname.endsWith(parent));
});

// ---- item 8: asks ----

it('a destructive command is flagged, "always" says what it would write, and r denies with a reason Claude is told', { ...T, skip: noClaude }, async () => {
  await start('~/src/tilde-app', 'RUNBASH rm -rf old-build');
  const card = page.getByTestId('ask');
  await card.waitFor({ timeout: 90_000 });
  assert.match(await card.getByTestId('ask-destructive').innerText(), /deletes/);
  assert.equal(await card.getByTestId('ask-input').innerText(), 'rm -rf old-build');
  assert.match(await card.getByTestId('ask-rule').innerText(), /Allows Bash\(rm -rf old-build\)/);
  // Nothing typed in a field: the keys are the card's.
  await page.getByTestId('composer').blur();
  await shot('ask-destructive');
  await page.keyboard.press('r');
  const why = card.getByTestId('ask-reason');
  await waitFor('the reason box to have the keyboard', () => why.evaluate((e) => e === document.activeElement));
  await why.fill('keep old-build, move it to attic/ instead');
  await why.press('Enter');
  // Answered, the card folds to one line with what Claude was told.
  const folded = page.locator('[data-testid=ask][data-outcome=deny]');
  await folded.waitFor({ timeout: 30_000 });
  assert.match(await folded.getByTestId('ask-outcome').innerText(), /Denied/);
  assert.match(await folded.getByTestId('ask-told').innerText(), /move it to attic/);
  // The CLI hands the reason to the model as the tool's result; the fake API quotes it back.
  await reply('move it to attic');
  await idle();
  // After a reload (the thread's timeline) the card is the same: folded, and opened it still
  // says why the command deserved a second look and what Claude was told.
  await page.reload();
  await folded.waitFor();
  assert.match(await folded.getByTestId('ask-told').innerText(), /move it to attic/);
  await folded.getByTestId('ask-expand').click();
  await page.getByTestId('ask-collapse').waitFor();
  assert.match(await page.getByTestId('ask-destructive').innerText(), /deletes/);
  await shot('ask-denied');
});

it('y allows an ask from the keyboard, and a answers "always" with the rule it showed', { ...T, skip: noClaude }, async () => {
  await send('RUNBASH touch by-key.txt');
  const open = page.locator('[data-testid=ask]:not([data-outcome])');
  await open.waitFor({ timeout: 90_000 });
  await page.getByTestId('composer').blur();
  // Keys typed in a field stay the field's.
  await page.getByTestId('composer').focus();
  await page.keyboard.press('y');
  assert.equal(await page.getByTestId('composer').inputValue(), 'y');
  await page.getByTestId('composer').fill('');
  await page.getByTestId('composer').blur();
  await page.keyboard.press('y');
  await page.locator('[data-testid=ask][data-outcome=allow]').waitFor({ timeout: 30_000 });
  await waitFor('the allowed command to run', () => existsSync(join(rig.home, 'src/tilde-app/by-key.txt')), 60_000);
  await idle();

  await send('RUNBASH touch always.txt');
  await open.waitFor({ timeout: 90_000 });
  // Claude Code suggests a rule for a Bash call; the card says it before it is written.
  const said = await open.getByTestId('ask-rule').innerText();
  assert.match(said, /Bash\(touch always\.txt\)/);
  await page.getByTestId('composer').blur();
  await page.keyboard.press('a');
  await page.locator('[data-testid=ask][data-outcome=always]').waitFor({ timeout: 30_000 });
  await waitFor('the allowed command to run', () => existsSync(join(rig.home, 'src/tilde-app/always.txt')), 60_000);
  const settings = join(rig.home, 'src/tilde-app/.claude/settings.local.json');
  assert.match(said, /settings\.local\.json/);
  await waitFor('the rule to be written', () => existsSync(settings), 30_000);
  const rules = JSON.parse(readFileSync(settings, 'utf8')).permissions?.allow ?? [];
  assert.ok(rules.includes('Bash(touch always.txt)'), `what was written (${rules}) is what the card said (${said})`);
  await idle();
  // Claude Code 2.1.328 suggests Accept edits with a file command too, and the card said so:
  // the header shows the mode the session switched to.
  assert.match(said, /switches to the Accept edits mode/);
  const on = (m) => page.getByTestId('chat-header').locator(`[data-mode=${m}]`).first().getAttribute('aria-checked');
  await waitFor('the header to say Accept edits', async () => (await on('acceptEdits')) === 'true', 10_000);
});

it('an Edit shows its diff in the card', { ...T, skip: noClaude }, async () => {
  // A session of its own: "always" above may have switched the last one to Accept edits.
  const file = join(rig.home, 'src/tilde-app/notes.md');
  writeFileSync(file, 'one\ntwo\nthree\n');
  await start('~/src/tilde-app', 'a session for an edit');
  await reply('reply to [a session for an edit]');
  await idle();
  // Claude Code edits only a file it has read.
  await send(`CALLTOOL Read ${JSON.stringify({ file_path: file })}`);
  await reply('two', 90_000);
  await idle();
  await send(`CALLTOOL Edit ${JSON.stringify({ file_path: file, old_string: 'two', new_string: 'TWO and a half' })}`);
  const card = page.locator('[data-testid=ask]:not([data-outcome])');
  await card.waitFor({ timeout: 90_000 });
  const diff = card.getByTestId('diff');
  await diff.waitFor();
  const text = await diff.innerText();
  assert.match(text, /notes\.md/);
  assert.match(text, /two/);
  assert.match(text, /TWO and a half/);
  assert.equal(await diff.getByTestId('diff-added').innerText(), '+1');
  await page.getByTestId('composer').blur();
  await shot('ask-edit');
  await page.keyboard.press('n');
  await page.locator('[data-testid=ask][data-outcome=deny]').last().waitFor({ timeout: 30_000 });
  assert.equal(readFileSync(file, 'utf8'), 'one\ntwo\nthree\n', 'the denied edit was not made');
  await idle();
});

it('a question is answered with 1-2-3 and y', { ...T, skip: noClaude }, async () => {
  await send('ASKQUESTION please');
  const card = page.getByTestId('ask').filter({ hasText: 'Which color do you prefer?' });
  await card.waitFor({ timeout: 90_000 });
  await page.getByTestId('composer').blur();
  await page.keyboard.press('2');
  assert.equal(await card.getByRole('radio', { name: /Red/ }).getAttribute('aria-checked'), 'true');
  await shot('ask-question');
  await page.keyboard.press('y');
  const folded = page.locator('[data-testid=ask][data-outcome=allow]').filter({ hasText: 'Red' });
  await folded.waitFor({ timeout: 30_000 });
  assert.match(await folded.innerText(), /Answered/);
  await idle();
});

it('the mode in the header follows Claude Code into plan mode and out, with no click', { ...T, skip: noClaude }, async () => {
  // The model switches the session's mode itself: EnterPlanMode, then an approved ExitPlanMode.
  const on = (m) => page.getByTestId('chat-header').locator(`[data-mode=${m}]`).first().getAttribute('aria-checked');
  assert.equal(await on('default'), 'true');
  await send('CALLTOOL EnterPlanMode {}');
  await waitFor('the header to say Plan', async () => (await on('plan')) === 'true', 90_000);
  await idle();
  // The same after a reload: the thread's mode is the one the session is in.
  await page.reload();
  await page.getByTestId('chat-header').waitFor();
  await waitFor('the reloaded header to say Plan', async () => (await on('plan')) === 'true', 10_000);
  await send(`CALLTOOL ExitPlanMode ${JSON.stringify({ plan: 'write it' })}`);
  const card = page.locator('[data-testid=ask]:not([data-outcome])');
  await card.waitFor({ timeout: 90_000 });
  await card.getByTestId('allow').click();
  await waitFor('the header to say Default', async () => (await on('default')) === 'true', 90_000);
  await idle();
});

// ---- item 9: the small things ----

it('the model menu closes on Esc and on a click outside', { ...T, skip: noClaude }, async () => {
  const chip = page.getByTestId('model-chip');
  const menu = page.getByTestId('model-menu');
  await chip.click();
  await menu.waitFor();
  await page.keyboard.press('Escape');
  await menu.waitFor({ state: 'detached' });
  assert.equal(await page.locator('.notice', { hasText: 'Interrupted' }).count(), 0, 'Esc closed the menu and interrupted nothing');
  await chip.click();
  await menu.waitFor();
  await page.getByTestId('messages').click({ position: { x: 20, y: 20 } });
  await menu.waitFor({ state: 'detached' });
});

it('a session has one state badge, and End session is told apart from ■', { ...T, skip: noClaude }, async () => {
  const header = page.getByTestId('chat-header');
  assert.equal(await header.locator('.badge.state').count(), 1);
  assert.equal(await page.getByTestId('thread-state').innerText(), 'Idle');
  assert.equal(await page.getByTestId('stop').innerText(), 'End session');
  assert.match(await page.getByTestId('stop').getAttribute('title'), /only stops the running turn/);
  await send('SLOWLY three');
  await page.getByTestId('assistant-text').filter({ hasText: 'slow2' }).waitFor({ timeout: 90_000 });
  assert.equal(await page.getByTestId('interrupt').getAttribute('aria-label'), 'Stop this turn');
  assert.equal(await header.locator('.badge.state').count(), 1, 'still one badge while it works');
  await page.getByTestId('interrupt').click();
  await page.locator('.notice', { hasText: 'Interrupted.' }).waitFor({ timeout: 30_000 });
  await idle();
  // The Deck: one badge a session too.
  await deck();
  for (const e of await page.getByTestId('deck-entry').all()) assert.ok((await e.getByTestId('deck-state').count()) <= 1);
});

it('a rewind asks in the page, not with confirm(); Cancel keeps everything', { ...T, skip: noClaude }, async () => {
  const dialogs = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await start('~/src/tilde-app', 'alpha');
  await reply('reply to [alpha]');
  await idle();
  await send('beta');
  await reply('reply to [beta]');
  await idle();
  const alpha = page.locator('.msg.user', { hasText: 'alpha' });
  await alpha.hover();
  await alpha.getByTestId('rewind').click();
  const ask = page.getByTestId('confirm');
  await ask.getByText('Rewind to this message?').waitFor();
  await shot('rewind-confirm');
  await page.getByTestId('confirm-cancel').click();
  await page.waitForTimeout(300);
  assert.equal(await page.getByTestId('assistant-text').filter({ hasText: 'reply to [beta]' }).count(), 1, 'Cancel kept it');
  await alpha.hover();
  await alpha.getByTestId('rewind').click();
  await page.getByTestId('confirm-ok').click();
  await page.locator('.notice', { hasText: 'Rewound' }).waitFor({ timeout: 30_000 });
  assert.equal(await page.getByTestId('assistant-text').filter({ hasText: 'reply to [beta]' }).count(), 0);
  assert.deepEqual(dialogs, [], 'no browser dialog');
});

it('on a phone the chat header is one line, and Rewind and Fork show on the tapped bubble only', { ...T, skip: noClaude }, async () => {
  await page.setViewportSize(PHONE);
  try {
    await page.evaluate(() => document.activeElement?.blur());
    await page.waitForTimeout(150);
    const h = await page.getByTestId('chat-header').evaluate((e) => e.getBoundingClientRect().height);
    assert.ok(h <= 80, `the header is ${h}px high`);
    const rewinds = page.getByTestId('rewind');
    const visible = async () => {
      let n = 0;
      for (const r of await rewinds.all()) if (await r.isVisible()) n++;
      return n;
    };
    assert.equal(await visible(), 0, 'no Rewind on any bubble until one is tapped');
    await page.locator('.msg.user', { hasText: 'alpha' }).click();
    assert.equal(await visible(), 1);
    // The rest of the header's controls are under ⋯.
    await page.getByTestId('more').click();
    await page.getByTestId('more-menu').waitFor();
    await page.screenshot({ path: join(SHOTS, 'sessions-phone-more.png') });
    await page.keyboard.press('Escape');
    await page.getByTestId('more-menu').waitFor({ state: 'detached' });
  } finally {
    await page.setViewportSize(DESKTOP);
  }
});

it('an unknown thread address says not found, not an empty chat', T, async () => {
  await page.goto(`${rig.base}/app/t/00000000-0000-4000-8000-0000000000ff`);
  await page.getByTestId('thread-missing').waitFor();
  assert.equal(await page.getByTestId('composer').count(), 0);
  await shot('thread-missing');
});

it('an agent\'s own folder is not shown in its header', { ...T, skip: noClaude }, async () => {
  await page.goto(`${rig.base}/app/`);
  await page.getByTestId('chat-title').filter({ hasText: 'Juno' }).waitFor();
  const text = await page.getByTestId('chat-header').innerText();
  assert.doesNotMatch(text, /agents\/juno/);
  // Vyre's greeting prompt (marked internal) titles nothing: only a person's words do.
  const juno = (await rig.sock('agents.list')).find((a) => a.name === 'juno');
  assert.equal((await rig.sock('threads.get', { thread: juno.thread })).title ?? null, null);
});

it('an API key that is not shaped like one is refused where it was typed', T, async () => {
  await page.click('[data-nav=settings]');
  await page.getByTestId('settings-step-claude').click();
  await page.getByTestId('ob-mode-api-key').check();
  await page.getByTestId('ob-secret').fill('abc');
  await page.getByTestId('ob-claude-save').click();
  const err = page.getByTestId('ob-claude-error');
  await err.waitFor();
  assert.match(await err.innerText(), /key/i);
  assert.equal(await page.getByTestId('ob-claude-saved').count(), 0);
  await shot('settings-bad-key');
});

it('the history step\'s Continue marks it done and closes it', T, async () => {
  assert.equal((await rig.sock('onboarding.state')).steps.history, 'open');
  await page.click('[data-nav=deck]');
  await page.click('[data-nav=settings]');
  await page.getByTestId('settings-step-history').click();
  await page.getByTestId('ob-continue').click();
  await page.getByTestId('settings-step-history').waitFor();
  assert.equal((await rig.sock('onboarding.state')).steps.history, 'done');
});

it('Lumen in a browser does not promise that Esc hides it', T, async () => {
  await page.setViewportSize({ width: 420, height: 640 });
  try {
    await page.goto(`${rig.base}/app/lumen`);
    const hint = page.getByTestId('lumen-hint');
    await hint.waitFor();
    assert.doesNotMatch(await hint.innerText(), /Esc/);
  } finally {
    await page.setViewportSize(DESKTOP);
  }
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});
