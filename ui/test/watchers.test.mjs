// Watchers (issue 23): where a watcher stands in words, its schedule in words, its last and next
// run, what a run or a test did, the order of the list, which addresses may be links, and its
// files as the person reads them before turning it on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  canPause,
  canTurnOn,
  clockWords,
  lastFailed,
  lastRunWords,
  leftOutWords,
  nextRunWords,
  ranWords,
  rewrittenSinceRead,
  rewrittenWords,
  safeUrl,
  scheduleIn,
  scriptNames,
  sourceNote,
  sourceOrder,
  scheduleWords,
  sortWatchers,
  statusWords,
  testedWords,
  watcherState,
} from '../.test-build/watchers.js';
import { sourceFiles, watchItems } from '../.test-build/ssr/entry.js';

const at = (iso) => Date.parse(iso);
const MIN = 60_000;
/** Thursday 24 December 2026, 10:00 in London (UTC in winter). */
const NOW = at('2026-12-24T10:00:00Z');
const LONDON = 'Europe/London';

/** A watcher as watchers.list says it: a new one, waiting for the person, on a UTC box, unless
 * `fields` say. */
const watcher = (name, fields = {}) => ({
  name,
  project: 'home',
  schedule: '*/15 * * * *',
  emits: 'item',
  needs: [],
  paused: true,
  waiting: true,
  disabled: null,
  failures: 0,
  last_run_at: null,
  last_ok_at: null,
  last_error: null,
  next_run_at: null,
  zone: 'UTC',
  created_by: 'person',
  filed: 0,
  problem: null,
  ...fields,
});

const on = { paused: false, waiting: false };

test('where a watcher stands: waiting for the person, paused, on, turned off after failures, broken', () => {
  assert.equal(statusWords(watcher('a'), 'UTC'), 'Waiting for you to turn it on');
  assert.equal(watcherState(watcher('a')), 'waiting');
  // A session rewrote it after it ran: it waits for the person again.
  assert.equal(statusWords(watcher('a', { last_run_at: NOW - MIN }), 'UTC'), 'Waiting for you to turn it on');
  // The person paused it: paused, whether or not it ran.
  assert.equal(statusWords(watcher('a', { waiting: false, last_run_at: NOW - MIN }), 'UTC'), 'Paused');
  assert.equal(watcherState(watcher('a', { waiting: false })), 'paused');
  assert.equal(statusWords(watcher('a', { ...on, next_run_at: NOW + MIN }), 'UTC'), 'Runs every 15 minutes');
  assert.equal(statusWords(watcher('a', { ...on, schedule: 'webhook' }), 'UTC'), 'Runs when its web address is called');
  const off = watcher('a', { ...on, disabled: 'the site said 503 (exit status: 1)', failures: 3, last_run_at: NOW - MIN });
  assert.equal(statusWords(off), 'Turned off after 3 failures: the site said 503 (exit status: 1)');
  assert.equal(watcherState(off), 'off');
  assert.equal(statusWords({ ...off, failures: 1 }), 'Turned off after 1 failure: the site said 503 (exit status: 1)');
  assert.equal(statusWords({ ...off, failures: 0 }), 'Turned off: the site said 503 (exit status: 1)', 'no count to say: none said');
  // Turned off and paused: turned off says more (turning it on clears both).
  assert.equal(watcherState({ ...off, paused: true }), 'off');
  // Turned off, then rewritten by a session: a new script, waiting for the person (its old
  // failure is said as its last run).
  assert.equal(watcherState({ ...off, paused: true, waiting: true }), 'waiting');
  const broken = watcher('a', { ...on, problem: 'watch.js has no watch()' });
  assert.equal(statusWords(broken), 'Something is wrong with it: watch.js has no watch()');
  assert.equal(watcherState(broken), 'broken');
});

