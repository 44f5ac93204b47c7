// A thread's one timeline in the Chat view (issue 18), in Chromium against a real vyred and the
// pinned Claude Code CLI on the fake Messages API: what the live page built from the stream is
// what a reload and another browser show, element by element; tool rows show the command, its
// output and exit; a failing API shows its retries, then the error with a Retry that works; Vyre's
// own greeting prompt is never shown; a long thread opens on its newest page and pages upward.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_KEY, Rig, claudeMissing, waitFor } from './lib/rig.mjs';
import { SHOTS, openBrowser, shootingTest } from './lib/browser.mjs';

const noClaude = claudeMissing();
const WIDE = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };
/** A terminal session with many turns, for paging (written before vyred reads the transcripts). */
const LONG = '7a1c0000-0000-4000-8000-0000000000aa';
const LONG_TURNS = 150;
let rig;
let browser;
let page;

/** The page's own tool call, with its device's cookie and key (as lumen.test.mjs does). */
function inPage(p, tool, input) {
  return p.evaluate(
    async ([tool, input]) => {
      const headers = { 'content-type': 'application/json', 'x-vyre-key': localStorage.getItem('vyre_key') };
      const r = await fetch(`/v1/tools/${tool}`, { method: 'POST', headers, body: JSON.stringify(input) });
      const j = await r.json();
      if (j.error) throw new Error(`${tool}: ${j.error.code}: ${j.error.message}`);
      return j.data;
    },
    [tool, input],
  );
}

