// The app as an installable web app that opens offline (ui/src/sw.ts, ui/src/lib/offline.ts),
// against a real vyred on http://127.0.0.1 (this machine's own address is a secure context, as
// https://<name>.vyre.run is on a phone): the manifest and its icons; the service worker, scope
// /app/, active and keeping this build's files; the API never answered by it; a changed page
// seen at once and a new build's worker replacing the old cache; then vyred stopped, and the app
// still opens from the cache and says it cannot reach Vyre, and opens by itself once vyred is
// back on the same address. vyred serves a copy of the build, which the test changes. No Claude
// Code needed.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ROOT, Rig, VYRE_BIN, waitFor } from './lib/rig.mjs';
import { onboardByScreens } from './lib/onboard.mjs';
import { openBrowser, shot, shootingTest } from './lib/browser.mjs';

const T = { timeout: 120_000 };
const built = resolve(process.env.VYRE_UI_DIR || join(ROOT, 'ui/dist'));
/** The build vyred serves here: a copy, changed by the tests. */
const ui = join(mkdtempSync(join(tmpdir(), 'vyre-pwa-ui-')), 'dist');
let rig;
let browser;
let page;
/** vyred started again after the offline test, on the same address. */
let again;

before(async () => {
  cpSync(built, ui, { recursive: true });
  rig = await Rig.start('pwa', { env: { VYRE_UI_DIR: ui } });
  browser = await openBrowser();
  page = browser.page;
});

after(async () => {
  await browser?.close();
  if (again && again.exitCode === null) {
    again.kill('SIGTERM');
    await new Promise((ok) => again.on('exit', ok));
  }
  await rig?.stop();
  rmSync(resolve(ui, '..'), { recursive: true, force: true });
});

const it = shootingTest('pwa-', () => page);

/** The onboarding through its screens, every step skipped. */
async function onboard() {
  await onboardByScreens(rig, page);
  await page.waitForURL((u) => u.pathname === '/app/');
}

/** What the page's fetch gets: status, type, and the body as text or its first bytes. */
function fetched(path) {
  return page.evaluate(async (path) => {
    const r = await fetch(path, { cache: 'no-store' });
    const bytes = new Uint8Array(await r.arrayBuffer());
    return { status: r.status, type: r.headers.get('content-type'), text: new TextDecoder().decode(bytes), head: [...bytes.slice(0, 24)] };
  }, path);
}

/** The worker's caches, each with the paths it holds. */
function cached() {
  return page.evaluate(async () => {
    const out = {};
    for (const name of await caches.keys()) out[name] = (await (await caches.open(name)).keys()).map((r) => new URL(r.url).pathname);
    return out;
  });
}

