// Lessons in the app (spec 7.11: Vyre learns from how the person corrects it and enforces it in
// code), in Chromium against a real vyred and the pinned Claude Code CLI on the fake Messages
// API: "don't use em dashes" typed in a session becomes a lesson checked in code, the chat says
// "Learned" where it was said, and the Lessons screen (reached from Settings) lists it at Remind;
// an answer with an em dash (the fake model's `EMDASH`) is sent back before the turn ends, the
// chat says "Lesson kept" there and the screen counts the break; the level set to Block holds
// over a reload; Retire takes it off the list (Show retired brings it back into view); a lesson
// added on the screen is checked in code; one vyred learns elsewhere shows up without a reload.
// A lesson is narrowed to a project, then an agent, then applies everywhere again (a refusal says
// why and keeps the choice). The tests share one vyred, one session and one browser, and run in
// order. Screenshots: screenshots/lessons-{settings,chat,list,retired,empty,pending,narrow,
// narrowed,refused}-{desktop,phone}.png.

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { API_KEY, Rig, claudeMissing, waitFor } from './lib/rig.mjs';
import { fromPage, openBrowser, shootingTest, shot } from './lib/browser.mjs';

const noClaude = claudeMissing();
const RULE = "don't use em dashes in your answers";
const DASH = '\u2014';
let rig;
let browser;
let page;
/** The session the person corrects. */
let thread;

before(async () => {
  if (noClaude) return;
  rig = await Rig.start('lessons', { claude: true });
  // No service worker: the last test answers one of the page's calls in a route.
  browser = await openBrowser({ serviceWorkers: 'block' });
  page = browser.page;
  // The onboarding's tools straight from the page (app.test.mjs walks its screens).
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
});

after(async () => {
  await browser?.close();
  await rig?.stop();
});

const T = { timeout: 240_000, skip: noClaude };
const it = shootingTest('lessons-', () => page);

async function idle() {
  await waitFor('the session to be idle', async () => (await rig.sock('threads.get', { thread })).state === 'idle', 90_000, 200);
  await page.getByTestId('thread-state').filter({ hasText: 'Idle' }).waitFor({ timeout: 30_000 });
}

async function send(text) {
  const box = page.getByTestId('composer');
  await box.fill(text);
  await box.press('Enter');
}

const row = () => page.getByTestId('lesson-row').filter({ hasText: RULE });
const lessons = (all = false) => rig.sock('learn.lessons', { all });

/** No em dash anywhere the person reads on this screen. */
async function noDash(where) {
  const text = await page.locator('main').innerText();
  assert.ok(!text.includes(DASH), `${where} shows an em dash: ${text}`);
}

