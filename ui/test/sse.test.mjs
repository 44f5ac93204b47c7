import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SseParser } from '../.test-build/sse.js';

test('whole messages come out, however the text is cut', () => {
  const text = 'id: 41\nevent: thread.text\ndata: {"id":41}\n\n: keep-alive\n\nid: 42\r\nevent: x\r\ndata: a\r\ndata: b\r\n\r\n';
  for (const size of [1, 2, 3, 7, text.length]) {
    const p = new SseParser();
    const got = [];
    for (let i = 0; i < text.length; i += size) got.push(...p.feed(text.slice(i, i + size)));
    assert.deepEqual(got, [
      { id: '41', event: 'thread.text', data: '{"id":41}' },
      { id: '42', event: 'x', data: 'a\nb' },
    ], `cut every ${size}`);
  }
});

test('a comment alone is no message', () => {
  const p = new SseParser();
  assert.deepEqual(p.feed(': keep-alive\n\n'), []);
});
