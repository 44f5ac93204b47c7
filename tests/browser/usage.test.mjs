// What it costs (issue 25), in a real browser against a real vyred and the pinned Claude Code
// CLI on the fake Messages API, signed in as a subscription (`sessions.auth: "setup-token"`, a
// `claude-setup-token` in the vault, as tests/it/faults.rs's subscription_rig): before Claude
// Code reports any window the nav's meter says what today cost, and moves after a turn; a turn
// whose answer carries the subscription's windows (`WINDOWS`: five hours 82% used, nearing the
// limit, resetting in two hours; the week 41%) turns it into the five-hour bar, amber, with its
// reset time and the week beside it; its popover has every window, today's and 30 days' cost and
// the costliest sessions (a click opens one). On a phone the meter is the bottom bar's last, the
// percentage alone. An agent's thread measures its session against the agent's budget, and
// Settings lists each agent's 30 days beside its budget. Lumen has the meter's short face. At
// the five-hour limit with an API key to fall back on, the meter is red and the popover says
// until when the API key is used. The tests share one vyred and one browser and run in order.
// Screenshots: screenshots/usage-<name>-{desktop,phone}.png (1280x800, 390x844), usage-lumen.png.

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { API_KEY, Rig, claudeMissing, waitFor } from './lib/rig.mjs';
import { DESKTOP, PHONE, SHOTS, openBrowser, shootingTest, shot } from './lib/browser.mjs';
import { onboardToChat } from './lib/onboard.mjs';

const noClaude = claudeMissing();
/** A subscription's setup token, as `claude setup-token` prints one. */
const TOKEN = 'sk-ant-oat01-fake-subscription-token-55555555';
let rig;
let browser;
let page;
/** The session whose turns cost. */
let thread;
/** The agent's session, and what it spent. */
let scoutThread;
let scoutCost = 0;

before(async () => {
  if (noClaude) return;
  rig = await Rig.start('usage', { claude: true, auth: 'setup-token' });
  browser = await openBrowser();
  page = browser.page;
  await onboardToChat(rig, page, TOKEN);
});

after(async () => {
  await browser?.close();
  await rig?.stop();
});

const T = { timeout: 240_000, skip: noClaude };

const it = shootingTest('usage-', () => page);

const meter = () => page.getByTestId('usage-meter');

/** What the meter says today cost, in dollars (its `data-today`). */
async function today() {
  return Number((await meter().getAttribute('data-today')) || 0);
}

/** The thread's turn is over: idle, as vyred says it. */
async function idle(t) {
  await waitFor('the session to be idle', async () => (await rig.sock('threads.get', { thread: t })).state === 'idle', 120_000, 200);
}

/** Dollars as the app says them (lib/usage.ts `money`): a turn on the fake API costs a fraction
 * of a cent, said to four places. */
function dollars(v) {
  return v > 0 && v < 0.00995 ? `$${Number(v.toFixed(4))}` : `$${v.toFixed(2)}`;
}

/** On a phone, no label in the bottom bar is cut by the meter beside them. */
async function barFits() {
  await page.setViewportSize(PHONE);
  try {
    await page.getByTestId('usage-meter-short').waitFor();
    const bar = await meter().boundingBox();
    const settings = await page.locator('nav [data-nav=settings]').boundingBox();
    assert.ok(bar.x >= settings.x + settings.width - 1 && bar.x + bar.width <= PHONE.width, `the meter is the bar's last: ${JSON.stringify({ bar, settings })}`);
    const cut = await page.locator('nav a .label').evaluateAll((ls) => ls.filter((l) => l.scrollWidth > l.clientWidth + 1).map((l) => l.textContent));
    assert.deepEqual(cut, [], 'no label in the bottom bar is cut');
  } finally {
    await page.setViewportSize(DESKTOP);
  }
}

/** This machine's midnight, in the browser's clock. */
function midnight() {
  const d = new Date();
  d.setHours(0, 0, 0, 0);
  return d.getTime();
}