it('a correction typed in a session becomes a lesson: "Learned" in the chat, checked in code at Remind on the Lessons screen', T, async () => {
  ({ thread } = await rig.sock('threads.start', { cwd: rig.work, text: 'hello there' }));
  await page.goto(`${rig.base}/app/t/${encodeURIComponent(thread)}`);
  await page.getByTestId('assistant-text').filter({ hasText: 'reply to [hello there]' }).waitFor({ timeout: 90_000 });
  await idle();
  assert.equal(await page.getByTestId('lesson-notice').count(), 0, 'nothing learned from a plain message');

  await send(RULE);
  const learned = page.locator('[data-testid="lesson-notice"][data-kind="learned"]');
  await learned.waitFor({ timeout: 60_000 });
  assert.equal(await learned.getByTestId('lesson-notice-text').innerText(), `Learned: ${RULE}`);
  await idle();
  // Where it happened: right after the message that taught it, before the answer to it.
  const [l] = await lessons();
  assert.equal(l.rule, RULE);
  assert.deepEqual(l.check, { type: 'banned', chars: [DASH], words: [] });
  assert.equal(await learned.getAttribute('data-lesson'), String(l.lesson));
  const before = await learned.evaluate((n) => {
    let p = n.previousElementSibling;
    while (p && p.getAttribute('data-testid') !== 'user-text') p = p.previousElementSibling;
    return p?.innerText ?? '';
  });
  assert.ok(before.includes(RULE), `after the correction: ${before}`);
  const next = await learned.evaluate((n) => n.nextElementSibling?.getAttribute('data-testid'));
  assert.equal(next, 'assistant-text', 'before the answer');
  // It stays where it was after a reload (read from the lessons, not only the stream).
  await page.reload();
  await learned.waitFor();
  assert.equal(await learned.evaluate((n) => n.nextElementSibling?.getAttribute('data-testid')), 'assistant-text');

  // The Lessons screen, from Settings.
  await page.locator('[data-nav="settings"]').click();
  await page.getByTestId('settings-lessons-count').filter({ hasText: '1 lesson' }).waitFor();
  await page.getByTestId('settings-lessons').scrollIntoViewIfNeeded();
  await shot(page, 'lessons-settings');
  await page.getByTestId('settings-lessons-open').click();
  await page.waitForURL((u) => u.pathname === '/app/lessons');
  assert.equal(await page.locator('[data-nav="settings"]').getAttribute('aria-current'), 'page', 'Settings is where it is reached from');
  const r = row();
  await r.waitFor();
  assert.equal(await r.getAttribute('data-level'), 'remind');
  assert.equal(await r.getAttribute('data-lesson'), String(l.lesson));
  assert.equal(await r.getByTestId('lesson-kind').innerText(), 'Checked in code');
  assert.equal(await r.getByTestId('lesson-when').innerText(), 'When: every answer');
  assert.equal(await r.getByTestId('lesson-check').innerText(), 'No em dash (U+2014) in an answer');
  assert.match(await r.getByTestId('lesson-counts').innerText(), /^applied \d+ · broken 0$/);
  assert.equal(await r.getByTestId('lesson-level-remind').getAttribute('aria-checked'), 'true');
  const source = r.getByTestId('lesson-source');
  assert.match(await source.innerText(), /^A correction you made in /);
  assert.equal(await r.getByTestId('lesson-source-link').getAttribute('href'), `/app/t/${encodeURIComponent(thread)}`);
  assert.equal(await r.getByTestId('lesson-confirm').count(), 0, 'a person typed it: nothing to confirm');
  await noDash('the Lessons screen');
});

it('an answer with an em dash is sent back: "Lesson kept" in the chat, broken 1 on the screen', T, async () => {
  // Back to the session by the lesson's own link.
  await row().getByTestId('lesson-source-link').click();
  await page.waitForURL((u) => u.pathname === `/app/t/${encodeURIComponent(thread)}`);
  await page.getByTestId('composer').waitFor();
  // `EMDASH`: the fake model answers with an em dash. Its answer also repeats the prompt, so the
  // dash in the prompt makes one either way (a fake API built before `EMDASH` answers
  // "reply to [...]").
  await send(`EMDASH tell me the plan ${DASH} in short`);
  const kept = page.locator('[data-testid="lesson-notice"][data-kind="broken"]');
  await kept.waitFor({ timeout: 90_000 });
  assert.equal(await kept.getByTestId('lesson-notice-text').innerText(), `Lesson kept: ${RULE} · sent back to Claude`);
  await idle();
  // The turn ended on an answer that keeps the lesson.
  const answers = page.getByTestId('assistant-text');
  const last = await answers.last().innerText();
  assert.ok(!last.includes(DASH), `the last answer has no em dash: ${last}`);
  // The notice sits after the answer that broke it (when the chat shows it) and before the last.
  const after = await kept.evaluate((n) => {
    const out = [];
    for (let p = n.nextElementSibling; p; p = p.nextElementSibling) out.push(p.getAttribute('data-testid'));
    return out;
  });
  assert.ok(after.includes('assistant-text'), `an answer follows the notice: ${after}`);
  for (const n of await page.getByTestId('lesson-notice-text').allInnerTexts()) assert.ok(!n.includes(DASH), n);
  // Quiet: a line, not a card or an error.
  const box = await kept.boundingBox();
  assert.ok(box.height < 30, `one line: ${box.height}px`);
  await shot(page, 'lessons-chat');
  // After a reload it is read from vyred's events, where it was.
  await page.reload();
  await kept.waitFor();
  assert.ok((await kept.evaluate((n) => n.nextElementSibling?.getAttribute('data-testid'))) === 'assistant-text', 'the answer sent back follows it');

  // The screen counts it, without a reload (the notice's link, then the stream).
  await kept.getByTestId('lesson-notice-link').click();
  await page.waitForURL((u) => u.pathname === '/app/lessons');
  await row().getByTestId('lesson-counts').filter({ hasText: /broken 1$/ }).waitFor();
  const [l] = await lessons();
  assert.equal(l.broken, 1);
  assert.equal(l.level, 'remind', 'broken once: still at Remind');
});

