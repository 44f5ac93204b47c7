// The onboarding walked through its screens, as a person does it: the name typed, every other
// step skipped (the address step continued), then Finish. For the tests that need an owner and
// a signed-in browser first; app.test.mjs checks the screens themselves.

import { waitFor } from './rig.mjs';

/**
 * Onboard `page` on `rig`'s vyred. `address(page)` and `devices(page)` run on those steps'
 * screens before they are left (to look at them, or tick something). Returns once Finish is
 * clicked: where the app goes then is the caller's to wait for (`/app/` unless a step said
 * otherwise).
 */
export async function onboardByScreens(rig, page, { address, devices } = {}) {
  await page.goto(await rig.onboardLink());
  await page.waitForURL((u) => u.pathname === '/onboard' && !u.search.includes('t='));
  const step = page.getByTestId('ob-step');
  const at = (name) => waitFor(`the ${name} step`, async () => (await step.getAttribute('data-step')) === name);
  await page.getByTestId('ob-name').fill('Ada');
  await page.getByTestId('ob-save').click();
  await at('claude');
  await page.getByTestId('ob-skip').click();
  await at('address');
  if (address) await address(page);
  await page.getByTestId('ob-continue').click();
  await at('history');
  await page.getByTestId('ob-skip').click();
  await at('devices');
  if (devices) await devices(page);
  await page.getByTestId('ob-finish').click();
}

/**
 * Onboard `page` on `rig`'s vyred through the onboarding's own tools, called from the page with
 * its onboarding key (app.test.mjs walks the screens): the person's name, the assistant Juno,
 * the credential `key` for sessions (an API key, or a subscription's setup token `sk-ant-oat…`),
 * then the onboarding's end. The browser is then signed in.
 */
export async function onboardWithKey(rig, page, key) {
  await page.goto(await rig.onboardLink());
  await page.waitForURL((u) => u.pathname === '/onboard' && !u.search.includes('t='));
  await page.evaluate(async (key) => {
    const post = async (path, body) => {
      const headers = { 'content-type': 'application/json', 'x-vyre-key': localStorage.getItem('vyre_key') };
      const r = await fetch(path, { method: 'POST', headers, body: JSON.stringify(body) });
      const j = await r.json();
      if (j.error) throw new Error(`${path}: ${j.error.code}: ${j.error.message}`);
      return j.data;
    };
    await post('/v1/tools/onboarding.you', { name: 'Ada', assistant_name: 'Juno' });
    await post('/v1/tools/onboarding.claude', { mode: key.startsWith('sk-ant-oat') ? 'setup-token' : 'api-key', value: key });
    return post('/v1/session/finish', {});
  }, key);
}

/** [`onboardWithKey`], then the app's first screen: the assistant Juno's chat, drawn. */
export async function onboardToChat(rig, page, key) {
  await onboardWithKey(rig, page, key);
  await page.goto(`${rig.base}/app/`);
  await page.getByTestId('chat-title').filter({ hasText: 'Juno' }).waitFor();
}
