// A session in a git worktree of its own (issue 25, ADR 0031) in the app, in a real browser
// against a real vyred and the pinned Claude Code CLI on the fake Messages API: New session's
// "Work in a worktree" (a bad branch name and a folder outside a repository said in the form);
// the session commits on its branch (its Bash call approved in the chat, as the person would);
// the branch's badge on the Deck and in the thread's header; its panel merges the branch into
// the repository's checkout; a removal with a file not committed is refused in vyred's words,
// and goes once the branch's name is typed: the badge then says "worktree removed", and the
// composer takes no more words (the session cannot go on) but offers a New session in the
// repository's folder. Last, the
// chat's rewind puts back the files the session changed, and says so when one changed again
// since. The tests share one vyred, one browser and one repository, and run in order.
// Screenshots: screenshots/worktree-<name>-{desktop,phone}.png (1280x800, 390x844).

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_KEY, Rig, claudeMissing, waitFor } from './lib/rig.mjs';
import { PHONE, DESKTOP, openBrowser, shootingTest, shot } from './lib/browser.mjs';
import { onboardToChat } from './lib/onboard.mjs';

const noClaude = claudeMissing();
let rig;
let browser;
let page;
/** The repository (its main checkout), and the worktree thread. */
let repo;
let thread;
let branch;
let worktree;

const git = (dir, ...args) => execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', env: { ...process.env, HOME: rig.home } }).trim();

before(async () => {
  if (noClaude) return;
  rig = await Rig.start('worktree', { claude: true });
  repo = join(rig.work, 'app');
  mkdirSync(repo, { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'a.txt'), 'one\n');
  git(repo, 'add', 'a.txt');
  git(repo, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'one');
  mkdirSync(join(rig.work, 'notes'), { recursive: true });

  browser = await openBrowser();
  page = browser.page;
  await onboardToChat(rig, page, API_KEY);
});

after(async () => {
  await browser?.close();
  await rig?.stop();
});

const T = { timeout: 240_000, skip: noClaude };

const it = shootingTest('worktree-', () => page);

async function stateIs(t, want) {
  await waitFor(`the session to be ${want}`, async () => (await rig.sock('threads.get', { thread: t })).state === want, 90_000, 200);
}

async function send(text) {
  const box = page.getByTestId('composer');
  await box.fill(text);
  await box.press('Enter');
}

async function approve() {
  const ask = page.locator('[data-testid=ask]:not([data-outcome])');
  await ask.waitFor({ timeout: 90_000 });
  await ask.getByTestId('allow').click();
}

async function newSessionForm() {
  await page.click('[data-nav=deck]');
  await page.getByTestId('new-session').click();
  await page.getByTestId('new-session-form').waitFor();
}

it('New session says in words what a worktree cannot be: a bad branch name, a folder outside a repository', T, async () => {
  await newSessionForm();
  const toggle = page.getByTestId('new-worktree');
  assert.equal(await page.getByTestId('new-branch').count(), 0, 'no branch field until it is asked for');
  await toggle.check();
  const field = page.getByTestId('new-branch');
  assert.equal(await field.getAttribute('placeholder'), 'vyre/… (named for you)');
  await page.getByTestId('new-cwd').fill(repo);
  await page.getByTestId('new-text').fill('fix the readme');
  await page.getByTestId('new-cwd').blur();
  await shot(page, 'worktree-new-session');

  // A name vyred would refuse is said as it is typed; Start waits.
  await field.fill('has space');
  assert.match(await page.getByTestId('new-branch-error').innerText(), /only letters, digits/);
  assert.equal(await page.getByTestId('new-start').isDisabled(), true);
  await shot(page, 'worktree-new-branch-error');
  await field.fill('');
  assert.equal(await page.getByTestId('new-branch-error').count(), 0);

  // A folder in no repository: vyred's words, and what to do, in the form.
  await page.getByTestId('new-cwd').fill(join(rig.work, 'notes'));
  await page.getByTestId('new-start').click();
  const err = page.getByTestId('new-error');
  await err.waitFor();
  assert.match(await err.innerText(), /is not in a git repository.*turn off “Work in a worktree”/);
  assert.equal(await page.locator('.toast.error').count(), 0, 'said in the form, not in a toast');
  assert.match(new URL(page.url()).pathname, /\/app\/deck/);
  await shot(page, 'worktree-new-not-a-repo');
});

