// The usage meter's words and choices (lib/usage.ts): percentages, reset times in the person's
// clock, which window the meter shows, today's range, money, a budget filling; and the meter's
// face and a thread's budget as the components draw them (svelte/server), from answers shaped
// like vyred's `usage.limits` (the fake API's subscription: five hours 82% used, the week 41%).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  agentBudget,
  budgetView,
  clockWords,
  current,
  faceOf,
  fallbackWords,
  mainWindow,
  money,
  nextChange,
  percent,
  resetWords,
  spendByKey,
  todayRange,
  toneOf,
  topLines,
  unpricedWords,
  windowName,
  windowView,
} from '../.test-build/usage.js';
import { budgetMeter, usageFace } from '../.test-build/ssr/entry.js';

const html = (s) => s.replace(/<!--[\s\S]*?-->/g, '');
const BERLIN = 'Europe/Berlin';
/** Thursday 3 December 2026, 11:00 in Berlin. */
const NOW = Date.UTC(2026, 11, 3, 10, 0);
const H = 3600_000;
const D = 24 * H;

function win(kind, status, utilization, resets_at = NOW + 2 * H) {
  return { kind, status, utilization, resets_at, at: NOW - 60_000, thread: 't1' };
}

/** `usage.limits` as vyred answers it after the fake API's WINDOWS turn. */
const SUBSCRIPTION = {
  windows: [win('five_hour', 'allowed_warning', 0.82), win('seven_day', 'allowed', 0.41, NOW + 4 * D)],
  fallback: null,
  api_limited_at: null,
};
/** An API key: no windows. */
const API_KEY = { windows: [], fallback: null, api_limited_at: null };

test('a window is coloured by its status: warning, red at the limit, muted once reset', () => {
  assert.equal(toneOf('allowed'), 'ok');
  assert.equal(toneOf('allowed_warning'), 'warn');
  assert.equal(toneOf('rejected'), 'err');
  assert.equal(toneOf('reset'), 'muted');
  assert.equal(toneOf('something_new'), 'ok');
});

test('percentages: whole, a sliver is <1%, never 100% before it is full, unknown is a dash', () => {
  assert.equal(percent(0.82), '82%');
  assert.equal(percent(0), '0%');
  assert.equal(percent(0.003), '<1%');
  assert.equal(percent(0.996), '99%');
  assert.equal(percent(1), '100%');
  assert.equal(percent(1.4), '100%');
  assert.equal(percent(-0.2), '0%');
  assert.equal(percent(null), '—');
  assert.equal(percent(undefined), '—');
  assert.equal(percent(NaN), '—');
});

test("windows' names", () => {
  assert.equal(windowName('five_hour'), '5-hour');
  assert.equal(windowName('seven_day'), 'Week');
  assert.equal(windowName('seven_day_opus'), 'Week · Opus');
  assert.equal(windowName('seven_day_oauth_apps'), 'Week · Oauth apps');
  assert.equal(windowName('monthly'), 'Monthly');
});

test('a reset time in the person\'s clock: the time within a day, the weekday within the week, the date beyond', () => {
  assert.equal(resetWords(NOW + 2 * H, NOW, BERLIN), '13:00');
  assert.equal(resetWords(NOW + 3 * H + 20 * 60_000, NOW, BERLIN), '14:20');
  // Tomorrow morning, but less than a day away: the time says it.
  assert.equal(resetWords(NOW + 23 * H, NOW, BERLIN), '10:00');
  assert.equal(resetWords(NOW + 2 * D, NOW, BERLIN), 'Sat 11:00');
  assert.equal(resetWords(NOW + 4 * D - 2 * H, NOW, BERLIN), 'Mon 09:00');
  // A week on is the same weekday as today: the date says which.
  assert.equal(resetWords(NOW + 6.5 * D, NOW, BERLIN), 'Wed 9 Dec');
  assert.equal(resetWords(Date.UTC(2026, 8, 9, 10), Date.UTC(2026, 8, 1, 10), BERLIN), 'Wed 9 Sep', 'September is Sep, whatever ICU says');
  // The same moment in New York.
  assert.equal(resetWords(NOW + 2 * H, NOW, 'America/New_York'), '07:00');
  assert.equal(clockWords(NOW, BERLIN), '11:00');
});

test('a window whose reset time passed is reset: nothing known of what is used', () => {
  const w = win('five_hour', 'allowed_warning', 0.82, NOW - 1);
  assert.deepEqual(current(w, NOW), { ...w, status: 'reset', utilization: null });
  const still = win('five_hour', 'allowed', 0.2);
  assert.equal(current(still, NOW), still);
  const v = windowView(w, NOW, BERLIN);
  assert.equal(v.percent, 'reset');
  assert.equal(v.tone, 'muted');
  assert.equal(v.ratio, 0);
  assert.equal(v.resets, null);
});

