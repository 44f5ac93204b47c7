import { test } from 'node:test';
import assert from 'node:assert/strict';
import { badgeOf, ago } from '../.test-build/deck.js';

test('a session has one state badge: never live and idle side by side', () => {
  const vyre = (state, live) => badgeOf({ source: 'vyre', state, live });
  assert.deepEqual(vyre('idle', true), { label: 'open', tone: 'live' });
  assert.equal(vyre('idle', false), null);
  assert.equal(vyre('stopped', false), null);
  assert.deepEqual(vyre('running', true), { label: 'working', tone: 'working' });
  assert.deepEqual(vyre('waiting', true), { label: 'needs you', tone: 'warn' });
  assert.deepEqual(vyre('failed', false), { label: 'failed', tone: 'err' });
  assert.deepEqual(badgeOf({ source: 'terminal', state: null, live: true }), { label: 'in a terminal', tone: 'live' });
  assert.equal(badgeOf({ source: 'terminal', state: null, live: false }), null);
});

test('last activity in words', () => {
  const now = 1_800_000_000_000;
  assert.equal(ago(now - 10_000, now), 'just now');
  assert.equal(ago(now - 5 * 60_000, now), '5 min ago');
  assert.equal(ago(now - 3 * 3600_000, now), '3 h ago');
  assert.equal(ago(now - 2 * 86400_000, now), '2 d ago');
  assert.equal(ago(null, now), '');
});