test('Turn on is offered for one that is not on, Pause for one that is; neither for a broken one', () => {
  assert.equal(canTurnOn(watcher('a')), true);
  assert.equal(canTurnOn(watcher('a', { waiting: false, last_run_at: 1 })), true);
  assert.equal(canTurnOn(watcher('a', { ...on, disabled: 'x', failures: 5 })), true);
  assert.equal(canTurnOn(watcher('a', on)), false);
  assert.equal(canPause(watcher('a', on)), true);
  assert.equal(canPause(watcher('a')), false);
  assert.equal(canPause(watcher('a', { waiting: false })), false);
  assert.equal(canPause(watcher('a', { ...on, disabled: 'x', failures: 5 })), false);
  // vyred refuses both until its files are put right.
  const broken = watcher('a', { problem: 'watcher.json: expected a schedule', project: null, schedule: null, emits: null });
  assert.equal(canTurnOn(broken), false);
  assert.equal(canPause({ ...broken, ...on }), false);
});

test('a schedule in words: minutes, hours, times of day, days of the week and month', () => {
  const cases = {
    '* * * * *': 'every minute',
    '*/1 * * * *': 'every minute',
    '*/15 * * * *': 'every 15 minutes',
    '0,20,40 * * * *': 'every 20 minutes',
    '0 * * * *': 'every hour',
    '5 * * * *': 'every hour at 5 minutes past',
    '1 * * * *': 'every hour at 1 minute past',
    '5,35 * * * *': 'every hour at 5 and 35 minutes past',
    '0 */2 * * *': 'every 2 hours',
    '30 */6 * * *': 'every 6 hours at 30 minutes past',
    '0 9 * * *': 'every day at 09:00',
    '30 8 * * 1-5': 'on weekdays at 08:30',
    '0 10 * * 0,6': 'at weekends at 10:00',
    '0 9 * * 1': 'every Monday at 09:00',
    '0 9 * * 7': 'every Sunday at 09:00',
    '0 9 * * 1,3,5': 'on Monday, Wednesday and Friday at 09:00',
    '0 9 * * mon-fri': 'on weekdays at 09:00',
    '0 9 * * MON,wed': 'on Monday and Wednesday at 09:00',
    '0 10 * * sat,sun': 'at weekends at 10:00',
    '0 7 25 dec *': 'every year on 25 December at 07:00',
    '0 9,17 * * *': 'every day at 09:00 and 17:00',
    '0 6 1 * *': 'on the 1st of every month at 06:00',
    '0 6 1,15 * *': 'on the 1st and 15th of every month at 06:00',
    '0 6 22 * *': 'on the 22nd of every month at 06:00',
    '0 6 11 * *': 'on the 11th of every month at 06:00',
    '0 7 25 12 *': 'every year on 25 December at 07:00',
    '@hourly': 'every hour',
    '@daily': 'every day at 00:00',
    '@weekly': 'every Sunday at 00:00',
    '@monthly': 'on the 1st of every month at 00:00',
    webhook: 'when its web address is called',
  };
  assert.equal(scheduleWords(null), 'on no schedule it can read', 'a broken watcher.json');
  for (const [cron, words] of Object.entries(cases)) assert.equal(scheduleWords(cron), words, cron);
});

test('a schedule too odd to say in words is given as written', () => {
  for (const cron of ['0 9 1-7 * 1', '*/5 9-17 * * 1-5', '0 0-23 * * *', 'H * * * *', '1 2 3', '0 9 * 1-3 *', '60 * * * *', '0 9 * * mon-fri/2', '0 9 * * funday', '0-30/5 * * * *']) {
    assert.equal(scheduleWords(cron), `on the schedule “${cron}”`, cron);
  }
});

