// The chat's Markdown, Code and Diff components in Chromium, on the fixture page
// (ui/fixtures/, built by `npm run build:fixtures` into ui/dist-fixtures/; it needs no vyred).
// The page is served twice: plainly, so the sanitising alone must stop every script (no CSP to
// fall back on), and under /csp/ with vyred's own Content-Security-Policy, as the app is served.
// Screenshots at 1440×900 and 390×844, light and dark, land in tests/browser/screenshots/.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { extname, join, normalize } from 'node:path';
import { ROOT } from './lib/rig.mjs';
import { SHOTS, openBrowser } from './lib/browser.mjs';

const UI = join(ROOT, 'ui');
const DIST = join(UI, 'dist-fixtures');
const WIDE = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };
/** vyred's CSP for the app (daemon/src/surfaces/api/app.rs). */
const CSP = "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml' };

let server;
let base;
let browser;
let page;
/** Every request the pages made, every dialog they opened, every error they threw. */
const requests = [];
const dialogs = [];
const errors = [];

function serve() {
  return new Promise((ok) => {
    const s = http.createServer((req, res) => {
      let path = new URL(req.url, 'http://x').pathname;
      const csp = path.startsWith('/csp/');
      if (csp) path = path.slice(4);
      if (path === '/' || path === '/fixtures/') path = '/fixtures/index.html';
      const file = normalize(join(DIST, path));
      if (!file.startsWith(DIST) || !existsSync(file)) {
        res.writeHead(404).end('not found');
        return;
      }
      const headers = { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' };
      if (csp) headers['content-security-policy'] = CSP;
      res.writeHead(200, headers).end(readFileSync(file));
    });
    s.listen(0, '127.0.0.1', () => ok(s));
  });
}

before(async () => {
  execFileSync('npm', ['run', '--silent', 'build:fixtures'], { cwd: UI, stdio: 'inherit' });
  server = await serve();
  base = `http://127.0.0.1:${server.address().port}`;
  browser = await openBrowser();
  page = browser.page;
  watch(page);
  await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
});

after(async () => {
  await browser?.close();
  server?.close();
});

function watch(p) {
  p.on('request', (r) => requests.push(r.url()));
  p.on('dialog', (d) => {
    dialogs.push(d.message());
    d.dismiss().catch(() => {});
  });
  p.on('pageerror', (e) => errors.push(String(e)));
}

async function open(path = '/fixtures/index.html') {
  await page.setViewportSize(WIDE);
  await page.goto(`${base}${path}`);
  await page.getByTestId('fixtures').waitFor();
}

test('no script in the source runs, nothing is fetched from elsewhere, only safe links are links', async () => {
  requests.length = 0;
  await open();
  await page.locator('[data-case=code] code.hl[data-highlighted]').first().waitFor();
  // Hover and click over every piece of raw HTML shown as text: nothing may react.
  for (const raw of await page.locator('[data-case=hostile] .raw').all()) {
    await raw.hover();
    await raw.click();
  }
  await page.waitForTimeout(300);
  assert.deepEqual(dialogs, []);
  assert.deepEqual(errors, []);
  assert.equal(await page.evaluate(() => window.__pwned ?? null), null);
  const found = await page.evaluate(() => {
    const root = document.querySelector('[data-testid=fixtures]');
    const all = [...root.querySelectorAll('*')];
    return {
      bad: all.filter((e) => /^(script|img|iframe|svg|math|style|object|embed|link|meta|base|form|details|textarea)$/i.test(e.tagName)).map((e) => e.tagName),
      handlers: all.flatMap((e) => [...e.attributes].filter((a) => /^on/i.test(a.name)).map((a) => `${e.tagName}[${a.name}]`)),
      links: [...root.querySelectorAll('a')].map((a) => ({ href: a.getAttribute('href'), target: a.target, rel: a.rel })),
    };
  });
  assert.deepEqual(found.bad, []);
  assert.deepEqual(found.handlers, []);
  assert.ok(found.links.length >= 6);
  for (const l of found.links) {
    assert.match(l.href, /^(https?:\/\/|mailto:)/, l.href);
    assert.equal(l.target, '_blank');
    assert.equal(l.rel, 'noopener noreferrer');
  }
  // The payloads are on the page as text.
  const hostile = await page.locator('[data-case=hostile]').innerText();
  assert.match(hostile, /<script>window\.__pwned = 'script'/);
  assert.match(hostile, /<img src="x" onerror=/);
  // Everything came from this server: no remote image, no script elsewhere.
  const elsewhere = requests.filter((u) => !u.startsWith(`${base}/`));
  assert.deepEqual(elsewhere, []);
  assert.ok(!requests.some((u) => u.endsWith('/x')), 'an <img src=x> was requested');
});

test('code is highlighted after the first paint, from a chunk only code loads', async () => {
  requests.length = 0;
  await open('/fixtures/index.html?case=prose');
  await page.waitForTimeout(300);
  assert.ok(!requests.some((u) => /highlighter-/.test(u)), 'a page without code loaded the highlighter');
  const html = readFileSync(join(DIST, 'fixtures/index.html'), 'utf8');
  assert.doesNotMatch(html, /highlighter-/, 'the highlighter is preloaded with the page');

  await open();
  await page.locator('[data-case=code] code.hl[data-highlighted=rust]').first().waitFor();
  assert.ok(requests.some((u) => /highlighter-[\w-]+\.js$/.test(u)));
  const counts = await page.evaluate(() => {
    const langs = {};
    for (const block of document.querySelectorAll('[data-case=code] [data-testid=code-block]')) {
      const hl = block.querySelector('code.hl');
      langs[block.querySelector('.lang').textContent] = hl.dataset.highlighted ? hl.querySelectorAll('span[class^=hljs-]').length : 0;
    }
    return langs;
  });
  for (const lang of ['Rust', 'TypeScript', 'Shell', 'JSON', 'Python', 'Diff', 'SQL', 'YAML', 'TOML', 'Go', 'CSS', 'HTML']) {
    assert.ok(counts[lang] > 0, `${lang}: ${JSON.stringify(counts)}`);
  }
  assert.equal(counts.text, 0);
  assert.equal(counts.brainfuck, 0);
  // The highlighted text is the code, exactly.
  const same = await page.evaluate(() =>
    [...document.querySelectorAll('[data-case=code] [data-testid=code-block]')].every((b) => {
      const [plain, hl] = b.querySelectorAll('code');
      return !hl.dataset.highlighted || hl.textContent === plain.textContent;
    }),
  );
  assert.ok(same);
});

test('the copy button copies the code (Clipboard API, and the fallback without it)', async () => {
  await open();
  const block = page.locator('[data-case=code] [data-testid=code-block]').first();
  const code = await block.locator('code').first().textContent();
  assert.match(code, /fn count\(text: &str\)/);
  await block.getByTestId('code-copy').click();
  await block.getByText('Copied').waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), code);

  // A page without the Clipboard API (a phone on a box's plain-http address).
  const other = await browser.context.newPage();
  watch(other);
  await other.addInitScript(() => Object.defineProperty(navigator, 'clipboard', { value: undefined }));
  await other.goto(`${base}/fixtures/index.html?case=code`);
  const second = other.locator('[data-testid=code-block]').nth(1);
  const ts = await second.locator('code').first().textContent();
  await second.getByTestId('code-copy').click();
  await second.getByText('Copied').waitFor();
  await other.close();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), ts);
});

