// The same conversation in Claude Code's own terminal and in Vyre's web app, for docs/chat-compared.md
// (issue 18): figures nothing; it leaves what each surface shows side by side.
//
// The pinned Claude Code CLI runs in tmux against the fake Messages API (a real terminal
// session: its own permission questions, answered with keys as a person would), on the HOME a
// vyred reads; vyred then adopts that session from its transcript, and Chromium opens it in the
// web app at 1440x900 and 390x844. Then the same asks (an Edit, a question, a command) in a
// session Vyre runs, drawn in the app before and after each answer. Out:
// bench/results/compare/terminal-<step>.txt (the pane after each step) and app-*.png.
//
// Usage: node bench/ui/compare.mjs   (needs tmux, Chromium, VYRE_TEST_CLAUDE, VYRE_BIN, VYRE_FAKE_API_BIN)

import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_KEY, CLAUDE, ROOT, Rig, waitFor } from '../../tests/browser/lib/rig.mjs';
import { openBrowser } from '../../tests/browser/lib/browser.mjs';

if (!CLAUDE) throw new Error('set VYRE_TEST_CLAUDE to the pinned Claude Code CLI');
const OUT = join(ROOT, 'bench/results/compare');
mkdirSync(OUT, { recursive: true });
const TMUX = 'vyre-compare';
const tmux = (...args) => execFileSync('tmux', args, { encoding: 'utf8' });
const pane = () => tmux('capture-pane', '-p', '-J', '-t', TMUX, '-S', '-200');
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