test('a schedule says its time zone when the person\'s is another and its words would not hold there', () => {
  const w = (schedule, zone = 'UTC') => ({ schedule, zone });
  // The same zone, or the same by another name: nothing added.
  assert.equal(scheduleIn(w('30 8 * * 1-5'), 'UTC', NOW), 'on weekdays at 08:30');
  assert.equal(scheduleIn(w('30 8 * * 1-5', 'Etc/UTC'), 'UTC', NOW), 'on weekdays at 08:30');
  assert.equal(scheduleIn(w('0 9 * * *', 'Europe/Paris'), 'Europe/Paris', NOW), 'every day at 09:00');
  // Times of day and days are the schedule's clock's.
  assert.equal(scheduleIn(w('0 9 * * 1-5'), 'Europe/Paris', NOW), 'on weekdays at 09:00 (UTC)');
  assert.equal(scheduleIn(w('@daily'), 'Asia/Tokyo', NOW), 'every day at 00:00 (UTC)');
  assert.equal(scheduleIn(w('0 9 * * *', 'America/New_York'), 'Europe/London', NOW), 'every day at 09:00 (America/New York)');
  assert.equal(scheduleIn(w('0 9 * * *', 'Etc/UTC'), 'Asia/Tokyo', NOW), 'every day at 09:00 (UTC)', 'a box\'s /etc/localtime name');
  // London is UTC in winter, not in summer: still another clock.
  assert.equal(scheduleIn(w('0 9 * * *'), LONDON, NOW), 'every day at 09:00 (UTC)');
  assert.equal(scheduleIn(w('0 9 1-7 * 1'), 'Europe/Paris', NOW), 'on the schedule “0 9 1-7 * 1” (UTC)');
  // Every so many minutes or hours holds on any clock.
  for (const cron of ['*/15 * * * *', '* * * * *', '0 * * * *', '0 */2 * * *', '@hourly', 'webhook']) {
    assert.equal(scheduleIn(w(cron), 'Asia/Kolkata', NOW), scheduleWords(cron), cron);
  }
  // "At 5 minutes past" holds a whole number of hours away (Paris), not half an hour (India).
  assert.equal(scheduleIn(w('5 * * * *'), 'Europe/Paris', NOW), 'every hour at 5 minutes past');
  assert.equal(scheduleIn(w('5 * * * *'), 'Asia/Kolkata', NOW), 'every hour at 5 minutes past (UTC)');
  assert.equal(scheduleIn(w('30 */6 * * *'), 'Asia/Kolkata', NOW), 'every 6 hours at 30 minutes past (UTC)');
  // A zone this browser does not know is said, not guessed at.
  assert.equal(scheduleIn(w('0 9 * * *', 'Mars/Olympus'), 'UTC', NOW), 'every day at 09:00 (Mars/Olympus)');
  assert.equal(scheduleIn(w('5 * * * *', 'Mars/Olympus'), 'UTC', NOW), 'every hour at 5 minutes past (Mars/Olympus)');
  assert.equal(scheduleIn(w(null), 'Europe/Paris', NOW), 'on no schedule it can read');
  // As the row says it.
  assert.equal(statusWords(watcher('a', { ...on, schedule: '0 9 * * 1-5' }), 'Europe/Paris', NOW), 'Runs on weekdays at 09:00 (UTC)');
  assert.equal(statusWords(watcher('a', { ...on, schedule: '0 9 * * 1-5' }), 'UTC', NOW), 'Runs on weekdays at 09:00');
});

test('the next run: when, and how long until within the day; none when it does not run by itself', () => {
  assert.equal(nextRunWords({ next_run_at: NOW + 5 * MIN }, NOW, LONDON), 'today 10:05, in 5 min');
  assert.equal(nextRunWords({ next_run_at: at('2026-12-25T09:00:00Z') }, NOW, LONDON), 'tomorrow 09:00, in 23 h');
  assert.equal(nextRunWords({ next_run_at: at('2026-12-28T09:00:00Z') }, NOW, LONDON), 'Mon 28 Dec 09:00');
  assert.equal(nextRunWords({ next_run_at: null }, NOW, LONDON), null);
});

test('the last run: not yet, when, or when and why it failed', () => {
  assert.equal(lastRunWords(watcher('a'), NOW, LONDON), 'Not run yet');
  const ok = { last_run_at: NOW - 10 * MIN, last_ok_at: NOW - 10 * MIN, last_error: null };
  assert.equal(lastRunWords(ok, NOW, LONDON), 'Last ran today 09:50');
  // An old error, with a good run since: it went well.
  assert.equal(lastRunWords({ ...ok, last_error: 'timed out' }, NOW, LONDON), 'Last ran today 09:50');
  assert.equal(lastFailed({ ...ok, last_error: 'timed out' }), false);
  const failed = { last_run_at: NOW - 10 * MIN, last_ok_at: NOW - 70 * MIN, last_error: 'timed out' };
  assert.equal(lastFailed(failed), true);
  assert.equal(lastRunWords(failed, NOW, LONDON), 'Last run today 09:50 failed: timed out');
  assert.equal(lastRunWords({ ...failed, last_ok_at: null }, NOW, LONDON), 'Last run today 09:50 failed: timed out', 'never went well');
  assert.equal(lastRunWords(failed, NOW, LONDON, false), 'Last run today 09:50', 'the error said elsewhere');
});