test('a 200-delta stream changes only the last block\'s DOM; finished blocks keep their nodes', async () => {
  await open('/fixtures/index.html?case=stream');
  const full = await page.evaluate(() => window.vyreFixtures.STREAM);
  await page.evaluate(() => window.vyreFixtures.stream('', true));
  await page.evaluate(() => {
    const root = document.querySelector('[data-testid=stream] .md');
    window.__records = [];
    window.__observer = new MutationObserver((r) => window.__records.push(...r));
    window.__observer.observe(root, { subtree: true, childList: true, characterData: true, attributes: true });
    window.__kept = [];
  });
  const cuts = [];
  for (let i = 1; i <= 200; i++) cuts.push(Math.round((full.length * i) / 200));
  let touched = 0;
  for (const end of cuts) {
    const r = await page.evaluate(async (text) => {
      const root = document.querySelector('[data-testid=stream] .md');
      const before = [...root.children];
      window.__records = [];
      await window.vyreFixtures.stream(text, true);
      const records = [...window.__records, ...window.__observer.takeRecords()];
      const last = before[before.length - 1];
      const top = (n) => {
        let e = n.nodeType === 1 ? n : n.parentElement;
        while (e && e.parentElement !== root) e = e.parentElement;
        return e;
      };
      const bad = [];
      const blocks = new Set();
      for (const rec of records) {
        if (rec.target === root) {
          for (const n of rec.removedNodes) if (n.nodeType === 1 && n !== last) bad.push(`removed ${n.tagName}`);
          for (const n of rec.addedNodes) if (n.nodeType === 1 && before.includes(n) && n !== last) bad.push(`re-added ${n.tagName}`);
          continue;
        }
        const b = top(rec.target);
        blocks.add(b);
        if (b && before.includes(b) && b !== last) bad.push(`${rec.type} in finished <${b.tagName}> "${b.textContent.slice(0, 30)}"`);
      }
      const after = [...root.children];
      const kept = before.slice(0, -1).every((e, i) => after[i] === e);
      return { bad, kept, blocks: blocks.size, n: after.length };
    }, full.slice(0, end));
    assert.deepEqual(r.bad, [], `at ${end}`);
    assert.ok(r.kept, `a finished block was replaced at ${end}`);
    assert.ok(r.blocks <= 2, `${r.blocks} blocks changed at ${end}`);
    touched += r.blocks;
  }
  await page.evaluate(() => window.vyreFixtures.stream(window.vyreFixtures.STREAM, false));
  const blocks = await page.evaluate(() => [...document.querySelector('[data-testid=stream] .md').children].map((e) => e.tagName));
  assert.deepEqual(blocks, ['H2', 'P', 'UL', 'DIV', 'DIV', 'P']);
  await page.locator('[data-testid=stream] code.hl[data-highlighted=typescript]').waitFor();
  assert.ok(touched <= 220, `${touched} block updates over 200 deltas`);
});

