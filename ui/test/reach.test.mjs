// Whether this device reaches Vyre at its name (src/lib/reach.ts): one knock, what it sends,
// and the watch that knocks again while the page is shown, never faster than every 5 s, and
// not at all once stopped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PROBE_EVERY_MS, probeUrl, reaches, watchReach } from '../.test-build/reach.js';

test('a knock is a no-cors GET of the health route at the name, with nothing of this origin', async () => {
  assert.equal(probeUrl('alex.vyre.run'), 'https://alex.vyre.run/v1/health');
  const seen = [];
  const ok = await reaches('alex.vyre.run', 1000, async (url, init) => {
    seen.push([url, init]);
    return { type: 'opaque' };
  });
  assert.equal(ok, true);
  assert.equal(seen.length, 1);
  const [url, init] = seen[0];
  assert.equal(url, 'https://alex.vyre.run/v1/health');
  assert.equal(init.mode, 'no-cors');
  assert.equal(init.cache, 'no-store');
  assert.equal(init.credentials, 'omit');
  assert.equal(init.referrerPolicy, 'no-referrer');
  assert.equal(init.method, undefined, 'a GET');
  assert.ok(init.signal instanceof AbortSignal);
});

test('nothing answering, or nothing within the time, is not reached', async () => {
  assert.equal(await reaches('alex.vyre.run', 1000, async () => Promise.reject(new TypeError('Failed to fetch'))), false);
  // A name that resolves to an address with no route here hangs: the timeout ends it.
  const hang = (_url, init) =>
    new Promise((_ok, fail) => init.signal.addEventListener('abort', () => fail(init.signal.reason)));
  const started = Date.now();
  // AbortSignal.timeout's timer does not keep node running: this one does, meanwhile.
  const keep = setTimeout(() => {}, 5000);
  assert.equal(await reaches('alex.vyre.run', 50, hang), false);
  clearTimeout(keep);
  assert.ok(Date.now() - started < 2000);
});

/** Surroundings whose timers and waking the test drives. */
function fakePage() {
  const timers = new Map();
  let next = 1;
  const wakers = new Set();
  const page = {
    shown: true,
    timers,
    s: {
      setTimeout: (f, ms) => {
        const id = next++;
        timers.set(id, { f, ms });
        return id;
      },
      clearTimeout: (id) => timers.delete(id),
      visible: () => page.shown,
      onWake: (f) => {
        wakers.add(f);
        return () => wakers.delete(f);
      },
    },
    /** Run the one pending timer. */
    tick() {
      assert.equal(timers.size, 1, 'one timer pending');
      const [[id, { f }]] = timers;
      timers.delete(id);
      f();
    },
    wake: () => [...wakers].forEach((f) => f()),
    wakers,
  };
  return page;
}

const settle = () => new Promise((r) => setImmediate(r));

test('the watch knocks at once, again every 15 s until reached, and tells each change once', async () => {
  const page = fakePage();
  const answers = [false, false, true, true];
  const knocks = [];
  const heard = [];
  const stop = watchReach('alex.vyre.run', (r) => heard.push(r), page.s, async (n) => {
    knocks.push(n);
    return answers.shift();
  });
  await settle();
  assert.deepEqual(knocks, ['alex.vyre.run']);
  assert.deepEqual(heard, [false], 'the first answer is told');
  assert.equal([...page.timers.values()][0].ms, PROBE_EVERY_MS);
  page.tick();
  await settle();
  assert.deepEqual(heard, [false], 'the same answer is not told again');
  page.tick();
  await settle();
  assert.deepEqual(heard, [false, true]);
  assert.equal(page.timers.size, 0, 'reached: no more knocking');
  // Shown again: one more knock, nothing new to tell.
  page.wake();
  await settle();
  assert.equal(knocks.length, 4);
  assert.deepEqual(heard, [false, true]);
  stop();
  assert.equal(page.wakers.size, 0);
});

test('a hidden page knocks no more until it is shown again; never faster than every 5 s', async () => {
  const page = fakePage();
  page.shown = false;
  let knocks = 0;
  const stop = watchReach('alex.vyre.run', () => {}, page.s, async () => (knocks++, false), 10);
  await settle();
  assert.equal(knocks, 1);
  assert.equal(page.timers.size, 0, 'hidden: no timer');
  page.shown = true;
  page.wake();
  await settle();
  assert.equal(knocks, 2);
  assert.equal([...page.timers.values()][0].ms, 5000, 'asked for 10 ms, waits 5 s');
  stop();
  assert.equal(page.timers.size, 0, 'the stop clears the timer');
});

test('after the stop nothing is told, an answer under way included, and no timer is left', async () => {
  const page = fakePage();
  let answer;
  const heard = [];
  const stop = watchReach('alex.vyre.run', (r) => heard.push(r), page.s, () => new Promise((r) => (answer = r)));
  // Woken while the first knock runs: no second knock at the same time.
  page.wake();
  stop();
  answer(true);
  await settle();
  assert.deepEqual(heard, []);
  assert.equal(page.timers.size, 0);
  assert.equal(page.wakers.size, 0);
});