test('what a run did and what a test found, in a line', () => {
  assert.equal(ranWords({ ok: true, error: null, filed: 2 }), 'Filed 2 new items.');
  assert.equal(ranWords({ ok: true, error: null, filed: 1 }), 'Filed 1 new item.');
  assert.equal(ranWords({ ok: true, error: null, filed: 0 }), 'Nothing new.');
  assert.equal(ranWords({ ok: false, error: 'the site said 503 (exit status: 1)', filed: 0 }), 'It failed: the site said 503 (exit status: 1)');
  assert.equal(ranWords({ ok: false, error: null, filed: 0 }), 'It failed: no reason given');
  const item = { title: 'hello', body: null, url: null, id: 'x', at: null };
  assert.equal(testedWords({ ok: true, error: null, items: [item, item], took_ms: 420 }), 'Found 2 items in 420 ms. Nothing was filed.');
  assert.equal(testedWords({ ok: true, error: null, items: [item], took_ms: 1530 }), 'Found 1 item in 1.5 s. Nothing was filed.');
  assert.equal(testedWords({ ok: true, error: null, items: [], took_ms: 0.2 }), 'Found nothing in 1 ms. Nothing was filed.');
  assert.equal(testedWords({ ok: false, error: 'SyntaxError: Unexpected token (exit status: 1)', items: [], took_ms: 12 }), 'It failed after 12 ms: SyntaxError: Unexpected token (exit status: 1)');
  const needs = 'it needs the vault item "example-token", which it is given when the person turns it on';
  assert.equal(testedWords({ ok: false, error: needs, items: [], took_ms: 3 }), `It failed after 3 ms: ${needs}`, 'vyred\'s words, nothing added');
});

test('a log line\'s time is the person\'s clock, to the second', () => {
  assert.equal(clockWords(at('2026-12-24T15:20:07Z'), LONDON), '15:20:07');
  assert.equal(clockWords(at('2026-12-24T00:00:00Z'), 'Asia/Tokyo'), '09:00:00');
});

test('the list: those that need the person first, then the running ones soonest first, then the paused', () => {
  const list = [
    watcher('paused-b', { waiting: false, last_run_at: 1 }),
    watcher('on-later', { ...on, next_run_at: NOW + 60 * MIN }),
    watcher('new-one'),
    watcher('on-webhook', { ...on, schedule: 'webhook' }),
    watcher('paused-a', { waiting: false }),
    watcher('on-soon', { ...on, next_run_at: NOW + MIN }),
    watcher('off', { ...on, disabled: 'x', failures: 3 }),
    watcher('rewritten', { last_run_at: 1 }),
    watcher('broken', { problem: 'no watch.js' }),
  ];
  assert.deepEqual(
    sortWatchers(list).map((w) => w.name),
    ['broken', 'new-one', 'rewritten', 'off', 'on-soon', 'on-later', 'on-webhook', 'paused-a', 'paused-b'],
  );
  assert.equal(list[0].name, 'paused-b', 'the list given is left as it was');
});

test('only http and https addresses are links', () => {
  assert.equal(safeUrl('https://example.com/x'), 'https://example.com/x');
  assert.equal(safeUrl('http://example.com'), 'http://example.com/');
  for (const bad of ['javascript:alert(1)', 'JaVaScRiPt:alert(1)', ' javascript:alert(1)', 'data:text/html,<b>x</b>', 'vbscript:x', 'file:///etc/passwd', 'example.com/x', '', null, undefined]) {
    assert.equal(safeUrl(bad), null, String(bad));
  }
});