it('the level set to Block holds over a reload; a lesson learned elsewhere shows at once; its words can be edited', T, async () => {
  const r = row();
  await r.getByTestId('lesson-level-block').click();
  await page.locator('[data-testid="lesson-row"][data-level="block"]').filter({ hasText: RULE }).waitFor();
  assert.equal((await lessons())[0].level, 'block');
  await page.reload();
  await r.waitFor();
  assert.equal(await r.getAttribute('data-level'), 'block');
  assert.equal(await r.getByTestId('lesson-level-block').getAttribute('aria-checked'), 'true');
  assert.equal(await r.getByTestId('lesson-level-remind').getAttribute('aria-checked'), 'false');

  // Taught elsewhere (the socket stands in for another device): it shows up live.
  await rig.sock('learn.add', { rule: 'always update the changelog' });
  const found = page.getByTestId('lesson-row').filter({ hasText: 'always update the changelog' });
  await found.waitFor();
  // By its id from here: while its words are edited they are not the row's text.
  const other = page.locator(`[data-testid="lesson-row"][data-lesson="${await found.getAttribute('data-lesson')}"]`);
  assert.equal(await other.getByTestId('lesson-kind').innerText(), 'Checked in code');
  assert.equal(await other.getByTestId('lesson-source').innerText(), 'You added it');
  // Its words edited in place (Enter saves).
  await other.getByTestId('lesson-edit').click();
  const input = other.getByTestId('lesson-edit-input');
  assert.equal(await input.inputValue(), 'always update the changelog');
  await input.fill('always update CHANGELOG.md');
  await input.press('Enter');
  await other.getByTestId('lesson-rule').filter({ hasText: 'always update CHANGELOG.md' }).waitFor();
  assert.equal(await other.getByTestId('lesson-edit-input').count(), 0, 'the box closed');
  assert.ok((await lessons()).some((l) => l.rule === 'always update CHANGELOG.md'));
  await shot(page, 'lessons-list');
});

it('Retire asks, then takes it off the list; Show retired shows it again', T, async () => {
  const r = row();
  await r.getByTestId('lesson-retire').click();
  const dialog = page.getByTestId('confirm');
  await dialog.waitFor();
  assert.match(await dialog.innerText(), /Retire this lesson\?/);
  assert.ok((await dialog.innerText()).includes(RULE));
  await page.getByTestId('confirm-ok').click();
  await r.waitFor({ state: 'detached' });
  const [gone] = (await lessons(true)).filter((l) => l.rule === RULE);
  assert.equal(gone.retired, true);
  await page.getByTestId('lessons-retired').check();
  const back = page.locator('[data-testid="lesson-row"][data-retired="true"]').filter({ hasText: RULE });
  await back.waitFor();
  assert.equal(await back.getByTestId('lesson-retired').innerText(), 'retired');
  assert.equal(await back.getByTestId('lesson-retire').count(), 0, 'nothing left to do to it');
  await shot(page, 'lessons-retired');
  await page.getByTestId('lessons-retired').uncheck();
  await back.waitFor({ state: 'detached' });
});

it('a lesson added on the screen is checked in code when Vyre can read a check from it', T, async () => {
  // The other one retired too: the screen is empty and says how lessons are made.
  const other = page.getByTestId('lesson-row').filter({ hasText: 'CHANGELOG.md' });
  await other.getByTestId('lesson-retire').click();
  await page.getByTestId('confirm-ok').click();
  const empty = page.getByTestId('lessons-empty');
  await empty.waitFor();
  const words = await empty.innerText();
  assert.match(words, /Tell a session "don't …" or "always …", or type \/vyre remember …/);
  await noDash('the empty Lessons screen');
  await shot(page, 'lessons-empty');

  await page.getByTestId('lesson-add-input').fill('never run `touch`');
  await page.getByTestId('lesson-add').click();
  const added = page.getByTestId('lesson-row').filter({ hasText: 'never run `touch`' });
  await added.waitFor();
  assert.equal(await added.getByTestId('lesson-kind').innerText(), 'Checked in code');
  assert.equal(await added.getByTestId('lesson-when').innerText(), 'When: a command `touch`');
  assert.equal(await added.getByTestId('lesson-check').innerText(), 'No command `touch`');
  assert.equal(await added.getAttribute('data-level'), 'remind');
  assert.equal(await page.getByTestId('lesson-add-input').inputValue(), '', 'the box is cleared');
  assert.equal(await empty.count(), 0);
  const l = (await lessons()).find((x) => x.rule === 'never run `touch`');
  assert.deepEqual(l.check, { type: 'command', words: ['touch'], flags: [] });
  assert.equal(l.source.kind, 'person');
  assert.deepEqual(browser.errors, []);
});