it('before any window is reported the meter says what today cost, and moves after a turn', T, async () => {
  await meter().waitFor();
  assert.equal(await meter().getAttribute('data-kind'), 'cost');
  assert.match(await page.getByTestId('usage-meter-cost').innerText(), /^\$0\.\d+$/);
  // The assistant's greeting, the onboarding's last step, is today's first turn: once it is over,
  // the meter counts it (asked as the page opened, or again after the greeting's events).
  const juno = (await rig.sock('agents.list', {})).find((a) => a.kind === 'assistant');
  await idle(juno.thread);
  await waitFor('the greeting counted', async () => {
    const { total } = await rig.sock('usage.summary', { by: 'day', from: midnight() });
    return total.cost_usd > 0 && Math.abs(total.cost_usd - (await today())) < 1e-9;
  }, 30_000, 100);
  const before = await today();
  assert.equal(await page.getByTestId('usage-meter-cost').innerText(), dollars(before));

  ({ thread } = await rig.sock('threads.start', { cwd: rig.work, text: 'hello meter' }));
  await idle(thread);
  // The meter asks again after the turn's events, by itself.
  await waitFor('the meter to move', async () => (await today()) > before, 30_000, 100);
  const shown = await today();
  const { total_cost_usd } = await rig.sock('threads.get', { thread });
  assert.ok(total_cost_usd > 0);
  assert.ok(Math.abs(shown - (before + total_cost_usd)) < 1e-9, `the turn's cost is added: ${before} + ${total_cost_usd} = ${shown}`);
  const summary = await rig.sock('usage.summary', { by: 'day', from: midnight() });
  assert.ok(Math.abs(summary.total.cost_usd - shown) < 1e-9, `the meter says today's total: ${shown} vs ${summary.total.cost_usd}`);
  // What a person sees moves too (a fraction of a cent, to four places).
  assert.equal(await page.getByTestId('usage-meter-cost').innerText(), dollars(shown));
  assert.notEqual(dollars(shown), dollars(before));
  assert.equal(await meter().getAttribute('data-kind'), 'cost', 'still no windows: that turn reported none');
  await barFits();
  await shot(page, 'usage-cost');
});

it("a turn that carries the subscription's windows: the five-hour bar, amber, its reset time, the week beside", T, async () => {
  const before = await today();
  await rig.sock('threads.send', { thread, text: 'WINDOWS how much is left' });
  await idle(thread);
  await waitFor('the meter to show the windows', async () => (await meter().getAttribute('data-kind')) === 'window', 30_000, 100);
  await waitFor('the cost to move too', async () => (await today()) > before, 30_000, 100);
  assert.equal(await meter().getAttribute('data-tone'), 'warn');
  assert.equal(await page.getByTestId('usage-meter-percent').innerText(), '82%');
  // When it resets, in the browser's own clock: about two hours from now.
  const limits = await rig.sock('usage.limits', {});
  const five = limits.windows.find((w) => w.kind === 'five_hour');
  assert.ok(Math.abs(five.resets_at - (Date.now() + 2 * 3600_000)) < 10 * 60_000, 'in about two hours');
  const clock = await page.evaluate((ms) => new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(ms), five.resets_at);
  assert.equal(await page.getByTestId('usage-meter-resets').innerText(), `resets ${clock}`);
  const week = page.getByTestId('usage-meter-other');
  assert.equal(await week.getAttribute('data-kind'), 'seven_day');
  assert.match(await week.innerText(), /Week\s+41%/);
  // The bar says how full it is, to a screen reader too.
  assert.equal(await meter().locator('[role=meter]').first().getAttribute('aria-valuenow'), '82');
  assert.match(await meter().getAttribute('title'), /^The 5-hour window: 82% used, resets \d\d:\d\d/);
  await shot(page, 'usage-meter');
});