test('a filed item, as the screen shows it: a script\'s words are text, its address a link only when http(s)', () => {
  const item = (id, fields) => ({ id, watcher: 'w', project: 'home', title: 'hello', body: null, url: null, at: null, filed_at: NOW, ...fields });
  const html = watchItems({
    now: NOW,
    items: [
      item(1, { title: 'ok', url: 'https://example.com/x' }),
      item(2, { title: '<img src=x onerror=alert(1)>', body: '<script>alert(2)</script><b>bold</b>', url: 'javascript:alert(3)' }),
      item(3, { title: 'data', url: 'data:text/html,<script>alert(4)</script>' }),
    ],
  });
  assert.match(html, /<a class="list-title title[^"]*" href="https:\/\/example\.com\/x" target="_blank" rel="noopener noreferrer"/);
  assert.equal((html.match(/<a /g) ?? []).length, 1, 'only the https address is a link');
  assert.doesNotMatch(html, /javascript:|data:text/);
  assert.doesNotMatch(html, /<img|<script|<b>/, 'no tag from a script reaches the page');
  assert.match(html, /&lt;img src=x onerror=alert\(1\)>/);
  assert.match(html, /&lt;script>alert\(2\)&lt;\/script>&lt;b>bold&lt;\/b>/);
});

test('a filed item names its project: a link to its page where the screen opens it, left out on that page', () => {
  const items = [{ id: 1, watcher: 'w', project: 'Client work / 2026', title: 'hello', body: null, url: null, at: null, filed_at: NOW }];
  const plain = watchItems({ now: NOW, items });
  assert.match(plain, /<span class="badge accent[^"]*">Client work \/ 2026<\/span>/, 'no way to open it: a badge');
  assert.doesNotMatch(plain, /<a /);
  const linked = watchItems({ now: NOW, items, onproject: () => {} });
  assert.match(linked, /<a class="badge accent project[^"]*" href="\/app\/p\/Client%20work%20%2F%202026"[^>]*data-testid="project-link"[^>]*>Client work \/ 2026<\/a>/);
  const onItsPage = watchItems({ now: NOW, items, showProject: false });
  assert.doesNotMatch(onItsPage, /Client work/);
  assert.match(onItsPage, /<span class="badge[^"]*">w<\/span>/, 'its watcher is still named');
});

/** A watcher's files as watchers.source gives them: watcher.json first, then the rest by name. */
const settings = (fields = {}) => ({ name: 'watcher.json', text: JSON.stringify({ name: 'w', project: 'home', schedule: '*/15 * * * *', ...fields }, null, 2) });
const file = (name, text = `// ${name}`) => ({ name, text });

test('which of its files it runs: watch.js, or what its watcher.json\'s run names', () => {
  assert.deepEqual(scriptNames([settings(), file('lib.js'), file('watch.js')]), ['watch.js']);
  assert.deepEqual(scriptNames([settings({ run: ['python3', 'watch.py'] }), file('watch.js'), file('watch.py')]), ['watch.py']);
  assert.deepEqual(scriptNames([settings({ run: ['./check.sh', '--quiet'] }), file('check.sh')]), ['check.sh'], 'the program itself, in its folder');
  assert.deepEqual(scriptNames([settings({ run: ['curl', 'https://example.com'] })]), [], 'a program from elsewhere: none of its files');
  assert.deepEqual(scriptNames([settings(), file('other.js')]), [], 'no watch.js: none');
  assert.deepEqual(scriptNames([{ name: 'watcher.json', text: '{ not json' }, file('watch.js')]), [], 'watcher.json unreadable: no guess');
  assert.deepEqual(scriptNames([{ name: 'watcher.json', text: '(300 KiB: too large to show)' }, file('watch.js')]), []);
  assert.deepEqual(scriptNames([file('watch.js')]), ['watch.js'], 'no watcher.json: the default');
  assert.deepEqual(scriptNames([]), []);
});

test('the files in the order they are read: the script opened first, the others, watcher.json shut last', () => {
  const shown = sourceOrder([settings(), file('data.json'), file('lib.js'), file('watch.js')]);
  assert.deepEqual(
    shown.map((f) => [f.name, f.kind, f.open]),
    [
      ['watch.js', 'script', true],
      ['data.json', 'other', true],
      ['lib.js', 'other', true],
      ['watcher.json', 'settings', false],
    ],
  );
  assert.equal(shown[0].text, '// watch.js', 'its text as given');
  // Its run names two files: both first, in vyred's order.
  assert.deepEqual(
    sourceOrder([settings({ run: ['node', 'b.js', 'a.js'] }), file('a.js'), file('b.js'), file('c.txt')]).map((f) => f.name),
    ['a.js', 'b.js', 'c.txt', 'watcher.json'],
  );
  // A note in place of a file's text (too large, not text) is shown as given.
  assert.deepEqual(sourceOrder([settings(), { name: 'watch.js', text: '(300 KiB: too large to show)' }])[0], { name: 'watch.js', text: '(300 KiB: too large to show)', kind: 'script', open: true });
  assert.deepEqual(sourceOrder([]), []);
});