it("a lesson learned from a terminal's words waits for the person: Confirm makes it apply", T, async () => {
  // vyred keeps such a lesson pending when no person is known to have typed it (a terminal's
  // hook). The list says so of the lesson just added, in a route; the confirmation is vyred's.
  const tools = '**/v1/tools/learn.lessons';
  await page.route(tools, async (route) => {
    const r = await route.fetch();
    const j = await r.json();
    j.data = j.data.map((l) => (l.rule === 'never run `touch`' ? { ...l, pending: true } : l));
    await route.fulfill({ response: r, json: j });
  });
  const edits = [];
  page.on('request', (q) => {
    if (q.url().endsWith('/v1/tools/learn.edit')) edits.push(q.postDataJSON());
  });
  await page.reload();
  const pending = page.locator('[data-testid="lesson-row"].pending').filter({ hasText: 'never run `touch`' });
  await pending.waitFor();
  assert.match(await pending.getByTestId('lesson-pending').innerText(), /applies once you confirm it/);
  assert.equal(await page.getByTestId('lesson-row').first().getAttribute('data-lesson'), await pending.getAttribute('data-lesson'), 'first: it waits on the person');
  await shot(page, 'lessons-pending');
  await page.unroute(tools);
  await pending.getByTestId('lesson-confirm').click();
  const id = Number(await page.getByTestId('lesson-row').first().getAttribute('data-lesson'));
  await waitFor('the confirmation', () => edits.length === 1);
  assert.deepEqual(edits[0], { lesson: id, confirm: true });
  await page.locator(`[data-testid="lesson-row"][data-lesson="${id}"]:not(.pending)`).waitFor();
  assert.equal(await page.getByTestId('lesson-confirm').count(), 0);
  assert.deepEqual(browser.errors, []);
});