function longTranscript(dir) {
  const p = join(dir, '.claude/projects/-home-someone-long-project');
  mkdirSync(p, { recursive: true });
  const lines = [];
  let parent = null;
  const t0 = Date.parse('2026-06-01T10:00:00Z');
  for (let i = 0; i < LONG_TURNS; i++) {
    const u = `long-u-${i}`;
    const a = `long-a-${i}`;
    lines.push({ parentUuid: parent, isSidechain: false, type: 'user', message: { role: 'user', content: `question number ${i}` }, uuid: u, timestamp: new Date(t0 + i * 60_000).toISOString(), cwd: '/home/someone/long-project', sessionId: LONG, entrypoint: 'cli' });
    lines.push({ parentUuid: u, isSidechain: false, type: 'assistant', message: { id: `msg_long_${i}`, role: 'assistant', content: [{ type: 'text', text: `answer number ${i}` }] }, uuid: a, timestamp: new Date(t0 + i * 60_000 + 5000).toISOString(), sessionId: LONG });
    parent = a;
  }
  writeFileSync(join(p, `${LONG}.jsonl`), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
}

before(async () => {
  rig = await Rig.start('timeline', { claude: !noClaude });
  longTranscript(rig.home);
  // The CLI retries a failing request twice, not ten times, so a lasting fault ends the turn soon.
  mkdirSync(join(rig.home, '.claude'), { recursive: true });
  writeFileSync(join(rig.home, '.claude/settings.json'), JSON.stringify({ env: { CLAUDE_CODE_MAX_RETRIES: '2' } }));
  browser = await openBrowser();
  page = browser.page;
  await page.goto(await rig.onboardLink());
  await page.waitForURL((u) => u.pathname === '/onboard' && !u.search.includes('t='));
  await inPage(page, 'onboarding.you', { name: 'Ada', assistant_name: 'Juno' });
  await inPage(page, 'onboarding.claude', { mode: 'api-key', value: API_KEY });
  await page.evaluate(async () => {
    const headers = { 'content-type': 'application/json', 'x-vyre-key': localStorage.getItem('vyre_key') };
    const r = await fetch('/v1/session/finish', { method: 'POST', headers, body: '{}' });
    if (!r.ok) throw new Error(`finish: ${r.status}`);
  });
});

after(async () => {
  await browser?.close();
  await rig?.stop();
});

const T = { timeout: 240_000 };

const it = shootingTest('timeline-', () => page);

/** Screenshots at 1440x900 and 390x844: `timeline-<name>-wide.png`, `-phone.png`. */
async function shots(p, name) {
  mkdirSync(SHOTS, { recursive: true });
  for (const [size, v] of [['wide', WIDE], ['phone', PHONE]]) {
    await p.setViewportSize(v);
    await p.waitForTimeout(200);
    // The newest at the bottom, as a reader who follows the thread sees it.
    await p.locator('[data-testid=messages]').evaluate((e) => (e.scrollTop = e.scrollHeight)).catch(() => {});
    await p.waitForTimeout(100);
    await p.screenshot({ path: join(SHOTS, `timeline-${name}-${size}.png`) });
  }
  await p.setViewportSize(WIDE);
}

/** The timeline as drawn: each item's key, kind and words, in order. */
function drawn(p) {
  return p.evaluate(() =>
    [...document.querySelectorAll('[data-testid=messages] > [data-key]')].map((e) => {
      const kind = e.dataset.testid ?? e.className.split(' ')[0];
      return `${e.dataset.key} ${kind} ${e.dataset.status ?? ''} ${e.innerText.replace(/\s+/g, ' ').trim()}`;
    }),
  );
}

/** Scroll up until the thread's beginning is drawn (the first page is its newest 16 items). */
async function toTheStart(p) {
  await waitFor('the thread from its start', async () => {
    await p.locator('[data-testid=messages]').evaluate((e) => (e.scrollTop = 0));
    await p.waitForTimeout(100);
    return (await p.getByTestId('older').count()) === 0 && (await p.getByTestId('messages').getByText('Loading…').count()) === 0;
  }, 30_000);
}

async function send(p, text, queue = false) {
  const box = p.getByTestId('composer');
  if (queue) await p.getByTestId('after-turn').check();
  await box.fill(text);
  await box.press('Enter');
}

async function idle(p) {
  await p.getByTestId('thread-state').filter({ hasText: 'Idle' }).waitFor({ timeout: 90_000 });
  await waitFor('nothing streaming', async () => (await p.locator('.msg.assistant.streaming').count()) === 0, 30_000);
}

async function reply(p, words, timeout = 90_000) {
  await p.getByTestId('assistant-text').filter({ hasText: words }).first().waitFor({ timeout });
}

/** Allow the command if the session asks (whether it asks is the CLI's rules' business). */
async function allow(p, command) {
  const row = p.getByTestId('tool-row').filter({ hasText: command });
  const ask = p.getByTestId('ask').filter({ hasText: command });
  await waitFor(`${command} to run or ask`, async () => (await ask.count()) > 0 || ((await row.count()) > 0 && (await row.getAttribute('data-status')) !== 'running'), 60_000);
  if ((await ask.count()) > 0 && (await ask.getByTestId('allow').count()) > 0) await ask.getByTestId('allow').click();
}

async function open(p, thread) {
  await p.goto(`${rig.base}/app/t/${encodeURIComponent(thread)}`);
  await p.getByTestId('messages').waitFor();
  await waitFor('the timeline to load', async () => (await p.getByText('Loading…').count()) === 0);
}

let thread;

it('Vyre\'s greeting prompt is not shown: the assistant speaks first', { ...T, skip: noClaude }, async () => {
  await page.goto(`${rig.base}/app/`);
  await page.getByTestId('chat-title').filter({ hasText: 'Juno' }).waitFor();
  await reply(page, 'reply to [');
  const a = await rig.sock('agents.list');
  const juno = a.find((x) => x.name === 'juno');
  const timeline = await rig.sock('threads.timeline', { thread: juno.thread });
  assert.equal(timeline.items[0].via, 'internal', 'vyred marks it');
  assert.equal(await page.locator('[data-via=internal]').count(), 0, 'the page hides it');
  assert.equal(await page.getByTestId('user-text').count(), 0, 'no words of the person yet');
  // Opened by its address, the assistant's thread is still the home in the nav, and no terminal's.
  await open(page, juno.thread);
  assert.equal(await page.locator('nav[aria-label=Main] [aria-current=page]').getAttribute('data-nav'), 'home');
  assert.equal(await page.getByTestId('terminal-badge').count(), 0);
  await shots(page, 'greeting');
  // Shown on asking, marked as Vyre's.
  await page.getByTestId('show-internal').click();
  assert.match(await page.locator('[data-via=internal]').innerText(), /Greet them[\s\S]*from Vyre/);
  await page.getByTestId('show-internal').click();
  assert.equal(await page.locator('[data-via=internal]').count(), 0);
});

it('a session\'s whole turn list is the same live, after a reload and in another browser', { ...T, skip: noClaude }, async () => {
  const started = await rig.sock('threads.start', { cwd: rig.work, text: 'hello there' });
  thread = started.thread;
  await open(page, thread);
  await reply(page, 'reply to [hello there]');
  await idle(page);
  // A command that runs without asking, with its output and exit.
  await send(page, 'RUNBASH echo timeline-out');
  await reply(page, 'tool said: timeline-out');
  await idle(page);
  // One allowed, one denied.
  await send(page, 'RUNBASH touch allowed.txt');
  await page.getByTestId('ask').filter({ hasText: 'touch allowed.txt' }).getByTestId('allow').click();
  await reply(page, 'tool said: (Bash completed');
  await idle(page);
  await send(page, 'RUNBASH touch denied.txt');
  await page.getByTestId('ask').filter({ hasText: 'touch denied.txt' }).getByTestId('deny').click();
  await idle(page);
  // A steer into a slow reply, a queued message, an interrupt.
  await send(page, 'SLOWLY count');
  await page.getByTestId('assistant-text').filter({ hasText: 'slow2' }).waitFor({ timeout: 90_000 });
  await send(page, 'steer words');
  await send(page, 'queued words', true);
  await page.getByTestId('queued-text').filter({ hasText: 'queued words' }).waitFor();
  await page.keyboard.press('Escape');
  await reply(page, 'reply to [queued words]');
  await idle(page);
  await page.waitForTimeout(500);

  const live = await drawn(page);
  const kinds = live.map((l) => l.split(' ')[1]);
  assert.ok(kinds.includes('tool-row') && kinds.includes('notice'), live.join('\n'));
  const order = ['hello there', 'echo timeline-out', 'touch allowed.txt', 'touch denied.txt', 'SLOWLY count', 'Interrupted.', 'queued words'];
  const at = order.map((w) => live.findIndex((l) => l.includes(w)));
  assert.deepEqual([...at].sort((a, b) => a - b), at, `in order: ${order} at ${at}\n${live.join('\n')}`);
  assert.ok(at.every((i) => i >= 0), live.join('\n'));
  assert.equal(await page.locator('[data-via=steer]').count(), 1);
  assert.equal(await page.locator('[data-via=queued]').count(), 1);
  await shots(page, 'session');

  await page.reload();
  await page.getByTestId('messages').waitFor();
  await page.getByTestId('assistant-text').last().waitFor();
  await toTheStart(page);
  await waitFor('the reload to draw it all', async () => (await drawn(page)).length === live.length, 20_000);
  assert.deepEqual(await drawn(page), live, 'a reload draws the same timeline');

  const other = await openBrowser();
  try {
    await other.page.goto(await rig.sock('devices.link', {}).then((l) => l.url));
    await other.page.waitForURL((u) => u.pathname === '/app/');
    await open(other.page, thread);
    await other.page.getByTestId('assistant-text').last().waitFor();
    await toTheStart(other.page);
    await waitFor('the other browser to draw it all', async () => (await drawn(other.page)).length === live.length, 20_000);
    assert.deepEqual(await drawn(other.page), live, 'another browser draws the same timeline');
  } finally {
    await other.close();
  }
});

it('a tool row shows the command, its output and exit; a long output is fetched whole', { ...T, skip: noClaude }, async () => {
  await open(page, thread);
  const echo = page.getByTestId('tool-row').filter({ hasText: 'echo timeline-out' });
  assert.equal(await echo.getByTestId('tool-summary').innerText(), 'echo timeline-out', 'the command, not "run it"');
  assert.equal(await echo.getAttribute('data-status'), 'completed');
  assert.equal(await echo.getByTestId('tool-exit').innerText(), 'exit 0');
  assert.match(await echo.innerText(), /auto/, 'it ran without asking');
  await echo.getByTestId('tool-toggle').click();
  assert.equal(await echo.getByTestId('tool-output').innerText(), 'timeline-out');
  assert.match(await echo.innerText(), /run it/, 'the description when opened');
  const denied = page.getByTestId('tool-row').filter({ hasText: 'touch denied.txt' });
  assert.equal(await denied.getAttribute('data-status'), 'denied');
  // A failing command says its exit.
  await send(page, 'RUNBASH ls /no/such/folder');
  await allow(page, 'ls /no/such/folder');
  const failing = page.getByTestId('tool-row').filter({ hasText: 'ls /no/such/folder' });
  await waitFor('the command to fail', async () => (await failing.count()) === 1 && (await failing.getAttribute('data-status')) === 'failed', 60_000);
  await idle(page);
  assert.match(await failing.getByTestId('tool-exit').innerText(), /^exit [1-9]/);
  // Long output: the row has its start, "Show all" fetches the rest from vyred.
  await send(page, 'RUNBASH seq 1 3000');
  await allow(page, 'seq 1 3000');
  const seq = page.getByTestId('tool-row').filter({ hasText: 'seq 1 3000' });
  await waitFor('the long command to end', async () => (await seq.count()) === 1 && (await seq.getAttribute('data-status')) === 'completed', 60_000);
  await idle(page);
  await seq.getByTestId('tool-toggle').click();
  assert.doesNotMatch(await seq.getByTestId('tool-output').innerText(), /\n3000$/);
  await shots(page, 'tools');
  await seq.getByTestId('tool-show-all').click();
  await waitFor('the whole output', async () => /\n3000$/.test(await seq.getByTestId('tool-output').innerText()), 20_000);
  // A file written: its row, opened, shows what it wrote as a diff, as the ask did.
  const notes = join(rig.work, 'notes.md');
  await send(page, `CALLTOOL Write {"file_path":"${notes}","content":"# Notes\\n\\nfirst line\\nsecond line\\n"}`);
  await allow(page, 'notes.md');
  const write = page.getByTestId('tool-row').filter({ hasText: 'notes.md' });
  await waitFor('the file to be written', async () => (await write.count()) === 1 && (await write.getAttribute('data-status')) === 'completed', 60_000);
  await idle(page);
  assert.equal(await write.getByTestId('tool-lines').innerText(), '+4 −0', 'the lines it wrote, on the row');
  await write.getByTestId('tool-toggle').click();
  const written = write.getByTestId('tool-diff');
  await written.waitFor();
  assert.match(await written.innerText(), /first line[\s\S]*second line/);
  assert.equal(await write.getByTestId('tool-input').count(), 0, 'the diff, not the JSON');
  // A question answered here comes back answered after a reload, with what was chosen.
  await send(page, 'ASKQUESTION please');
  const ask = page.getByTestId('ask').filter({ hasText: 'Which color do you prefer?' });
  await ask.getByTestId('ask-option').filter({ hasText: 'Red' }).click();
  await ask.getByTestId('answer').click();
  await idle(page);
  await page.reload();
  const answered = page.locator('[data-key]', { has: page.getByTestId('ask').filter({ hasText: 'Which color do you prefer?' }) });
  await answered.getByTestId('ask-answers').waitFor();
  assert.match(await answered.getByTestId('ask-answers').innerText(), /Which color do you prefer\? → Red/);
  await shots(page, 'answered');
  await toTheStart(page);
  const deniedAsk = page.locator('[data-key]', { has: page.getByTestId('ask').filter({ hasText: 'touch denied.txt' }) });
  assert.match(await deniedAsk.innerText(), /Denied/);
});

it('an answer in markdown from the real CLI is drawn as markdown, and the same after a reload', { ...T, skip: noClaude }, async () => {
  await open(page, thread);
  await send(page, 'MARKDOWN please');
  await reply(page, 'What changed');
  await idle(page);
  const check = async () => {
    const md = page.getByTestId('assistant-text').filter({ hasText: 'What changed' }).last();
    assert.equal(await md.locator('h2').innerText(), 'What changed');
    assert.equal(await md.locator('strong').innerText(), 'keeps');
    assert.equal(await md.locator('ol > li').count(), 2);
    assert.equal(await md.locator('ol ul > li').count(), 2, 'the nested list');
    assert.deepEqual(await md.locator('table th').allInnerTexts(), ['Part', 'Before', 'After']);
    assert.equal(await md.locator('table tbody tr').count(), 2);
    const code = md.getByTestId('code-block');
    assert.equal(await code.getAttribute('data-language'), 'rust');
    await code.locator('code[data-highlighted=rust]').waitFor();
    assert.ok((await code.locator('code[data-highlighted] span').count()) > 3, 'the code is highlighted');
    const link = md.locator('a', { hasText: 'link' });
    assert.equal(await link.getAttribute('href'), 'https://example.com/docs');
    assert.equal(await link.getAttribute('rel'), 'noopener noreferrer');
    assert.equal(await md.locator('blockquote').count(), 1);
    assert.doesNotMatch(await md.innerText(), /\|---|```|\*\*/, 'no markdown syntax shows');
  };
  await check();
  await shots(page, 'markdown');
  await page.reload();
  await reply(page, 'What changed');
  await check();
});

it('a failing API shows its retries, then the error in words with a Retry that works', { ...T, skip: noClaude }, async () => {
  await open(page, thread);
  // Three failures: the first try and the CLI's two retries (settings.json above). Retry sends
  // the same words again, which the fake API then answers after two more failures.
  await send(page, 'FAIL500 5 then fine');
  await page.locator('[data-testid=notice][data-code=retrying]').waitFor({ timeout: 60_000 });
  await shots(page, 'retrying');
  const error = page.locator('[data-testid=notice][data-code=api_error]');
  await error.waitFor({ timeout: 90_000 });
  assert.match(await error.innerText(), /API/);
  await shots(page, 'error');
  await error.getByTestId('retry').click();
  await reply(page, 'reply to [FAIL500 5 then fine]', 120_000);
  await idle(page);
  assert.equal(await page.getByTestId('retry').count(), 0, 'no Retry once it worked');
  // A rate limit that does not pass says so.
  await send(page, 'RATELIMIT always please');
  const limited = page.locator('[data-testid=notice][data-code=rate_limited]');
  await limited.waitFor({ timeout: 90_000 });
  assert.match(await limited.innerText(), /rate limiting/);
  await idle(page);
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});

it('a long thread opens on its newest page and pages upward on scrolling', T, async () => {
  await waitFor('recall to read the long transcript', async () => {
    const c = await rig.sock('recall.thread', { thread: LONG }).catch(() => null);
    return c?.turns?.length === LONG_TURNS * 2;
  }, 60_000, 250);
  await open(page, LONG);
  await reply(page, `answer number ${LONG_TURNS - 1}`);
  // A terminal's session says so once, in its header, and on none of its messages; the nav
  // marks none of its places (it is neither the Deck nor the assistant's chat).
  assert.equal(await page.getByTestId('terminal-badge').count(), 1);
  assert.equal(await page.getByTestId('messages').locator('.badge').filter({ hasText: /terminal/ }).count(), 0);
  assert.equal(await page.locator('nav[aria-label=Main] [aria-current=page]').count(), 0, 'no place marked');
  const first = await drawn(page);
  // The newest page, and the one before it while the screen is not full (the items are short).
  assert.ok(first.length <= 16 + 100 && first.length < LONG_TURNS * 2, `a page or two: ${first.length}`);
  assert.equal(await page.getByTestId('assistant-text').filter({ hasText: 'answer number 0' }).count(), 0);
  await page.getByTestId('user-text').filter({ hasText: 'question number' }).first().waitFor();
  // Each scroll to the top brings the page before; what is read stays where it was.
  const zero = page.getByTestId('assistant-text').filter({ hasText: /^answer number 0$/ });
  await waitFor('the first page, scrolling up', async () => {
    await page.locator('[data-testid=messages]').evaluate((e) => (e.scrollTop = 0));
    await page.waitForTimeout(300);
    return (await zero.count()) === 1;
  }, 30_000);
  const all = await drawn(page);
  assert.equal(all.length, LONG_TURNS * 2);
  assert.equal(new Set(all.map((l) => l.split(' ')[0])).size, all.length, 'no item twice');
  assert.match(all[0], /question number 0 /);
  assert.match(all.at(-1), new RegExp(`answer number ${LONG_TURNS - 1}$`));
  await shots(page, 'long');
});
