// File paths in a session's answer (inline code) open a preview over the chat, in Chromium
// against a real vyred and the pinned Claude Code CLI on the fake Messages API: a relative path
// is read from the session's folder, `:42` marks its line, a folder opens and a file in it, the
// file downloads, a path outside the roots shows vyred's refusal, and Esc closes the preview
// without interrupting the turn. The tests share one vyred, one session and one browser.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_KEY, Rig, claudeMissing } from './lib/rig.mjs';
import { openBrowser, shot, shootingTest } from './lib/browser.mjs';
import { onboardWithKey } from './lib/onboard.mjs';

const noClaude = claudeMissing();
const TODO = Array.from({ length: 80 }, (_, i) => `line ${i + 1} of the todo`).join('\n') + '\n';
/** The fake API answers `reply to [<prompt>]`: the prompt's inline code is the answer's. */
const PROMPT = 'look at `notes/todo.txt:42`, `./notes` and `/etc/hosts`';
/** A one-page PDF (200x100 points, a blue rectangle), written by hand. */
function tinyPdf() {
  const content = '0 0 1 rg 20 20 160 60 re f';
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
  ];
  let out = '%PDF-1.4\n';
  const offsets = objects.map((o, i) => {
    const at = out.length;
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
    return at;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) out += `${String(o).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return out;
}
let rig;
let browser;
let page;
let thread;

before(async () => {
  rig = await Rig.start('file-links', { claude: !noClaude });
  mkdirSync(join(rig.work, 'notes'), { recursive: true });
  writeFileSync(join(rig.work, 'notes', 'todo.txt'), TODO);
  writeFileSync(join(rig.work, 'notes', 'done.txt'), 'nothing yet\n');
  writeFileSync(join(rig.work, 'notes', 'paper.pdf'), tinyPdf(), 'latin1');
  // The session's folder is a project's: inside the roots files may read.
  await rig.sock('projects.create', { name: 'notes', home: rig.work });
  browser = await openBrowser();
  page = browser.page;
  await onboardWithKey(rig, page, API_KEY);
});

after(async () => {
  await browser?.close();
  await rig?.stop();
});

const T = { timeout: 180_000 };

const it = shootingTest('file-links-', () => page);

async function reply(words, timeout = 90_000) {
  await page.getByTestId('assistant-text').filter({ hasText: words }).first().waitFor({ timeout });
}

async function idle() {
  await page.getByTestId('thread-state').filter({ hasText: 'Idle' }).waitFor({ timeout: 60_000 });
}

/** The answer's link to `path`, as the answer wrote it. */
function link(path) {
  return page.getByTestId('assistant-text').filter({ hasText: 'reply to [look at' }).getByTestId('file-link').filter({ hasText: path });
}

const dialog = () => page.getByTestId('file-dialog');
const preview = () => dialog().getByTestId('files-preview');

it('a file an answer names opens over the chat, read from the session\'s folder, at its line', { ...T, skip: noClaude }, async () => {
  ({ thread } = await rig.sock('threads.start', { cwd: rig.work, text: PROMPT }));
  await page.goto(`${rig.base}/app/t/${thread}`);
  await reply('reply to [look at');
  await idle();
  const answer = page.getByTestId('assistant-text').filter({ hasText: 'reply to [look at' });
  // Only the answer's inline code that names a path is a link, and the person's words are not.
  assert.deepEqual(await answer.getByTestId('file-link').allInnerTexts(), ['notes/todo.txt:42', './notes', '/etc/hosts']);
  assert.equal(await page.getByTestId('user-text').getByTestId('file-link').count(), 0);
  assert.equal(await link('notes/todo.txt:42').getAttribute('aria-label'), 'Preview notes/todo.txt:42');

  await link('notes/todo.txt:42').click();
  await preview().waitFor();
  await waitForKind('text');
  assert.ok(await dialog().evaluate((d) => d.open), 'the dialog is open');
  assert.equal(new URL(page.url()).pathname, `/app/t/${thread}`, 'the chat stays where it was');
  assert.equal(await preview().locator('strong').innerText(), join(rig.work, 'notes/todo.txt'));
  const text = await preview().getByTestId('files-text').innerText();
  assert.match(text, /^1\s*line 1 of the todo$/m);
  assert.match(text, /^80\s*line 80 of the todo$/m);
  // Line 42 is marked, and scrolled to.
  const marked = preview().locator('.mark');
  assert.equal(await marked.count(), 1);
  assert.equal(await marked.getAttribute('data-line'), '42');
  assert.match(await marked.innerText(), /line 42 of the todo/);
  assert.ok(await marked.evaluate((el) => {
    const box = el.getBoundingClientRect();
    const pre = el.closest('pre').getBoundingClientRect();
    return box.top >= pre.top && box.bottom <= pre.bottom;
  }), 'line 42 is in view');
  await shot(page, 'chat-file-preview');

  await preview().getByTestId('files-preview-close').click();
  await waitForClosed();
});

it('a folder it names opens, then a file in it, which downloads; a press beside closes it', { ...T, skip: noClaude }, async () => {
  await link('./notes').click();
  await waitForKind('folder');
  assert.equal(await preview().locator('strong').innerText(), join(rig.work, 'notes'));
  assert.deepEqual((await preview().locator('li').allInnerTexts()).sort(), ['done.txt', 'paper.pdf', 'todo.txt']);
  // A PDF shows its first page, drawn on this machine in the jail (the tests' machine has
  // pdftoppm and bubblewrap; without them the preview says why there is no picture).
  await preview().getByRole('button', { name: 'paper.pdf' }).click();
  await waitForKind('image');
  assert.equal(await preview().getByTestId('files-thumbnail').innerText(), 'The first page of the PDF: download it for the whole file.');
  const size = await preview().getByTestId('files-image').evaluate((img) => [img.naturalWidth, img.naturalHeight]);
  assert.deepEqual(size, [800, 400]);
  await preview().getByTestId('files-preview-close').click();
  await waitForClosed();
  await link('./notes').click();
  await waitForKind('folder');
  await preview().getByRole('button', { name: 'todo.txt' }).click();
  await waitForKind('text');
  assert.equal(await preview().locator('.mark').count(), 0, 'no line is marked in a file opened from the folder');
  const [download] = await Promise.all([page.waitForEvent('download'), preview().getByTestId('files-preview-download').click()]);
  assert.equal(download.suggestedFilename(), 'todo.txt');
  assert.equal(readFileSync(await download.path(), 'utf8'), TODO);
  // A press beside the preview closes it.
  await page.mouse.click(5, 5);
  await waitForClosed();
});

it('a path outside the roots shows vyred\'s refusal in the preview', { ...T, skip: noClaude }, async () => {
  await link('/etc/hosts').click();
  const error = preview().getByTestId('files-preview-error');
  await error.waitFor();
  assert.equal(await error.getAttribute('data-code'), 'outside_roots');
  assert.match(await error.innerText(), /^\/etc\/hosts is outside the folders files may read/);
  assert.equal(await preview().getByTestId('files-text').count(), 0);
  assert.equal(await preview().getByTestId('files-preview-download').count(), 0);
  await shot(page, 'chat-file-refused');
  await page.keyboard.press('Escape');
  await waitForClosed();
  // Focus goes back to the link the preview was opened from.
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-path')), '/etc/hosts');
});

it('Esc closes the preview and leaves a running turn alone', { ...T, skip: noClaude }, async () => {
  const box = page.getByTestId('composer');
  await box.fill('SLOWLY go on');
  await box.press('Enter');
  await page.getByTestId('assistant-text').filter({ hasText: 'slow2' }).waitFor({ timeout: 90_000 });
  await link('notes/todo.txt:42').click();
  await waitForKind('text');
  assert.equal(await page.getByTestId('assistant-text').filter({ hasText: 'reply to [SLOWLY go on]' }).count(), 0, 'the turn still runs');
  await page.keyboard.press('Escape');
  await waitForClosed();
  await reply('reply to [SLOWLY go on]');
  await idle();
  assert.equal(await page.locator('.notice', { hasText: 'Interrupted' }).count(), 0);
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

async function waitForKind(kind) {
  await dialog().locator(`[data-testid=files-preview][data-kind=${kind}]`).waitFor();
}

async function waitForClosed() {
  await dialog().waitFor({ state: 'hidden' });
  assert.equal(await dialog().evaluate((d) => d.open), false);
}