it('the manifest installs Vyre at /app/, standalone, with its icons', T, async () => {
  await onboard();
  const links = await page.evaluate(() => ({
    manifest: document.querySelector('link[rel=manifest]')?.getAttribute('href'),
    apple: document.querySelector('link[rel=apple-touch-icon]')?.getAttribute('href'),
    theme: [...document.querySelectorAll('meta[name=theme-color]')].map((m) => m.getAttribute('content')),
  }));
  assert.equal(links.manifest, '/app/manifest.webmanifest');
  assert.deepEqual(links.theme, ['#f7f7f5', '#17181a']);
  const m = await fetched(links.manifest);
  assert.equal(m.status, 200);
  assert.equal(m.type, 'application/manifest+json');
  const manifest = JSON.parse(m.text);
  assert.equal(manifest.name, 'Vyre');
  assert.equal(manifest.short_name, 'Vyre');
  assert.equal(manifest.start_url, '/app/');
  assert.equal(manifest.scope, '/app/');
  assert.equal(manifest.display, 'standalone');
  assert.match(manifest.theme_color, /^#[0-9a-f]{6}$/i);
  assert.match(manifest.background_color, /^#[0-9a-f]{6}$/i);
  const icons = manifest.icons.map((i) => [i.sizes, i.purpose ?? 'any']);
  assert.deepEqual(icons, [['192x192', 'any'], ['512x512', 'any'], ['512x512', 'maskable']]);
  // Each icon a PNG of the size it says (its IHDR), as is Apple's.
  for (const { src, sizes, type } of [...manifest.icons, { src: links.apple, sizes: '180x180', type: 'image/png' }]) {
    assert.equal(type, 'image/png');
    const r = await fetched(new URL(src, `${rig.base}/app/manifest.webmanifest`).pathname);
    assert.equal(r.status, 200, src);
    assert.equal(r.type, 'image/png', src);
    assert.deepEqual(r.head.slice(0, 8), [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], `${src} is a PNG`);
    const size = (at) => ((r.head[at] << 24) | (r.head[at + 1] << 16) | (r.head[at + 2] << 8) | r.head[at + 3]) >>> 0;
    assert.equal(`${size(16)}x${size(20)}`, sizes, src);
  }
});

it('the service worker registers for /app/, takes the page and keeps this build\'s files', T, async () => {
  // Opened at /app/ (the onboarding's page was /onboard, outside the worker's scope).
  await page.goto(`${rig.base}/app/`);
  assert.equal(await page.evaluate(() => window.isSecureContext), true, 'http://127.0.0.1 is a secure context');
  const reg = await page.evaluate(async () => {
    const r = await navigator.serviceWorker.ready;
    return { scope: r.scope, script: r.active?.scriptURL };
  });
  assert.equal(reg.scope, `${rig.base}/app/`);
  assert.equal(reg.script, `${rig.base}/app/sw.js`);
  await waitFor('the worker to be active and control the page', () =>
    page.evaluate(() => navigator.serviceWorker.controller?.state === 'activated'),
  );
  const sw = await fetched('/app/sw.js');
  assert.match(sw.type, /javascript/);
  const build = /cacheName\("([0-9a-f]+)"\)/.exec(sw.text)[1];
  const kept = await cached();
  assert.deepEqual(Object.keys(kept), [`vyre-app-${build}`]);
  const files = kept[`vyre-app-${build}`];
  assert.ok(files.includes('/app/'), 'the shell');
  for (const f of readdirSync(join(ui, 'assets'))) assert.ok(files.includes(`/app/assets/${f}`), f);
  for (const f of ['/app/manifest.webmanifest', '/app/icons/icon-192.png', '/app/favicon.svg']) assert.ok(files.includes(f), f);
  assert.ok(!files.some((f) => f.startsWith('/v1/')), 'nothing of the API is kept');
});

it('the worker never answers the API; the build\'s files come from it', T, async () => {
  const seen = [];
  const keep = (r) => seen.push({ path: new URL(r.url()).pathname, worker: r.fromServiceWorker() });
  page.on('response', keep);
  try {
    // A reload under the worker: the app's calls and its event stream, then two by hand.
    await page.reload();
    await page.locator('[data-nav=settings]').first().waitFor();
    await page.evaluate(() => Promise.all([fetch('/v1/health'), fetch('/app/favicon.svg')]));
    await waitFor('the by-hand requests', () => seen.some((s) => s.path === '/v1/health') && seen.some((s) => s.path === '/app/favicon.svg'));
  } finally {
    page.off('response', keep);
  }
  const api = seen.filter((s) => s.path.startsWith('/v1/'));
  assert.ok(api.some((s) => s.path === '/v1/session'), JSON.stringify(api));
  assert.deepEqual(api.filter((s) => s.worker), [], 'no API answer came from the worker');
  // The check can tell: the build's files did come from it (the one asked by hand, and the
  // app's own).
  const icon = seen.filter((s) => s.path === '/app/favicon.svg');
  assert.ok(icon.length >= 1 && icon.every((s) => s.worker), JSON.stringify(icon));
  assert.ok(seen.some((s) => s.path.startsWith('/app/assets/') && s.worker), JSON.stringify(seen));
});

it('a changed page is seen at once, and a new build\'s worker replaces the old cache', T, async () => {
  // The page is network first: a new index.html is never kept from the page by the cache.
  const index = join(ui, 'index.html');
  const page0 = readFileSync(index, 'utf8');
  writeFileSync(index, page0.replace('<title>Vyre</title>', '<title>Vyre</title><meta name="vyre-test" content="new" />'));
  await page.reload();
  assert.equal(await page.locator('meta[name=vyre-test]').getAttribute('content'), 'new');
  writeFileSync(index, page0);
  // A new build: its worker (another build id) takes over and deletes the old build's cache.
  const swPath = join(ui, 'sw.js');
  const sw = readFileSync(swPath, 'utf8');
  const old = /cacheName\("([0-9a-f]+)"\)/.exec(sw)[1];
  writeFileSync(swPath, sw.replace(`cacheName("${old}")`, 'cacheName("0000000000000001")'));
  // The browser checks for a new worker when asked. The reload above also registers the worker
  // on the page's load, and a check asked while that one is still pending is folded into it (the
  // spec's equivalent jobs), which may have read the old sw.js: CI saw the old worker stay. So
  // the check is asked again while no new worker is installing or waiting (an install that missed
  // a file under load also leaves the old worker, as it should). A failure says the caches and
  // the workers.
  const update = () =>
    page.evaluate(async () => {
      const r = await navigator.serviceWorker.getRegistration('/app/');
      const busy = Boolean(r.installing || r.waiting);
      if (!busy) await r.update().catch(() => undefined);
      return { installing: r.installing?.state, waiting: r.waiting?.state, active: r.active?.state };
    });
  let workers = await update();
  let tries = 0;
  await waitFor('the new build\'s cache alone', async () => {
    const keys = Object.keys(await cached());
    if (JSON.stringify(keys) === '["vyre-app-0000000000000001"]') return true;
    tries += 1;
    if (tries % 20 === 0) workers = await update();
    throw new Error(JSON.stringify({ keys, workers }));
  }, 40_000);
  await waitFor('the new worker to control the page', () =>
    page.evaluate(() => navigator.serviceWorker.controller?.state === 'activated'),
  );
  const files = (await cached())['vyre-app-0000000000000001'];
  assert.ok(files.includes('/app/') && files.length >= 5, JSON.stringify(files));
});

it('with vyred stopped, the app still opens from the cache and says it cannot reach Vyre', T, async () => {
  const port = new URL(rig.base).port;
  rig.daemon.kill('SIGTERM');
  await rig.exited;
  await waitFor('vyred to be gone', async () => {
    try {
      await fetch(`${rig.base}/v1/health`);
      return false;
    } catch {
      return true;
    }
  });
  await page.goto(`${rig.base}/app/deck`);
  const card = page.getByTestId('unreachable');
  await card.waitFor();
  const said = await card.innerText();
  assert.match(said, /Can't reach your Vyre/);
  assert.ok(said.includes(`127.0.0.1:${port}`), said);
  assert.match(said, /private network/);
  // Not "signed out": nothing about one-time links.
  assert.equal(await page.getByTestId('signed-out').count(), 0);
  await shot(page, 'pwa-offline');
  // Trying again by hand, still nothing: the button says so and comes back.
  await page.getByTestId('unreachable-retry').click();
  await page.getByTestId('unreachable-retry').filter({ hasText: 'Try again' }).waitFor();
  await card.waitFor();

  // vyred back on the same address: the page finds it by itself and opens where it was.
  again = spawn(VYRE_BIN, ['daemon'], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: rig.home,
      VYRE_HOME: rig.vyreHome,
      VYRE_PORT: port,
      VYRE_UI_DIR: ui,
      RUST_LOG: process.env.VYRE_TEST_LOG || 'info',
    },
    stdio: ['ignore', process.env.VYRE_TEST_VERBOSE ? 'inherit' : 'ignore', process.env.VYRE_TEST_VERBOSE ? 'inherit' : 'ignore'],
  });
  await waitFor('vyred to answer again', async () => (await fetch(`${rig.base}/v1/health`)).ok);
  await page.getByTestId('unreachable').waitFor({ state: 'detached', timeout: 30_000 });
  await page.locator('[data-nav=deck]').first().waitFor();
  assert.equal(new URL(page.url()).pathname, '/app/deck');
  assert.deepEqual(browser.errors, [], 'no script errors on the page');
});