test('which window the meter shows: the five hours, unless another stands worse', () => {
  assert.equal(mainWindow([], NOW), null);
  assert.equal(mainWindow(SUBSCRIPTION.windows, NOW).kind, 'five_hour');
  // The week refused: that is what stops the sessions.
  assert.equal(mainWindow([win('five_hour', 'allowed', 0.3), win('seven_day', 'rejected', 1)], NOW).kind, 'seven_day');
  // The week nearing its limit while the five hours are fine.
  assert.equal(mainWindow([win('five_hour', 'allowed', 0.3), win('seven_day', 'allowed_warning', 0.9)], NOW).kind, 'seven_day');
  // Both nearing: the five hours.
  assert.equal(mainWindow([win('five_hour', 'allowed_warning', 0.8), win('seven_day', 'allowed_warning', 0.9)], NOW).kind, 'five_hour');
  // The five hours just reset: the week says more.
  assert.equal(mainWindow([win('five_hour', 'allowed', 0.5, NOW - 1), win('seven_day', 'allowed', 0.4)], NOW).kind, 'seven_day');
  // No five-hour window: the worst, else the first.
  assert.equal(mainWindow([win('seven_day', 'allowed', 0.2), win('seven_day_opus', 'allowed_warning', 0.85)], NOW).kind, 'seven_day_opus');
  assert.equal(mainWindow([win('seven_day', 'allowed', 0.2), win('seven_day_opus', 'allowed', 0.5)], NOW).kind, 'seven_day');
});

test("the meter's face: the subscription's five hours with the week beside them, else today's cost", () => {
  const f = faceOf(SUBSCRIPTION, 0.12, NOW, BERLIN);
  assert.equal(f.kind, 'window');
  assert.equal(f.main.kind, 'five_hour');
  assert.equal(f.main.percent, '82%');
  assert.equal(f.main.ratio, 0.82);
  assert.equal(f.main.tone, 'warn');
  assert.equal(f.main.resets, 'resets 13:00');
  assert.equal(f.main.title, 'The 5-hour window: 82% used, resets 13:00');
  assert.equal(f.tone, 'warn');
  assert.deepEqual(
    f.others.map((o) => [o.kind, o.percent, o.tone, o.resets]),
    [['seven_day', '41%', 'ok', 'resets Mon 11:00']],
  );
  const refused = faceOf({ ...SUBSCRIPTION, windows: [win('five_hour', 'rejected', 1)] }, 0, NOW, BERLIN);
  assert.equal(refused.tone, 'err');
  assert.equal(refused.main.title, 'The 5-hour window: limit reached, resets 13:00');

  assert.deepEqual(faceOf(API_KEY, 0.42, NOW), { kind: 'cost', cost: '$0.42', words: '$0.42 today', tone: 'ok' });
  assert.equal(faceOf(API_KEY, null, NOW).words, '$0.00 today');
  assert.equal(faceOf(null, 1.5, NOW).words, '$1.50 today');
  // An API key's own limit refused a turn in the last hour: the cost in amber.
  assert.equal(faceOf({ ...API_KEY, api_limited_at: NOW - 10 * 60_000 }, 0.42, NOW).tone, 'warn');
  assert.equal(faceOf({ ...API_KEY, api_limited_at: NOW - 2 * H }, 0.42, NOW).tone, 'ok');
});

test('money as a person reads it', () => {
  assert.equal(money(0.42), '$0.42');
  assert.equal(money(12.3), '$12.30');
  assert.equal(money(0), '$0.00');
  assert.equal(money(0.00064), '$0.0006');
  assert.equal(money(0.00128), '$0.0013');
  assert.equal(money(0.001), '$0.001');
  assert.equal(money(0.0099), '$0.0099');
  assert.equal(money(0.00996), '$0.01');
  assert.equal(money(0.00001), '<$0.0001');
  assert.equal(money(1234.4), '$1,234');
  assert.equal(money(null), '$0.00');
  assert.equal(money(-3), '$0.00');
});

test("today's range starts at the person's midnight, wherever they are, on a clock-change day too", () => {
  const tz = process.env.TZ;
  try {
    process.env.TZ = BERLIN;
    assert.deepEqual(todayRange(NOW), { from: Date.UTC(2026, 11, 2, 23, 0), to: NOW });
    // The next change without a turn: midnight, unless a window resets first.
    assert.equal(nextChange(API_KEY, NOW), Date.UTC(2026, 11, 3, 23, 0));
    assert.equal(nextChange(SUBSCRIPTION, NOW), NOW + 2 * H);
    assert.equal(nextChange({ ...API_KEY, fallback: { thread: 't', until: NOW + H, at: NOW } }, NOW), NOW + H);
    assert.equal(nextChange(null, NOW), Date.UTC(2026, 11, 3, 23, 0));
    // 29 March 2026: Berlin's clocks go forward at 02:00; the day is 23 hours long.
    const spring = Date.UTC(2026, 2, 29, 12, 0);
    assert.deepEqual(todayRange(spring), { from: Date.UTC(2026, 2, 28, 23, 0), to: spring });
    assert.equal(nextChange(null, spring), Date.UTC(2026, 2, 29, 22, 0));
    process.env.TZ = 'America/New_York';
    assert.deepEqual(todayRange(NOW), { from: Date.UTC(2026, 11, 3, 5, 0), to: NOW });
  } finally {
    if (tz === undefined) delete process.env.TZ;
    else process.env.TZ = tz;
  }
});

