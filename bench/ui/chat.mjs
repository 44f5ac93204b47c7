// The Chat view's figures (issue 18), in headless Chromium against a real vyred: figures only,
// nothing passes or fails on speed.
//
// - First paint of a 2,000-turn thread (4,000 items, a terminal's transcript): from navigation to
//   the newest answer on screen, the first open (vyred reads the transcript into the timeline)
//   and the next ones (its newest page, 100 items), beside the target (300 ms) and beside the
//   same thread drawn whole (every item in the page, as before paging).
// - The tab's memory while a session streams (SLOWLY turns one after another on the fake
//   Messages API, through the pinned Claude Code CLI): the JS heap and the DOM's nodes at the
//   start and the end of the window (10 minutes; --quick: 2).
// - Timers in a background tab: every setTimeout/setInterval the app arms while the page is
//   hidden and idle for the window, and the shortest interval among those that repeat, beside
//   the target (none faster than a minute).
//
// Usage: node bench/ui/chat.mjs [--quick] [--paint]; run by bench/ui/run (which bench/run calls). Needs the
// binaries (VYRE_BIN, VYRE_FAKE_API_BIN), ui/dist, Chromium, and for streaming VYRE_TEST_CLAUDE.
// Appends one JSON line to bench/results/ui.jsonl (or VYRE_BENCH_RESULTS).