it('the popover: every window with its reset, today and 30 days, the costliest sessions; a click opens one', T, async () => {
  await meter().click();
  const pop = page.getByTestId('usage-popover');
  await pop.waitFor();
  const windows = pop.getByTestId('usage-window');
  assert.equal(await windows.count(), 2);
  assert.deepEqual(await windows.evaluateAll((ws) => ws.map((w) => [w.dataset.kind, w.dataset.tone])), [
    ['five_hour', 'warn'],
    ['seven_day', 'ok'],
  ]);
  assert.equal(await windows.nth(0).getByTestId('usage-window-percent').innerText(), '82%');
  assert.match(await windows.nth(0).getByTestId('usage-window-resets').innerText(), /^resets \d\d:\d\d$/);
  assert.equal(await windows.nth(1).getByTestId('usage-window-percent').innerText(), '41%');
  // Four days away: its weekday.
  assert.match(await windows.nth(1).getByTestId('usage-window-resets').innerText(), /^resets (Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d\d:\d\d$/);
  assert.equal(await pop.getByTestId('usage-fallback').count(), 0, 'no fallback in force');
  const money = dollars(await today());
  assert.equal(await pop.getByTestId('usage-today').innerText(), money);
  await waitFor('the 30 days', async () => (await pop.getByTestId('usage-month').innerText()) === money, 10_000);
  // The session, by its title, its cost beside it.
  const top = pop.locator(`[data-testid="usage-top-thread"][data-thread="${thread}"]`);
  await top.waitFor();
  await waitFor('its title', async () => (await top.innerText()).includes('hello meter'), 10_000);
  // The assistant's greeting, named as the Deck names it.
  const juno = (await rig.sock('agents.list', {})).find((a) => a.kind === 'assistant');
  assert.match(await pop.locator(`[data-testid="usage-top-thread"][data-thread="${juno.thread}"]`).innerText(), /^Juno, your assistant\s+\$0\.\d+$/);
  assert.equal(await pop.getByTestId('usage-top-project').count() >= 1, true, 'the projects too (no project, here)');
  await shot(page, 'usage-popover');
  // Esc closes it.
  await page.keyboard.press('Escape');
  await pop.waitFor({ state: 'detached' });
  // A session in it opens.
  await meter().click();
  await pop.locator(`[data-testid="usage-top-thread"][data-thread="${thread}"] button`).click();
  await page.waitForURL((u) => u.pathname === `/app/t/${thread}`);
  await pop.waitFor({ state: 'detached' });
  await page.getByTestId('chat-title').filter({ hasText: 'hello meter' }).waitFor();
});

it("on a phone the meter is the bottom bar's last, the percentage alone; its popover fits the screen", T, async () => {
  await page.setViewportSize(PHONE);
  try {
    const short = page.getByTestId('usage-meter-short');
    await short.waitFor();
    assert.equal(await short.innerText(), '82%');
    assert.equal(await page.getByTestId('usage-meter-percent').isVisible(), false, 'the long face is the wide screen\'s');
    await barFits();
    await page.setViewportSize(PHONE);
    const bar = await meter().boundingBox();
    await meter().click();
    const pop = page.getByTestId('usage-popover');
    await pop.waitFor();
    const box = await pop.boundingBox();
    assert.ok(box.x >= 0 && box.x + box.width <= PHONE.width && box.y >= 0, `the popover fits: ${JSON.stringify(box)}`);
    assert.ok(box.y + box.height <= bar.y, 'above the bottom bar');
    await page.waitForTimeout(150);
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, 'usage-popover-open-phone.png') });
    await page.keyboard.press('Escape');
    await pop.waitFor({ state: 'detached' });
  } finally {
    await page.setViewportSize(DESKTOP);
  }
});

it("an agent's thread shows its session's spend against the agent's budget, filling; amber past 80%", T, async () => {
  await rig.sock('agents.create', { name: 'scout', auth: { budget_usd: 5 } });
  ({ thread: scoutThread } = await rig.sock('agents.ask', { agent: 'scout', text: 'hello budget' }));
  await idle(scoutThread);
  scoutCost = (await rig.sock('threads.get', { thread: scoutThread })).total_cost_usd;
  assert.ok(scoutCost > 0, 'the turn cost something');
  await page.goto(`${rig.base}/app/t/${encodeURIComponent(scoutThread)}`);
  const budget = page.getByTestId('thread-budget');
  await budget.waitFor();
  assert.equal(await budget.getAttribute('data-tone'), 'ok');
  assert.equal(await page.getByTestId('thread-budget-text').innerText(), `${dollars(scoutCost)} of $5.00`);
  // The agent's budget lowered to just over what the session spent: the header follows.
  await rig.sock('agents.update', { name: 'scout', auth: { budget_usd: scoutCost / 0.85 } });
  await waitFor('the budget to be nearly spent', async () => (await budget.getAttribute('data-tone')) === 'warn', 20_000, 100);
  const full = Number(await budget.locator('[role=meter]').getAttribute('aria-valuenow'));
  assert.ok(full >= 84 && full <= 86, `85% full: ${full}`);
  // A tenth of a cent, for the picture: the bar part full, as usual.
  await rig.sock('agents.update', { name: 'scout', auth: { budget_usd: 0.001 } });
  await waitFor('the new budget', async () => (await page.getByTestId('thread-budget-text').innerText()) === `${dollars(scoutCost)} of $0.001`, 20_000, 100);
  assert.equal(await budget.getAttribute('data-tone'), scoutCost / 0.001 > 0.8 ? 'warn' : 'ok');
  await shot(page, 'usage-budget');
  // The assistant's own thread has none: no budget in its header.
  await page.goto(`${rig.base}/app/t/${encodeURIComponent(thread)}`);
  await page.getByTestId('chat-title').filter({ hasText: 'hello meter' }).waitFor();
  assert.equal(await page.getByTestId('thread-budget').count(), 0);
});