test('the fallback to the API key, said', () => {
  assert.equal(fallbackWords(NOW + 5 * H, NOW, BERLIN), "On the API key until 16:00 — the subscription's limit was reached");
});

test("a session's budget filling: its words, warning past 80%, red once spent", () => {
  assert.deepEqual(budgetView(1.2, 5), {
    words: '$1.20 of $5.00',
    ratio: 0.24,
    tone: 'ok',
    title: "This session spent $1.20 of its agent's $5.00 budget",
  });
  assert.equal(budgetView(4, 5).tone, 'ok');
  assert.equal(budgetView(4.1, 5).tone, 'warn');
  const spent = budgetView(7, 5);
  assert.equal(spent.tone, 'err');
  assert.equal(spent.ratio, 1);
  assert.match(spent.title, /the budget is spent/);
  assert.equal(budgetView(0, 5).ratio, 0);
});

test("an agent's budget, from agents.list", () => {
  assert.equal(agentBudget({ auth: { mode: null, vault: null, fallback: null, budget_usd: 5 } }), 5);
  assert.equal(agentBudget({ auth: { mode: null, vault: null, fallback: null, budget_usd: null } }), null);
  assert.equal(agentBudget({ auth: { mode: 'api-key' } }), null);
  assert.equal(agentBudget({}), null);
});

test('the costliest lines, and each agent\'s spend', () => {
  const line = (key, cost_usd) => ({ key, cost_usd, turns: 1, input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 });
  const lines = [line('a', 0.1), line('b', 2), line(null, 0.5), line('c', 0), line('d', 1)];
  assert.deepEqual(topLines(lines, 3).map((l) => l.key), ['b', 'd', null]);
  assert.deepEqual(topLines(lines).map((l) => l.key), ['b', 'd', null, 'a'], 'nothing that cost nothing');
  assert.deepEqual(spendByKey([line('juno', 0.3), line(null, 1), line('scout', 2)]), { juno: 0.3, scout: 2 });
});

test("the meter's face drawn: the bar, its percentage and reset; the week beside; a phone's short face", () => {
  const f = faceOf(SUBSCRIPTION, 0.12, NOW, BERLIN);
  const nav = html(usageFace({ face: f }));
  assert.match(nav, /data-testid="usage-meter-percent">82%</);
  assert.match(nav, /data-testid="usage-meter-resets">resets 13:00</);
  assert.match(nav, /class="pct warn[^"]*"/);
  assert.match(nav, /role="meter"[^>]*aria-valuenow="82"/);
  assert.match(nav, /data-testid="usage-meter-other"[^>]*data-kind="seven_day"/);
  assert.match(nav, />41%</);
  assert.match(nav, /class="short nav[^"]*"/, 'the short face is there for a phone');
  // Lumen's: the short face alone.
  const short = html(usageFace({ face: f, form: 'short' }));
  assert.doesNotMatch(short, /class="full/);
  assert.match(short, /data-testid="usage-meter-short">82%</);
  // An API key: today's cost.
  const cost = html(usageFace({ face: faceOf(API_KEY, 0.42, NOW) }));
  assert.match(cost, /data-testid="usage-meter-cost">\$0\.42</);
  assert.match(cost, />Today</);
  assert.doesNotMatch(cost, /role="meter"/);
  assert.match(html(usageFace({ face: faceOf(API_KEY, 0.42, NOW), form: 'short' })), /\$0\.42<\/span> <span class="unit[^"]*">today/);
});

test("a thread's budget drawn: its words and a bar that fills, in its tone", () => {
  const b = html(budgetMeter({ spent: 4.5, budget: 5 }));
  assert.match(b, /data-testid="thread-budget"[^>]*data-tone="warn"/);
  assert.match(b, /data-testid="thread-budget-text">\$4\.50 of \$5\.00</);
  assert.match(b, /aria-valuenow="90"/);
});

test('turns with no price are said beside a sum, never left to read as free', () => {
  assert.equal(unpricedWords(0), null);
  assert.equal(unpricedWords(undefined), null);
  assert.equal(unpricedWords(1), 'and 1 turn with no price (a model with no price set)');
  assert.equal(unpricedWords(3), 'and 3 turns with no price (a model with no price set)');
});