it('a worktree session starts on a branch Vyre names; the Deck and the header show the branch', T, async () => {
  await page.getByTestId('new-cwd').fill(repo);
  await page.getByTestId('new-text').fill('fix the readme');
  await page.getByTestId('new-start').click();
  await page.waitForURL(/\/app\/t\//);
  thread = decodeURIComponent(new URL(page.url()).pathname.split('/').pop());
  const d = await rig.sock('threads.get', { thread });
  worktree = d.worktree;
  assert.ok(worktree, 'the thread has a worktree');
  branch = worktree.branch;
  assert.match(branch, /^vyre\/fix-the-readme-[0-9a-f]{4}$/);
  assert.equal(worktree.repo, repo);
  assert.equal(worktree.path, join(rig.work, '.vyre-worktrees', 'app', branch.replace('/', '-')));
  // At the same place within it as the folder picked in the checkout: its top (vyred writes
  // that place as the worktree's path and a slash).
  assert.equal(d.cwd.replace(/\/$/, ''), worktree.path, 'the session runs in the worktree');
  assert.equal(readFileSync(join(worktree.path, 'a.txt'), 'utf8'), 'one\n');

  const badge = page.getByTestId('chat-header').getByTestId('worktree-badge');
  await badge.waitFor();
  assert.equal(await badge.innerText(), branch);
  assert.equal(await badge.getAttribute('data-state'), 'open');
  await page.getByTestId('assistant-text').filter({ hasText: 'reply to [fix the readme]' }).waitFor({ timeout: 90_000 });
  await stateIs(thread, 'idle');
  // The timeline says where it works.
  await page.locator('.notice', { hasText: `Working in a worktree on branch ${branch}` }).waitFor();

  // The session commits on its branch: its Bash call approved as the person would.
  await send('RUNBASH echo two > a.txt && git -c user.name=s -c user.email=s@example.com commit -qam two');
  await approve();
  await waitFor('the session\'s commit', () => git(worktree.path, 'log', '-1', '--format=%s') === 'two', 60_000, 300);
  await stateIs(thread, 'idle');
  assert.equal(readFileSync(join(repo, 'a.txt'), 'utf8'), 'one\n', 'the checkout is as it was');
  await page.getByTestId('composer').blur();
  await shot(page, 'worktree-badge');
  await page.setViewportSize(PHONE);
  assert.ok(await badge.isVisible(), 'the badge is in the phone header');
  await page.setViewportSize(DESKTOP);

  // The Deck: the session's row says its branch.
  await page.click('[data-nav=deck]');
  const row = page.locator(`[data-testid=deck-entry][data-thread="${thread}"]`);
  await row.getByTestId('deck-branch').waitFor();
  assert.equal(await row.getByTestId('deck-branch').innerText(), branch);
  await shot(page, 'worktree-deck');
  await page.goto(`${rig.base}/app/t/${encodeURIComponent(thread)}`);
  await badge.waitFor();
});

it('the panel says where the worktree is and merges its branch into the checkout\'s', T, async () => {
  const badge = page.getByTestId('chat-header').getByTestId('worktree-badge');
  await badge.click();
  const panel = page.getByTestId('worktree-panel');
  await panel.waitFor();
  assert.equal(await panel.getByTestId('worktree-branch').innerText(), branch);
  assert.equal(await panel.getByTestId('worktree-path').innerText(), worktree.path);
  assert.equal(await panel.getByTestId('worktree-state').innerText(), 'not merged');
  assert.match(await panel.innerText(), new RegExp(worktree.base.slice(0, 7)));
  assert.equal(await panel.getByTestId('worktree-filters').count(), 0, 'no filter was off');
  await shot(page, 'worktree-panel');

  await panel.getByTestId('worktree-merge').click();
  const said = panel.getByTestId('worktree-said');
  await said.waitFor();
  const head = git(repo, 'rev-parse', 'HEAD');
  assert.equal(await said.innerText(), `Merged ${branch} into main (fast-forward); main is at ${head.slice(0, 7)} now.`);
  assert.equal(readFileSync(join(repo, 'a.txt'), 'utf8'), 'two\n', 'the checkout has the session\'s work');
  assert.equal(git(repo, 'log', '-1', '--format=%s'), 'two');
  assert.equal(await panel.getByTestId('worktree-state').innerText(), 'merged');
  assert.equal(await badge.getAttribute('data-state'), 'merged');
  await page.locator('.notice', { hasText: `Merged ${branch} into main (fast-forward).` }).waitFor();
  assert.equal((await rig.sock('threads.get', { thread })).worktree.merged_to, head);

  // Again: nothing left to merge, said in the panel.
  await panel.getByTestId('worktree-merge').click();
  await said.filter({ hasText: 'Nothing to merge' }).waitFor();
  assert.equal(await panel.getByTestId('worktree-merge-commit').count(), 0);
  await shot(page, 'worktree-merged');
  // Esc closes it.
  await page.keyboard.press('Escape');
  await panel.waitFor({ state: 'detached' });
});

it('a removal with a file not committed is refused in words, and goes once the branch is typed', T, async () => {
  writeFileSync(join(worktree.path, 'b.txt'), 'not committed\n');
  const badge = page.getByTestId('chat-header').getByTestId('worktree-badge');
  await badge.click();
  const panel = page.getByTestId('worktree-panel');
  await panel.getByTestId('worktree-remove').click();
  await panel.getByTestId('worktree-remove-ask').waitFor();
  await panel.getByTestId('worktree-remove-go').click();
  const unsaved = panel.getByTestId('worktree-unsaved');
  await unsaved.waitFor();
  assert.match(await unsaved.innerText(), /^The worktree holds 1 file\(s\) not committed \(b\.txt\)/);
  assert.ok(existsSync(join(worktree.path, 'b.txt')), 'nothing was touched');
  const confirm = panel.getByTestId('worktree-remove-confirm');
  assert.equal(await confirm.isDisabled(), true, 'not before the branch is typed');
  const typed = panel.getByTestId('worktree-confirm');
  assert.equal(await typed.evaluate((e) => e === document.activeElement), true, 'the field has the focus');
  await typed.fill(branch.toUpperCase());
  assert.equal(await confirm.isDisabled(), true, 'a wrong name does not do');
  await typed.fill(branch);
  assert.equal(await confirm.isDisabled(), false);
  await shot(page, 'worktree-confirm');

  await confirm.click();
  const said = panel.getByTestId('worktree-said');
  await said.filter({ hasText: 'Removed the worktree' }).waitFor({ timeout: 30_000 });
  assert.equal(await said.innerText(), `Removed the worktree and its branch ${branch}. Given up: 1 file not committed.`);
  assert.equal(existsSync(worktree.path), false, 'the worktree\'s folder is gone');
  assert.equal(git(repo, 'branch', '--list', branch), '', 'and its branch (merged)');
  assert.equal(readFileSync(join(repo, 'a.txt'), 'utf8'), 'two\n', 'the checkout keeps the merged work');
  assert.equal(await panel.getByTestId('worktree-state').innerText(), 'removed');
  assert.equal(await panel.getByTestId('worktree-merge').count(), 0, 'nothing left to do');
  assert.equal(await badge.innerText(), 'worktree removed');
  await page.locator('.notice', { hasText: 'The worktree was removed, with its branch.' }).waitFor();
  assert.ok((await rig.sock('threads.get', { thread })).worktree.removed_at);
  // The session cannot go on in a folder that is gone: the composer says so, as the removal's
  // event arrives, and takes no words.
  const gone = page.getByTestId('worktree-gone');
  await gone.waitFor();
  assert.equal(await page.getByTestId('composer').isDisabled(), true);
  assert.equal(await page.getByTestId('send').isDisabled(), true);
  await shot(page, 'worktree-removed');
  await page.keyboard.press('Escape');

  // A reload says the same (from threads.get); the Deck's row has no branch any more.
  await page.reload();
  await page.getByTestId('chat-header').getByTestId('worktree-badge').filter({ hasText: 'worktree removed' }).waitFor();
  await gone.waitFor();
  assert.equal(await gone.locator('span').innerText(), 'The worktree was removed, so this session cannot go on.');
  assert.equal(await page.getByTestId('composer').isDisabled(), true);
  assert.equal(await page.getByTestId('composer').getAttribute('placeholder'), 'This session cannot go on');
  await page.getByTestId('notice').filter({ hasText: 'cannot go on' }).waitFor();
  await shot(page, 'worktree-gone');
  // Comments on its changes are kept, not sent: there is no session to send them to.
  await page.getByTestId('changes-open').click();
  const changes = page.getByTestId('changes');
  await changes.locator('tr[data-kind="ins"]').first().click();
  await changes.getByTestId('comment-text').fill('good change');
  await changes.getByTestId('comment-add').click();
  assert.equal(await changes.getByTestId('comments-send').isDisabled(), true);
  assert.equal(await changes.getByTestId('comments-cannot').innerText(), 'The worktree was removed, so this session cannot go on. The comments are kept.');
  await shot(page, 'worktree-gone-comments');
  await changes.getByTestId('comments-discard').click();
  await page.keyboard.press('Escape');
  await changes.waitFor({ state: 'detached' });
  // New session: the Deck's form, in the repository's own folder.
  await gone.getByTestId('worktree-new-session').click();
  const form = page.getByTestId('new-session-form');
  await form.waitFor();
  assert.equal(await page.evaluate(() => location.pathname), '/app/deck');
  assert.equal(await form.getByTestId('new-cwd').inputValue(), repo);
  await shot(page, 'worktree-new-from-gone');
  const row = page.locator(`[data-testid=deck-entry][data-thread="${thread}"]`);
  await row.waitFor();
  assert.equal(await row.getByTestId('deck-branch').count(), 0);
  // The Deck's own New session button starts from nothing again.
  await page.getByTestId('new-session').click();
  await form.waitFor({ state: 'detached' });
  await page.getByTestId('new-session').click();
  assert.equal(await form.getByTestId('new-cwd').inputValue(), '');
  await page.getByTestId('new-session').click();
  assert.deepEqual(browser.errors, []);
});

it('a rewind puts back the files the session changed, when asked; one changed again since is said', T, async () => {
  const folder = join(rig.work, 'notes');
  const file = join(folder, 'n.txt');
  writeFileSync(file, 'first\n');
  const { thread: t } = await rig.sock('threads.start', { cwd: folder, text: 'a plain session' });
  await page.goto(`${rig.base}/app/t/${encodeURIComponent(t)}`);
  await page.getByTestId('assistant-text').filter({ hasText: 'reply to [a plain session]' }).waitFor({ timeout: 90_000 });
  await stateIs(t, 'idle');
  assert.equal(await page.getByTestId('worktree-badge').count(), 0, 'no worktree, no badge');
  await send('RUNBASH echo second > n.txt');
  await approve();
  await waitFor('the session\'s change', () => readFileSync(file, 'utf8') === 'second\n', 60_000, 200);
  await stateIs(t, 'idle');
  await page.getByTestId('change-row').waitFor({ timeout: 30_000 });

  // The person changes the file again: putting it back would lose that, so nothing is done.
  writeFileSync(file, 'third\n');
  const msg = page.locator('.msg.user', { hasText: 'RUNBASH echo second' });
  await msg.hover();
  await msg.getByTestId('rewind').click();
  const dialog = page.getByTestId('confirm');
  await dialog.getByText('Rewind to this message?').waitFor();
  const check = dialog.getByTestId('confirm-check');
  assert.equal(await check.isChecked(), false, 'the files only when asked');
  assert.match(await dialog.innerText(), /Also put back the files changed since \(1 file\)/);
  await check.check();
  await dialog.getByTestId('confirm-check-note').waitFor();
  await shot(page, 'worktree-rewind-files');
  await dialog.getByTestId('confirm-ok').click();
  await dialog.getByText('The files were not put back').waitFor();
  assert.match(await dialog.getByTestId('confirm-warning').innerText(), /Nothing was rewound: n\.txt changed again/);
  await shot(page, 'worktree-rewind-refused');
  await dialog.getByTestId('confirm-cancel').click();
  assert.equal(readFileSync(file, 'utf8'), 'third\n', 'the person\'s change stays');
  assert.equal(await page.getByTestId('tool-row').filter({ hasText: 'echo second' }).count(), 1, 'nothing was rewound');

  // As the session left it: the rewind puts the file back as it was before that turn.
  writeFileSync(file, 'second\n');
  await msg.hover();
  await msg.getByTestId('rewind').click();
  await dialog.getByTestId('confirm-check').check();
  await dialog.getByTestId('confirm-ok').click();
  await waitFor('the file put back', () => readFileSync(file, 'utf8') === 'first\n', 30_000, 200);
  await page.locator('.notice', { hasText: 'Rewound' }).waitFor({ timeout: 30_000 });
  await page.getByTestId('tool-row').filter({ hasText: 'echo second' }).waitFor({ state: 'detached' });
  assert.deepEqual(browser.errors, []);
});
