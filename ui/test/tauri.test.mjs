import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escHidesLumen, hideLumen } from '../.test-build/tauri.js';

function fakeWindow(internals) {
  const listeners = [];
  return {
    __TAURI_INTERNALS__: internals,
    addEventListener: (_t, f) => listeners.push(f),
    removeEventListener: (_t, f) => listeners.splice(listeners.indexOf(f), 1),
    press(key, prevented = false) {
      const e = { key, defaultPrevented: prevented, isComposing: false };
      for (const f of listeners) f(e);
    },
    listeners,
  };
}

function tauri(label) {
  const calls = [];
  return { calls, invoke: async (cmd) => void calls.push(cmd), metadata: label ? { currentWindow: { label } } : undefined };
}

const later = () => new Promise((r) => setTimeout(r, 5));

test('in a browser there is no Tauri: nothing is asked and Esc is not watched', () => {
  assert.equal(hideLumen({}), false);
  const w = fakeWindow(undefined);
  escHidesLumen(w);
  assert.equal(w.listeners.length, 0);
});

test('in Lumen, Esc that nothing handled hides it', async () => {
  const t = tauri('lumen');
  const w = fakeWindow(t);
  const stop = escHidesLumen(w);
  w.press('Escape');
  w.press('Escape', true); // the chat interrupted a turn with it
  w.press('a');
  await later();
  assert.deepEqual(t.calls, ['hide_lumen']);
  stop();
  assert.equal(w.listeners.length, 0);
});

test('the main window of the Mac app is not Lumen', async () => {
  const t = tauri('main');
  assert.equal(hideLumen(fakeWindow(t)), false);
  const untagged = tauri(null);
  assert.equal(hideLumen(fakeWindow(untagged)), true);
  await later();
  assert.deepEqual(untagged.calls, ['hide_lumen']);
});

test('the app says whether Esc can hide Lumen: only in the Mac app', async () => {
  const { inApp } = await import('../.test-build/tauri.js');
  assert.equal(inApp({}), false, 'a browser');
  assert.equal(inApp({ __TAURI_INTERNALS__: tauri('lumen') }), true);
});