test('diffs: changed words marked, the file highlighted, folds open, side by side on a wide screen', async () => {
  await open('/fixtures/index.html?case=diff');
  const edit = page.locator('[data-diff=edit] [data-testid=diff]');
  await page.locator('[data-diff=edit] [data-testid=diff][data-highlighted=yes]').waitFor();
  assert.equal(await edit.getByTestId('diff-added').innerText(), '+4');
  assert.equal(await edit.getByTestId('diff-removed').innerText(), '−4');
  const marked = await edit.locator('tr.del .em').allInnerTexts();
  assert.ok(marked.includes('count'), JSON.stringify(marked));
  assert.ok((await edit.locator('tr.ins .em').allInnerTexts()).includes('quantity'));
  assert.ok((await edit.locator('span.hljs-keyword').count()) > 0);

  const big = page.locator('[data-diff=big] [data-testid=diff]');
  const gaps = big.getByTestId('diff-gap');
  const rowsBefore = await big.locator('tr').count();
  assert.ok((await gaps.count()) >= 2);
  assert.match(await gaps.first().innerText(), /unchanged lines/);
  await gaps.first().click();
  assert.ok((await big.locator('tr').count()) > rowsBefore);
  assert.ok((await big.locator('td.no').first().innerText()).match(/^\d+$/), 'line numbers where known');

  const write = page.locator('[data-diff=write] [data-testid=diff]');
  assert.equal(await write.locator('tr.ins').count(), 6);
  assert.equal(await write.locator('tr.del').count(), 0);
  assert.match(await write.innerText(), /new file/);

  const multi = page.locator('[data-diff=multi] [data-testid=diff]');
  assert.match(await multi.innerText(), /2 edits/);
  await multi.getByTestId('diff-split').click();
  await multi.locator('table.split').first().waitFor();
  assert.ok((await multi.locator('table.split td.c.del').count()) >= 1);
  await multi.getByTestId('diff-split').click();
  await page.setViewportSize(PHONE);
  // The diff hears the new width when the page lays out again: wait for it, not for luck.
  await multi.getByTestId('diff-split').waitFor({ state: 'detached', timeout: 5000 });
  assert.equal(await multi.getByTestId('diff-split').count(), 0, 'no side by side on a phone');
  assert.equal(await multi.locator('table.split').count(), 0);
});

test('screenshots: 1440×900 and 390×844, light and dark; the phone never scrolls sideways', async () => {
  mkdirSync(SHOTS, { recursive: true });
  for (const scheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: scheme });
    await open();
    await page.evaluate(() => localStorage.removeItem('vyre.diff.split'));
    await open();
    await page.locator('[data-case=code] code.hl[data-highlighted=rust]').first().waitFor();
    await page.locator('[data-diff=edit] [data-testid=diff][data-highlighted=yes]').waitFor();
    await page.screenshot({ path: join(SHOTS, `markdown-${scheme}-1440.png`), fullPage: true });
    await page.setViewportSize(PHONE);
    await page.waitForTimeout(150);
    await page.screenshot({ path: join(SHOTS, `markdown-${scheme}-390.png`), fullPage: true });
    const wide = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.equal(wide, 0, `the phone layout scrolls sideways by ${wide}px (${scheme})`);
  }
  // The diffs side by side on the wide screen.
  await open('/fixtures/index.html?case=diff');
  await page.locator('[data-diff=big] [data-testid=diff-split]').click();
  await page.locator('[data-diff=big] table.split').first().waitFor();
  await page.screenshot({ path: join(SHOTS, 'markdown-diff-split-1440.png'), fullPage: true });
  await page.evaluate(() => localStorage.removeItem('vyre.diff.split'));
  await page.emulateMedia({ colorScheme: 'light' });
});

test('under vyred\'s Content-Security-Policy everything still works, and nothing is refused', async () => {
  const refused = [];
  const onConsole = (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) refused.push(m.text());
  };
  page.on('console', onConsole);
  await open('/csp/fixtures/index.html');
  await page.locator('[data-case=code] code.hl[data-highlighted=rust]').first().waitFor();
  await page.locator('[data-diff=edit] [data-testid=diff][data-highlighted=yes]').waitFor();
  page.off('console', onConsole);
  assert.deepEqual(refused, []);
  assert.deepEqual(dialogs, []);
});