it('a lesson is narrowed to a project, then to an agent, then applies everywhere again; a refusal keeps the choice', T, async () => {
  // A project on a folder of its own, an agent besides the assistant, and a lesson taught elsewhere.
  const home = join(rig.dir, 'garden');
  mkdirSync(home, { recursive: true });
  await rig.sock('projects.create', { name: 'Garden shed', home });
  await rig.sock('agents.create', { name: 'scout', kind: 'agent' });
  const { lesson: id } = await rig.sock('learn.add', { rule: 'keep your replies short' });
  const r = page.locator(`[data-testid="lesson-row"][data-lesson="${id}"]`);
  await r.waitFor();
  assert.equal(await r.getAttribute('data-scope'), 'all');
  assert.equal(await r.getByTestId('lesson-scope').innerText(), 'Everywhere');
  const edits = [];
  const sent = (q) => {
    if (q.url().endsWith('/v1/tools/learn.edit')) edits.push(q.postDataJSON());
  };
  page.on('request', sent);
  const stored = async () => (await lessons()).find((l) => l.lesson === id);

  // Cancel (and Esc) close it unchanged.
  await r.getByTestId('lesson-narrow').click();
  await r.getByTestId('lesson-scope-form').waitFor();
  assert.equal(await r.getByTestId('lesson-edit').isDisabled(), true, 'one box at a time');
  await r.getByTestId('lesson-scope-cancel').click();
  await r.getByTestId('lesson-scope-form').waitFor({ state: 'detached' });
  await r.getByTestId('lesson-narrow').click();
  await r.getByTestId('lesson-scope-select').press('Escape');
  await r.getByTestId('lesson-scope-form').waitFor({ state: 'detached' });

  // To the project: the choices are everywhere, each project and each agent (the assistant too).
  await r.getByTestId('lesson-narrow').click();
  const select = r.getByTestId('lesson-scope-select');
  await select.locator('option[value="project:Garden shed"]').waitFor({ state: 'attached' });
  assert.equal(await select.inputValue(), 'all', 'it starts where the lesson applies now');
  assert.equal(await r.getByTestId('lesson-scope-save').isDisabled(), true, 'nothing to save yet');
  const options = await select.locator('option').evaluateAll((os) => os.map((o) => [o.parentElement.getAttribute('label'), o.value, o.textContent]));
  assert.deepEqual(options, [
    [null, 'all', 'Everywhere'],
    ['In a project', 'project:Garden shed', 'Garden shed'],
    ['For an agent', 'agent:juno', 'Juno'],
    ['For an agent', 'agent:scout', 'Scout'],
  ]);
  await select.selectOption('project:Garden shed');
  await shot(page, 'lessons-narrow');
  await r.getByTestId('lesson-scope-save').click();
  await page.locator(`[data-testid="lesson-row"][data-lesson="${id}"][data-scope="project"]`).waitFor();
  assert.equal(await r.getByTestId('lesson-scope').innerText(), 'In project Garden shed');
  assert.equal(await r.getByTestId('lesson-scope-form').count(), 0, 'the box closed');
  let l = await stored();
  assert.equal(l.scope, 'project');
  assert.equal(l.target, 'Garden shed');
  assert.equal(l.rule, 'keep your replies short', 'the rest is as it was');
  assert.deepEqual(edits.at(-1), { lesson: id, scope: 'project', target: 'Garden shed' });

  // To the agent.
  await r.getByTestId('lesson-narrow').click();
  assert.equal(await select.inputValue(), 'project:Garden shed');
  await select.locator('option[value="agent:scout"]').waitFor({ state: 'attached' });
  await select.selectOption('agent:scout');
  await r.getByTestId('lesson-scope-save').click();
  await page.locator(`[data-testid="lesson-row"][data-lesson="${id}"][data-scope="agent"]`).waitFor();
  assert.equal(await r.getByTestId('lesson-scope').innerText(), 'For agent Scout');
  l = await stored();
  assert.equal(l.scope, 'agent');
  assert.equal(l.target, 'scout');
  // It holds over a reload (read from vyred, not only the answer).
  await page.reload();
  await r.waitFor();
  assert.equal(await r.getAttribute('data-target'), 'scout');
  assert.equal(await r.getByTestId('lesson-scope').innerText(), 'For agent Scout');
  await shot(page, 'lessons-narrowed');

  // A refusal (vyred's words, in a route: the app never sends what vyred refuses) is said in the
  // box, which stays open with the choice; nothing changed.
  const tool = '**/v1/tools/learn.edit';
  const refusal = 'a lesson narrowed to a project or agent names it in `target`';
  await page.route(tool, (route) => route.fulfill({ status: 400, json: { error: { code: 'invalid_input', message: refusal } } }));
  await r.getByTestId('lesson-narrow').click();
  await select.locator('option[value="all"]').waitFor({ state: 'attached' });
  await select.selectOption('all');
  await r.getByTestId('lesson-scope-save').click();
  const error = r.getByTestId('lesson-scope-error');
  await error.waitFor();
  assert.equal(await error.innerText(), refusal);
  assert.equal(await select.inputValue(), 'all', 'the choice is kept');
  assert.equal(await r.getByTestId('lesson-scope').innerText(), 'For agent Scout', 'the row still says where it applies');
  assert.equal((await stored()).scope, 'agent');
  await shot(page, 'lessons-refused');
  await page.unroute(tool);

  // Everywhere again: the same box, saved again.
  await r.getByTestId('lesson-scope-save').click();
  await page.locator(`[data-testid="lesson-row"][data-lesson="${id}"][data-scope="all"]`).waitFor();
  assert.equal(await r.getByTestId('lesson-scope').innerText(), 'Everywhere');
  assert.equal(await r.getByTestId('lesson-scope-form').count(), 0);
  l = await stored();
  assert.equal(l.scope, 'all');
  assert.equal(l.target, null, 'everywhere names nothing');
  assert.deepEqual(edits.at(-1), { lesson: id, scope: 'all' });
  page.off('request', sent);
  assert.deepEqual(browser.errors, []);
});
