// A one-time link that expired, or that is not one at all, is refused with a clear message and
// what to do. No Claude Code needed. The short-lived link comes from `devices.link {ttl_s: 1}`
// (what `vyre open` calls), so vyred's own hour-long link is left alone.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Rig } from './lib/rig.mjs';
import { openBrowser, shot } from './lib/browser.mjs';

let rig;
let link;

before(async () => {
  rig = await Rig.start('link');
  link = (await rig.sock('devices.link', { ttl_s: 1 })).url;
  assert.match(link, /\/onboard\?t=/);
});
after(async () => {
  await rig?.stop();
});

test('an expired onboarding link is refused, and the page says what to do', { timeout: 60_000 }, async () => {
  await new Promise((r) => setTimeout(r, 2100));
  const b = await openBrowser();
  try {
    await b.page.goto(link);
    const box = b.page.getByTestId('signed-out');
    await box.waitFor();
    const text = await box.innerText();
    assert.match(text, /expired/i);
    assert.match(text, /vyre open/);
    await shot(b.page, 'link-expired');
    // Nothing but the onboarding's routes answer without a session.
    const res = await b.page.evaluate(async () => (await fetch('/v1/tools/onboarding.state', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })).status);
    assert.equal(res, 401);
  } finally {
    await b.close();
  }
});

test('a made-up token is refused', { timeout: 60_000 }, async () => {
  const res = await fetch(`${rig.base}/v1/session/redeem`, { method: 'POST', body: JSON.stringify({ token: 'not-a-token' }), headers: { 'content-type': 'application/json' } });
  assert.equal(res.status, 401);
  assert.equal((await res.json()).error.code, 'invalid_token');
});