import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { execSync } from 'node:child_process';
import { hostname, cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { API_KEY, ROOT, Rig, claudeMissing, waitFor } from '../../tests/browser/lib/rig.mjs';
import { openBrowser } from '../../tests/browser/lib/browser.mjs';

const quick = process.argv.includes('--quick');
/** --paint: the first-paint figures only. */
const paintOnly = process.argv.includes('--paint');
const TURNS = 2000;
const STREAM_S = quick ? 120 : 600;
const BACKGROUND_S = quick ? 65 : 180;
const LONG = '7a1c0000-0000-4000-8000-00000000b200';
const out = { bench: 'ui.chat', quick, unix_ms: Date.now() };
/** The machine's load (1, 5, 15 minutes) as the run starts: the figures are only as quiet as it. */
const loadAtStart = loadavg().map((l) => +l.toFixed(2));

function transcript(home) {
  const p = join(home, '.claude/projects/-home-someone-long-project');
  mkdirSync(p, { recursive: true });
  const lines = [];
  let parent = null;
  const t0 = Date.parse('2026-06-01T10:00:00Z');
  for (let i = 0; i < TURNS; i++) {
    const u = `bench-u-${i}`;
    const a = `bench-a-${i}`;
    const text = `question ${i}: ${'how does this part work, and why? '.repeat(3)}`;
    lines.push({ parentUuid: parent, isSidechain: false, type: 'user', message: { role: 'user', content: text }, uuid: u, timestamp: new Date(t0 + i * 60_000).toISOString(), cwd: '/home/someone/long-project', sessionId: LONG, entrypoint: 'cli' });
    const reply = `answer ${i}\n\nIt works like this:\n\n- one thing\n- another, with \`code\`\n\n\`\`\`rust\nfn main() { println!("{}", ${i}); }\n\`\`\`\n`;
    lines.push({ parentUuid: u, isSidechain: false, type: 'assistant', message: { id: `msg_bench_${i}`, role: 'assistant', content: [{ type: 'text', text: reply }] }, uuid: a, timestamp: new Date(t0 + i * 60_000 + 5000).toISOString(), sessionId: LONG });
    parent = a;
  }
  writeFileSync(join(p, `${LONG}.jsonl`), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
}

/** The page's own tool call (its device's cookie and key). */
function inPage(page, tool, input) {
  return page.evaluate(
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

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** From navigation to the newest answer drawn, in ms, as the page's own clock says
 * (performance.now() counts from the navigation's start). The page itself watches from its
 * first frame (`watchPaint`), so the figure does not include the harness's own round trips
 * (page.goto returns at the load event, and a check injected after it would see the answer
 * only then). */
async function firstPaint(page, base, thread, words) {
  await page.evaluate((w) => sessionStorage.setItem('vyre_bench_words', w), words);
  await page.goto(`${base}/app/t/${thread}`);
  const handle = await page.waitForFunction(() => window.__vyrePainted ?? null, null, { timeout: 120_000, polling: 100 });
  const ms = Math.round(await handle.jsonValue());
  const items = await page.locator('[data-testid=messages] > [data-key]').count();
  return { ms, items };
}

/** In every page from its start: the time of the first frame with the newest answer holding
 * the words the bench waits for (sessionStorage `vyre_bench_words`, set before navigating). */
function watchPaint() {
  const words = sessionStorage.getItem('vyre_bench_words');
  if (words === null) return;
  const check = () => {
    const all = document.querySelectorAll('[data-testid=assistant-text]');
    const last = all[all.length - 1];
    if (last && last.textContent.includes(words)) window.__vyrePainted = performance.now();
    else requestAnimationFrame(check);
  };
  requestAnimationFrame(check);
}

const rig = await Rig.start('bench-ui', { claude: !claudeMissing() });
transcript(rig.home);
const browser = await openBrowser();
const { page, context } = browser;
try {
  // A device for this browser: the onboarding's tools from the page (as the browser tests do).
  await page.addInitScript(watchPaint);
  await page.goto(await rig.onboardLink());
  await page.waitForURL((u) => u.pathname === '/onboard' && !u.search.includes('t='));
  await inPage(page, 'onboarding.you', { name: 'Ada', assistant_name: 'Juno' });
  await inPage(page, 'onboarding.claude', { mode: 'api-key', value: API_KEY });
  await page.evaluate(async () => {
    const headers = { 'content-type': 'application/json', 'x-vyre-key': localStorage.getItem('vyre_key') };
    await fetch('/v1/session/finish', { method: 'POST', headers, body: '{}' });
  });
  await waitFor('recall to read the 2,000-turn transcript', async () => {
    const c = await rig.sock('recall.thread', { thread: LONG }).catch(() => null);
    return c?.turns?.length === TURNS * 2;
  }, 120_000, 500);

  // First paint: the first open reads the transcript in; the next ones read the page.
  const cold = await firstPaint(page, rig.base, LONG, `answer ${TURNS - 1}`);
  const warm = [];
  for (let i = 0; i < 5; i++) warm.push(await firstPaint(page, rig.base, LONG, `answer ${TURNS - 1}`));
  // The app's own start, for scale: a thread of one exchange.
  const short = await rig.sock('agents.list').then((a) => a.find((x) => x.thread)?.thread).catch(() => null);
  const boot = [];
  if (short) for (let i = 0; i < 5; i++) boot.push(await firstPaint(page, rig.base, short, ''));
  // The reference: the whole thread in one answer, as a surface without paging would ask.
  const t0 = Date.now();
  let before = null;
  let all = 0;
  do {
    const p = await rig.sock('threads.timeline', before === null ? { thread: LONG, limit: 500 } : { thread: LONG, limit: 500, before });
    all += p.items.length;
    before = p.before;
  } while (before !== null);
  const wholeMs = Date.now() - t0;
  const pageT = Date.now();
  await rig.sock('threads.timeline', { thread: LONG, limit: 100 });
  out.first_paint = { turns: TURNS, cold_ms: cold.ms, warm_p50_ms: median(warm.map((w) => w.ms)), items_drawn: warm[0].items, one_exchange_p50_ms: boot.length ? median(boot.map((b) => b.ms)) : null, page_call_ms: Date.now() - pageT, whole_thread_calls_ms: wholeMs, whole_items: all, target_ms: 300 };
  console.log(`first paint of a ${TURNS}-turn thread: first open ${cold.ms} ms, then p50 ${out.first_paint.warm_p50_ms} ms (${warm[0].items} items drawn); target 300 ms`);
  console.log(`  reference: a thread of one exchange p50 ${out.first_paint.one_exchange_p50_ms} ms (the app's own start: the long thread adds ${out.first_paint.one_exchange_p50_ms === null ? '?' : out.first_paint.warm_p50_ms - out.first_paint.one_exchange_p50_ms} ms)`);
  console.log(`  reference: threads.timeline for its newest page ${out.first_paint.page_call_ms} ms; the whole thread (${all} items, 500 a call) ${wholeMs} ms`);

  // Streaming: a session that keeps talking while the tab watches.
  const cdp = await context.newCDPSession(page);
  await cdp.send('Performance.enable');
  const metrics = async () => {
    await cdp.send('HeapProfiler.collectGarbage').catch(() => {});
    const m = Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((x) => [x.name, x.value]));
    return { heap_mib: +(m.JSHeapUsedSize / 1048576).toFixed(1), nodes: m.Nodes, listeners: m.JSEventListeners };
  };
  if (paintOnly) {
    console.log('streaming and background: skipped (--paint)');
  } else if (!claudeMissing()) {
    const { thread } = await rig.sock('threads.start', { cwd: rig.work, text: 'hello' });
    await page.goto(`${rig.base}/app/t/${thread}`);
    await page.getByTestId('assistant-text').first().waitFor({ timeout: 90_000 });
    const start = await metrics();
    const until = Date.now() + STREAM_S * 1000;
    let turns = 0;
    while (Date.now() < until) {
      await page.getByTestId('thread-state').filter({ hasText: 'Idle' }).waitFor({ timeout: 120_000 });
      const box = page.getByTestId('composer');
      await box.fill(`SLOWLY turn ${turns}`);
      await box.press('Enter');
      turns++;
      await page.getByTestId('assistant-text').filter({ hasText: 'slow9' }).nth(turns - 1).waitFor({ timeout: 120_000 });
    }
    const end = await metrics();
    out.streaming = { seconds: STREAM_S, turns, start, end };
    console.log(`the tab after ${STREAM_S} s of streaming (${turns} turns): JS heap ${start.heap_mib} → ${end.heap_mib} MiB, DOM nodes ${start.nodes} → ${end.nodes}`);
  } else {
    console.log('streaming: skipped (no VYRE_TEST_CLAUDE)');
  }

  // A background tab: hidden, idle; every timer the app arms is counted.
  if (!paintOnly) {
  await page.addInitScript(() => {
    const armed = [];
    window.__timers = armed;
    const wrap = (name) => {
      const orig = window[name];
      window[name] = function (f, ms, ...rest) {
        if (document.visibilityState === 'hidden') armed.push({ name, ms: ms ?? 0, at: performance.now() });
        return orig.call(window, f, ms, ...rest);
      };
    };
    wrap('setTimeout');
    wrap('setInterval');
    Object.defineProperty(document, 'visibilityState', { get: () => (window.__hidden ? 'hidden' : 'visible') });
    Object.defineProperty(document, 'hidden', { get: () => !!window.__hidden });
  });
  await page.goto(`${rig.base}/app/t/${LONG}`);
  await page.getByTestId('assistant-text').filter({ hasText: `answer ${TURNS - 1}` }).first().waitFor({ timeout: 60_000 });
  await page.evaluate(() => {
    window.__hidden = true;
    document.dispatchEvent(new Event('visibilitychange'));
  });
  await page.waitForTimeout(BACKGROUND_S * 1000);
  const timers = await page.evaluate(() => window.__timers);
  const intervals = timers.filter((t) => t.name === 'setInterval').map((t) => t.ms);
  // A setTimeout armed again and again is a timer too: the gaps between arming the same delay.
  const byDelay = new Map();
  for (const t of timers.filter((t) => t.name === 'setTimeout')) byDelay.set(t.ms, [...(byDelay.get(t.ms) ?? []), t.at]);
  const repeats = [...byDelay.entries()].filter(([, ats]) => ats.length > 1).map(([ms, ats]) => Math.max(ms, Math.min(...ats.slice(1).map((a, i) => a - ats[i]))));
  const shortest = [...intervals, ...repeats].length ? Math.min(...intervals, ...repeats) : null;
  out.background = { seconds: BACKGROUND_S, timers_armed: timers.length, shortest_repeating_ms: shortest, target_ms: 60_000 };
  console.log(`a background tab for ${BACKGROUND_S} s: ${timers.length} timers armed, shortest repeating ${shortest === null ? 'none' : shortest + ' ms'}; target: none under 60000 ms`);
  }
} finally {
  await browser.close();
  await rig.stop();
}

let commit = 'unknown';
let dirty = false;
try {
  commit = execSync('git rev-parse --short HEAD', { cwd: ROOT }).toString().trim();
  dirty = execSync('git status --porcelain', { cwd: ROOT }).toString().trim() !== '';
} catch {}
Object.assign(out, { commit, dirty, machine: { host: hostname(), cpus: cpus().length, cpu: cpus()[0]?.model, load_start: loadAtStart, load_end: loadavg().map((l) => +l.toFixed(2)) }, binary: process.env.VYRE_BIN ?? 'target/debug/vyre', ui_dir: process.env.VYRE_UI_DIR ?? null });
const results = process.env.VYRE_BENCH_RESULTS || join(ROOT, 'bench/results/ui.jsonl');
appendFileSync(results, JSON.stringify(out) + '\n');
console.log(`appended to ${results}`);
