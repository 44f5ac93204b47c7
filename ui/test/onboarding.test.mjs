// The onboarding's steps are listed once in the app (src/lib/onboarding.ts) and once in vyred
// (daemon/src/modules/onboarding/mod.rs: STEPS, and the pattern the step tools' schema publishes). The
// two are read here, the Rust one from its source text, and must name the same steps in the
// same order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { STEPS, STEP_NAMES, stepTitle } from '../.test-build/onboarding.js';

const RUST = new URL('../../daemon/src/modules/onboarding/mod.rs', import.meta.url);
const source = readFileSync(RUST, 'utf8');

/** The string literals of a Rust array's body: `"you", "claude"` → ['you', 'claude']. */
const literals = (body) => [...body.matchAll(/"([^"\\]*)"/g)].map((m) => m[1]);

test("vyred's STEPS are the app's steps, in the same order", () => {
  const m = source.match(/pub const STEPS\s*:\s*\[&str;\s*(\d+)\]\s*=\s*\[([\s\S]*?)\];/);
  assert.ok(m, 'daemon/src/modules/onboarding/mod.rs has no `pub const STEPS: [&str; N] = [...]` any more: update this test with it');
  const daemon = literals(m[2]);
  assert.equal(daemon.length, Number(m[1]));
  assert.deepEqual(daemon, [...STEP_NAMES], 'the steps of daemon/src/modules/onboarding/mod.rs and ui/src/lib/onboarding.ts differ');
});

test("the step tools' published pattern allows exactly the app's steps", () => {
  const m = source.match(/#\[schemars\(pattern\(r"\^\(([^)]*)\)\$"\)\)\]\s*step\s*:/);
  assert.ok(m, "daemon/src/modules/onboarding/mod.rs's step field has no `^(a|b|...)$` schema pattern any more: update this test with it");
  assert.deepEqual(m[1].split('|'), [...STEP_NAMES]);
});

test('each step has one title, and the names are unique', () => {
  assert.equal(new Set(STEP_NAMES).size, STEPS.length);
  for (const s of STEPS) {
    assert.ok(s.title.length > 0, s.name);
    assert.equal(stepTitle(s.name), s.title);
  }
  assert.equal(stepTitle('claude'), 'Claude Code');
});