test('one a session wrote says so plainly above what it runs; the person\'s own says nothing', () => {
  assert.equal(sourceNote('person', true), null);
  assert.equal(sourceNote('person', false), null);
  assert.equal(sourceNote('0191b2c3-thread', true), 'Written by Claude in a chat. Read what it runs before you turn it on.');
  assert.equal(sourceNote('0191b2c3-thread', false), 'Written by Claude in a chat.', 'once on, no call to read before turning it on');
});

test('its files as shown: plain text in monospace blocks, the script opened, watcher.json shut', () => {
  const html = sourceFiles({
    files: [
      settings({ needs: ['token'] }),
      file('watch.js', 'export async function watch({ emit }) {\n  emit({ title: \'<img src=x onerror=alert(1)>\' });\n}\n// <script>alert(2)</script>'),
      file('empty.txt', ''),
    ],
  });
  const opened = [...html.matchAll(/<details[^>]*data-name="([^"]+)"[^>]*>/g)].map((m) => [m[1], /\sopen(=""|\s|>)/.test(m[0])]);
  assert.deepEqual(opened, [
    ['watch.js', true],
    ['empty.txt', true],
    ['watcher.json', false],
  ]);
  assert.match(html, /<pre class="code[^"]*" data-testid="watcher-source-text">export async function watch/);
  assert.doesNotMatch(html, /<img|<script/, 'no tag from a script reaches the page');
  assert.match(html, /&lt;img src=x onerror=alert\(1\)>/);
  assert.match(html, /&lt;script>alert\(2\)&lt;\/script>/);
  assert.match(html, /the script it runs/);
  assert.match(html, /Empty\./);
  assert.match(sourceFiles({ files: [] }), /Its folder has no files\./);
});

test('files vyred left out are said under the others; files in a subfolder are named by their path', () => {
  assert.equal(leftOutWords(0), null);
  assert.equal(leftOutWords(1), 'and 1 more file not shown');
  assert.equal(leftOutWords(12), 'and 12 more files not shown');
  const html = sourceFiles({ files: [settings({ run: ['node', 'lib/main.js'] }), file('lib/main.js'), file('lib/util.js')], leftOut: 3 });
  assert.deepEqual([...html.matchAll(/data-name="([^"]+)"/g)].map((m) => m[1]), ['lib/main.js', 'lib/util.js', 'watcher.json'], 'the script its run names, in lib/');
  assert.match(html, /data-testid="watcher-source-left-out">and 3 more files not shown</);
  assert.doesNotMatch(sourceFiles({ files: [settings(), file('watch.js')], leftOut: 0 }), /watcher-source-left-out/);
  assert.doesNotMatch(sourceFiles({ files: [settings(), file('watch.js')] }), /not shown/);
});

test('rewritten since it was read: only vyred\'s 409 "changed" is that refusal', () => {
  const refused = (status, code) => Object.assign(new Error('watcher "w" was rewritten since you read it'), { status, code });
  assert.equal(rewrittenSinceRead(refused(409, 'changed')), true);
  assert.equal(rewrittenSinceRead(refused(409, 'exists')), false);
  assert.equal(rewrittenSinceRead(refused(400, 'changed')), false);
  assert.equal(rewrittenSinceRead(refused(404, 'unknown_watcher')), false);
  assert.equal(rewrittenSinceRead(new Error('changed')), false);
  assert.equal(rewrittenSinceRead(null), false);
  assert.equal(rewrittenSinceRead('changed'), false);
  assert.equal(
    rewrittenWords('hello-news'),
    '“hello-news” was rewritten while you were reading it, so it was not turned on. What it runs now is below: read it before you turn it on.',
  );
});