it("Settings lists each agent's 30 days beside its budget", T, async () => {
  await page.goto(`${rig.base}/app/settings`);
  const scout = page.locator('[data-testid="agent-row"][data-agent="scout"]');
  await scout.waitFor();
  await waitFor("scout's spend", async () => (await scout.getByTestId('agent-spend').innerText()) === dollars(scoutCost), 10_000);
  assert.equal(await scout.getByTestId('agent-budget').innerText(), 'budget $0.001 a session');
  const juno = page.locator('[data-testid="agent-row"][data-agent="juno"]');
  assert.equal(await juno.getByTestId('agent-budget').innerText(), 'no budget');
  await page.getByTestId('settings-agents').scrollIntoViewIfNeeded();
  await shot(page, 'usage-agents');
});

it("Lumen has the meter's short face, and its popover", T, async () => {
  const lumen = await browser.context.newPage();
  try {
    await lumen.setViewportSize({ width: 420, height: 640 });
    await lumen.goto(`${rig.base}/app/lumen`);
    await lumen.getByTestId('lumen-input').waitFor();
    const short = lumen.getByTestId('usage-meter-short');
    await short.waitFor();
    assert.equal(await short.innerText(), '82%');
    assert.equal(await lumen.getByTestId('usage-meter-percent').count(), 0, 'the short face alone');
    mkdirSync(SHOTS, { recursive: true });
    await lumen.waitForTimeout(150);
    await lumen.screenshot({ path: join(SHOTS, 'usage-lumen.png') });
    await lumen.getByTestId('usage-meter').click();
    const pop = lumen.getByTestId('usage-popover');
    await pop.waitFor();
    const box = await pop.boundingBox();
    assert.ok(box.x >= 0 && box.x + box.width <= 420, `the popover fits Lumen: ${JSON.stringify(box)}`);
    await lumen.waitForTimeout(150);
    await lumen.screenshot({ path: join(SHOTS, 'usage-lumen-popover.png') });
    const wide = await lumen.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.equal(wide, 0, 'Lumen does not scroll sideways');
  } finally {
    await lumen.close();
  }
});

it("at the five-hour limit with an API key to fall back on: the meter in red, the popover says until when", T, async () => {
  for (const [name, value] of [['anthropic-api-key', API_KEY]]) {
    await rig.sock('vault.put', { name, value });
    await rig.sock('vault.grant', { item: name, to: 'sessions' });
  }
  await page.goto(`${rig.base}/app/`);
  await meter().waitFor();
  const { thread: limited } = await rig.sock('threads.start', { cwd: rig.work, text: 'SUBLIMIT the report' });
  await waitFor('the fallback', async () => (await rig.sock('usage.limits', {})).fallback !== null, 120_000, 200);
  // The turn goes on with the API key, resumed, and costs there.
  await waitFor('the turn answered on the API key', async () => {
    const t = await rig.sock('threads.get', { thread: limited });
    return t.state === 'idle' && t.auth === 'api-key' && t.total_cost_usd > 0;
  }, 120_000, 200);
  await waitFor('the meter in red', async () => (await meter().getAttribute('data-tone')) === 'err', 30_000, 100);
  // Today counts the turn on the API key too, by itself (asked again until vyred has kept it).
  await waitFor('today to count it', async () => {
    const { total } = await rig.sock('usage.summary', { by: 'day', from: midnight() });
    return Math.abs(total.cost_usd - (await today())) < 1e-9;
  }, 30_000, 100);
  await meter().click();
  const pop = page.getByTestId('usage-popover');
  await pop.waitFor();
  const said = await pop.getByTestId('usage-fallback').innerText();
  assert.match(said, /^On the API key until (\w{3} )?\d\d:\d\d — the subscription's limit was reached/);
  // The session on the API key, by its title (looked up as the popover opens).
  await waitFor('its title', async () => (await pop.getByTestId('usage-fallback-thread').innerText()) === 'SUBLIMIT the report', 10_000);
  assert.equal(await pop.locator('[data-testid="usage-window"][data-kind="five_hour"]').getAttribute('data-tone'), 'err');
  // What it cost on the API key is counted with the rest.
  await pop.locator(`[data-testid="usage-top-thread"][data-thread="${limited}"]`).waitFor();
  await shot(page, 'usage-fallback');
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});
