// Debian's Chromium, headless, driven by playwright-core (no browser download), each browser
// with a fresh profile; and screenshots of a screen at desktop and phone sizes.

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.VYRE_CHROMIUM || '/usr/bin/chromium';
export const SHOTS = join(dirname(fileURLToPath(import.meta.url)), '..', 'screenshots');
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * A browser of its own (a fresh user-data dir), and its first page. `serviceWorkers: 'block'`
 * for a test that answers the app's own pages in routes: a page the worker serves never reaches
 * a route. `timezoneId`: the person's clock, when it must not be the machine's (an IANA name).
 */
export async function openBrowser({ serviceWorkers = 'allow', timezoneId = undefined } = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'vyre-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: DESKTOP,
    colorScheme: 'light',
    serviceWorkers,
    ...(timezoneId ? { timezoneId } : {}),
  });
  context.setDefaultTimeout(20000);
  const page = context.pages()[0] ?? (await context.newPage());
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  return {
    context,
    page,
    errors,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Save `<name>-desktop.png` and `<name>-phone.png`, and check the phone has no sideways scroll.
 * `at`: a locator scrolled into view at each size (what the shot is of, when it may be below
 * the fold). */
export async function shot(page, name, at = null) {
  mkdirSync(SHOTS, { recursive: true });
  await page.setViewportSize(DESKTOP);
  await page.waitForTimeout(150);
  await at?.scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(SHOTS, `${name}-desktop.png`) });
  await page.setViewportSize(PHONE);
  await page.waitForTimeout(150);
  await at?.scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(SHOTS, `${name}-phone.png`) });
  // The page, and the app's own scrolling main area (overflow-y: auto scrolls sideways too).
  const wide = await page.evaluate(() => {
    const main = document.querySelector('main');
    const page = document.documentElement.scrollWidth - window.innerWidth;
    const inner = main ? main.scrollWidth - main.clientWidth : 0;
    if (inner > 0) {
      // The deepest elements that stick out: what makes the rest wide.
      const out = [...main.querySelectorAll('*')].filter(
        (e) => e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest('pre'),
      );
      const culprits = out
        .filter((e) => !out.some((o) => o !== e && e.contains(o)))
        .slice(0, 4)
        .map((e) => `${e.tagName.toLowerCase()}.${[...e.classList].join('.')} "${(e.textContent || '').trim().slice(0, 30)}"`);
      console.log('too wide:', culprits.join(', '));
      window.__vyreTooWide = culprits;
    }
    return Math.max(page, inner);
  });
  if (wide > 0) {
    const culprits = await page.evaluate(() => window.__vyreTooWide || []);
    await page.setViewportSize(DESKTOP);
    throw new Error(`${name}: the phone layout scrolls sideways by ${wide}px (${culprits.join(', ')})`);
  }
  await page.setViewportSize(DESKTOP);
  if (wide > 0) throw new Error(`${name}: the phone layout scrolls sideways by ${wide}px`);
}

/**
 * `test`, whose failure leaves a screenshot of the page `pageOf()` gives:
 * screenshots/failed-<prefix><name>.png.
 */
export function shootingTest(prefix, pageOf) {
  return (name, opts, fn) =>
    test(name, opts, async (t) => {
      try {
        await fn(t);
      } catch (e) {
        mkdirSync(SHOTS, { recursive: true });
        const file = `failed-${prefix}${name.replace(/\W+/g, '-').slice(0, 60)}.png`;
        await pageOf()?.screenshot({ path: join(SHOTS, file) }).catch(() => {});
        throw e;
      }
    });
}

/** A tool called from the page, as its browser: `{data}` or `{error}`. */
export function fromPage(page, tool, input = {}) {
  return page.evaluate(
    async ([tool, input]) => {
      const headers = { 'content-type': 'application/json', 'x-vyre-key': localStorage.getItem('vyre_key') };
      const r = await fetch(`/v1/tools/${tool}`, { method: 'POST', headers, body: JSON.stringify(input) });
      return r.json();
    },
    [tool, input],
  );
}
