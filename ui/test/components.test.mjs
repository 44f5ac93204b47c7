// The small components the app and Lumen share (the toast, the status dot, a notice), rendered by
// svelte/server from the SSR build of test/render/entry.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { notice, statusDot, toast } from '../.test-build/ssr/entry.js';

const html = (s) => s.replace(/<!--[\s\S]*?-->/g, '');

test('the toast says its line, in red for an error, and nothing without one', () => {
  assert.equal(html(toast({ toast: null })).trim(), '');
  const info = html(toast({ toast: { text: 'Project demo made.', level: 'info' } }));
  assert.match(info, /role="status"/);
  assert.match(info, /data-testid="toast"/);
  assert.match(info, />Project demo made\.</);
  assert.doesNotMatch(info, /class="[^"]*\berror\b/);
  assert.doesNotMatch(info, /over-nav/);
  const err = html(toast({ toast: { text: '<b>no</b>', level: 'error' }, overNav: true }));
  assert.match(err, /class="[^"]*\btoast\b[^"]*\berror\b/);
  assert.match(err, /over-nav/);
  assert.match(err, /&lt;b>no&lt;\/b>/, 'the text is text, not markup');
});

test('the status dot carries its status, and a label only when it has one', () => {
  const bare = html(statusDot({ status: 'running' }));
  assert.match(bare, /class="[^"]*\bdot running\b/);
  assert.match(bare, /data-status="running"/);
  assert.match(bare, /aria-hidden="true"/);
  assert.doesNotMatch(bare, /aria-label|role=/);
  assert.match(bare, /--size: 8px/);
  const labelled = html(statusDot({ status: 'failed', label: 'failed', size: 7 }));
  assert.match(labelled, /role="img"/);
  assert.match(labelled, /aria-label="failed"/);
  assert.match(labelled, /title="failed"/);
  assert.doesNotMatch(labelled, /aria-hidden/);
  assert.match(labelled, /--size: 7px/);
});

test('a notice: an error is an alert with vyred\'s words under it, a warning a note; both are text', () => {
  const err = html(notice({ kind: 'error', text: 'Cloudflare could not be reached.', detail: 'connection <refused>', testid: 'domain-error' }));
  assert.match(err, /^<p[^>]*class="[^"]*\berr\b/);
  assert.match(err, /role="alert"/);
  assert.match(err, /data-testid="domain-error"/);
  assert.match(err, />Cloudflare could not be reached\. <span class="why[^"]*">connection &lt;refused><\/span>/);
  const warn = html(notice({ kind: 'warning', text: 'no certificate was issued yet', id: 'w' }));
  assert.match(warn, /class="[^"]*\bwarning\b/);
  assert.match(warn, /role="note"/);
  assert.match(warn, /id="w"/);
  assert.doesNotMatch(warn, /class="why/, 'no detail: nothing under it');
  // A detail that only repeats the text is not said twice.
  assert.doesNotMatch(html(notice({ kind: 'error', text: 'x', detail: 'x' })), /why/);
});