async function inPage(page, tool, input) {
  return page.evaluate(async ([tool, input]) => {
    const r = await fetch(`/v1/tools/${tool}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-vyre-key': localStorage.getItem('vyre_key') }, body: JSON.stringify(input) });
    return (await r.json()).data;
  }, [tool, input]);
}

/** Type a line into the terminal's Claude Code and wait until the pane shows `until`. */
async function say(text, until, name) {
  tmux('send-keys', '-t', TMUX, '-l', text);
  await sleep(300);
  tmux('send-keys', '-t', TMUX, 'Enter');
  await waitFor(`the terminal to show ${until}`, () => seen(until), 60_000, 250).catch((e) => {
    writeFileSync(join(OUT, `terminal-${name}-timeout.txt`), pane());
    throw e;
  });
  await sleep(800);
  writeFileSync(join(OUT, `terminal-${name}.txt`), pane());
}

const count = (re) => (pane().match(re) ?? []).length;
const seen = (until) => (typeof until === 'function' ? until() : until.test(pane()));

/** Answer the terminal's permission question with a key. */
async function key(k, until, name) {
  tmux('send-keys', '-t', TMUX, k);
  await waitFor(`the terminal to show ${until}`, () => seen(until), 60_000, 250);
  await sleep(800);
  writeFileSync(join(OUT, `terminal-${name}.txt`), pane());
}

const rig = await Rig.start('compare', { claude: true });
const work = rig.work;
// The terminal's Claude Code: onboarded, this folder trusted, the fake key approved.
writeFileSync(join(rig.home, '.claude.json'), JSON.stringify({
  hasCompletedOnboarding: true,
  projects: { [work]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } },
  customApiKeyResponses: { approved: [API_KEY.slice(-20)], rejected: [] },
}));
const env = { HOME: rig.home, ANTHROPIC_BASE_URL: rig.api.url, ANTHROPIC_API_KEY: API_KEY, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', TERM: 'xterm-256color', PATH: process.env.PATH };
const exports = Object.entries(env).map(([k, v]) => `${k}='${v}'`).join(' ');
try { tmux('kill-session', '-t', TMUX); } catch {}
tmux('new-session', '-d', '-s', TMUX, '-x', '120', '-y', '45', `cd '${work}' && env ${exports} '${CLAUDE}' --permission-mode default`);
const browser = await openBrowser();
const { page } = browser;
try {
  await waitFor('Claude Code to start', () => /for shortcuts|\? for|Try "/.test(pane()), 60_000, 250);
  writeFileSync(join(OUT, 'terminal-0-start.txt'), pane());
  await say('hello there', /reply to \[hello there\]/, '1-hello');
  await say('MARKDOWN please', /What changed[\s\S]*A quote/, '2-markdown');
  await say('RUNBASH echo compare-out', /tool said: compare-out/, '3-bash-auto');
  await say('RUNBASH touch allowed.txt', /Do you want to proceed/, '4-bash-ask');
  let said = count(/tool said/g);
  await key('Enter', () => count(/tool said/g) > said, '5-bash-allowed');
  said = count(/tool said/g);
  await say(`CALLTOOL Write {"file_path":"${work}/notes.md","content":"# Notes\\n\\nfirst line\\nsecond line\\n"}`, /Do you want to (create|make)/, '6-write-ask');
  await key('Enter', () => count(/tool said/g) > said, '7-write-done');
  await say('RUNBASH touch denied.txt', /Do you want to proceed/, '8-deny-ask');
  await key('Escape', /Interrupted|tell Claude|denied|rejected/i, '9-denied');
  await say('FAIL500 always', /API Error|500|Internal server error/, '10-error');
  // (The pane keeps its last 200 lines: each step waits for words of its own.)
  await say(`CALLTOOL Read {"file_path":"${work}/notes.md"}`, /tool said: 1\s+# Notes/, '11-read');
  await say(`CALLTOOL Edit {"file_path":"${work}/notes.md","old_string":"second line","new_string":"second line, edited"}`, /Do you want to make this edit/, '12-edit-ask');
  await key('Enter', /tool said: .*(updated|edited)/i, '13-edit-done');
  await say('ASKQUESTION please', /Which color do you prefer/, '14-question');
  const answered = /questions have been answered|User has answered/i;
  await key('Enter', () => answered.test(pane()) || /Submit|Review your answers/.test(pane()), '15-question-picked');
  if (!answered.test(pane())) await key('Enter', answered, '16-question-answered');
  tmux('send-keys', '-t', TMUX, 'C-c');
  await sleep(300);
  tmux('send-keys', '-t', TMUX, 'C-c');

  // Vyre: the same session, adopted from its transcript.
  await page.goto(await rig.onboardLink());
  await page.waitForURL((u) => u.pathname === '/onboard' && !u.search.includes('t='));
  await inPage(page, 'onboarding.you', { name: 'Ada', assistant_name: 'Juno' });
  await inPage(page, 'onboarding.claude', { mode: 'api-key', value: API_KEY });
  await page.evaluate(async () => { await fetch('/v1/session/finish', { method: 'POST', headers: { 'content-type': 'application/json', 'x-vyre-key': localStorage.getItem('vyre_key') }, body: '{}' }); });
  const thread = await waitFor('vyred to find the terminal session', async () => {
    const all = await rig.sock('projects.catalog', {}).catch(() => []);
    return all.find((t) => t.cwd === work && t.source === 'terminal')?.thread;
  }, 60_000, 500);
  for (const [name, size] of [['wide', { width: 1440, height: 900 }], ['phone', { width: 390, height: 844 }]]) {
    await page.setViewportSize(size);
    await page.goto(`${rig.base}/app/t/${thread}`);
    await page.getByTestId('assistant-text').filter({ hasText: 'What changed' }).first().waitFor({ timeout: 30_000 });
    await page.waitForTimeout(800);
    await page.screenshot({ path: join(OUT, `app-${name}.png`), fullPage: false });
    await page.getByTestId('messages').evaluate((e) => (e.scrollTop = 0));
    await page.waitForTimeout(500);
    await page.screenshot({ path: join(OUT, `app-${name}-top.png`), fullPage: false });
  }
  // The same asks in a session Vyre runs, each card drawn before it is answered.
  await page.setViewportSize({ width: 1440, height: 900 });
  const live = (await rig.sock('threads.start', { cwd: work, text: 'hello there' })).thread;
  await page.goto(`${rig.base}/app/t/${live}`);
  const idle = () => page.getByTestId('thread-state').filter({ hasText: 'Idle' }).waitFor({ timeout: 90_000 });
  const send = async (text) => {
    await page.getByTestId('composer').fill(text);
    await page.getByTestId('composer').press('Enter');
  };
  const open = page.locator('[data-testid=ask]:not([data-outcome])');
  await page.getByTestId('assistant-text').filter({ hasText: 'reply to [hello there]' }).waitFor({ timeout: 90_000 });
  await idle();
  await send(`CALLTOOL Read {"file_path":"${work}/notes.md"}`);
  await page.getByTestId('assistant-text').filter({ hasText: 'edited' }).first().waitFor({ timeout: 90_000 });
  await idle();
  await send(`CALLTOOL Edit {"file_path":"${work}/notes.md","old_string":"second line, edited","new_string":"second line, edited twice"}`);
  await open.waitFor({ timeout: 90_000 });
  await page.getByTestId('composer').blur();
  await page.screenshot({ path: join(OUT, 'app-live-edit-ask.png') });
  await open.getByTestId('allow').click();
  await idle();
  await send('ASKQUESTION please');
  await open.waitFor({ timeout: 90_000 });
  await page.getByTestId('composer').blur();
  await page.screenshot({ path: join(OUT, 'app-live-question.png') });
  await page.keyboard.press('1');
  await page.keyboard.press('y');
  await idle();
  await send('RUNBASH touch vyre-asked.txt');
  await open.waitFor({ timeout: 90_000 });
  await page.getByTestId('composer').blur();
  await page.screenshot({ path: join(OUT, 'app-live-bash-ask.png') });
  await open.getByTestId('allow').click();
  await idle();
  await page.getByTestId('messages').evaluate((e) => (e.scrollTop = e.scrollHeight));
  await page.waitForTimeout(500);
  await page.screenshot({ path: join(OUT, 'app-live-after.png') });
  writeFileSync(join(OUT, 'app-live-timeline.json'), JSON.stringify(await rig.sock('threads.timeline', { thread: live, limit: 100 }), null, 2));

  // The terminal session's own transcript, as Claude Code wrote it.
  const projects = join(rig.home, '.claude/projects');
  for (const d of readdirSync(projects)) {
    const f = join(projects, d, `${thread}.jsonl`);
    if (existsSync(f)) copyFileSync(f, join(OUT, 'terminal-transcript.jsonl'));
  }
  writeFileSync(join(OUT, 'app-timeline.json'), JSON.stringify(await rig.sock('threads.timeline', { thread, limit: 100 }), null, 2));
  console.log(`captures in ${OUT}`);
} finally {
  try { tmux('kill-session', '-t', TMUX); } catch {}
  await browser.close();
  await rig.stop();
}
