// XSS payloads through the real Markdown and Diff components (rendered by svelte/server from the
// SSR build of test/render/entry.ts): no element, attribute or address outside the allowed few
// may come out, whatever the source says.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { markdown as render, diff } from '../.test-build/ssr/entry.js';

/** The component's HTML without Svelte's hydration markers (comments). */
const markdown = (source, streaming = false) => render(source, streaming).replace(/<!--[\s\S]*?-->/g, '');

const PAYLOADS = [
  '<script>alert(1)</script>',
  '<SCRIPT SRC=https://evil.example/x.js></SCRIPT>',
  '<img src=x onerror=alert(1)>',
  'text <img src=x onerror=alert(1)> inline',
  '<svg onload=alert(1)>',
  '<svg><script>alert(1)</script></svg>',
  '<iframe src="javascript:alert(1)"></iframe>',
  '<a href="javascript:alert(1)">click</a>',
  '<details open ontoggle=alert(1)>x</details>',
  '<x onmouseover=alert(1)>hover</x>',
  '<style>body{display:none}</style>',
  '<link rel=stylesheet href=https://evil.example/x.css>',
  '<meta http-equiv="refresh" content="0;url=https://evil.example">',
  '<base href="https://evil.example/">',
  '<form action="https://evil.example"><button>go</button></form>',
  '<object data="https://evil.example/x.swf"></object><embed src="https://evil.example/x">',
  '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>',
  '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
  '<!--><img src=x onerror=alert(1)>-->',
  '<textarea><img src=x onerror=alert(1)></textarea>',
  '[x](javascript:alert(1))',
  '[x](JaVaScRiPt:alert(1))',
  '[x](javascript&#58;alert(1))',
  '[x](&#106;avascript:alert(1))',
  '[x](&#x6A;avascript:alert(1))',
  '[x](<javascript:alert(1)>)',
  '[x](java\tscript:alert(1))',
  '[x](vbscript:msgbox(1))',
  '[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
  '[x](file:///etc/passwd)',
  '[x](/v1/tools/devices.revoke)',
  '[x](//evil.example/)',
  '<javascript:alert(1)>',
  '<data:text/html,<script>alert(1)</script>>',
  '![x](javascript:alert(1))',
  '![tracker](https://evil.example/pixel.png)',
  '![x" onerror="alert(1)](https://example.com/a.png)',
  '[x](https://example.com "title\\" onmouseover=\\"alert(1)")',
  '[ref]\n\n[ref]: javascript:alert(1)',
  '![ref]\n\n[ref]: https://evil.example/pixel.png',
  '| a | b |\n|---|---|\n| <img src=x onerror=alert(1)> | [x](javascript:alert(1)) |',
  '- [ ] <script>alert(1)</script>\n- [x] <img src=x onerror=alert(1)>',
  '> <iframe srcdoc="<script>alert(1)</script>">',
  'note[^1]\n\n[^1]: <img src=x onerror=alert(1)>',
  '```html\n<script>alert(1)</script>\n```',
  '```" onmouseover="alert(1)\ncode\n```',
  '`<script>alert(1)</script>`',
  '&lt;script&gt;alert(1)&lt;/script&gt;',
  'www.example.com/<script>alert(1)</script>',
  'https://example.com/"onmouseover="alert(1)',
  '<a href="https://example.com" onclick="alert(1)">x</a>',
  '<br onmouseover=alert(1)>',
  '[x](https://example.com)<img src=x onerror=alert(1)>',
  '***<script>***alert(1)',
];

const TAGS = new Set(['div', 'p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'blockquote', 'ul', 'ol', 'li', 'pre', 'code', 'span', 'button', 'a', 'em', 'strong', 'del', 'br', 'table', 'colgroup', 'col', 'thead', 'tbody', 'tr', 'th', 'td', 'sup']);
const ATTRS = new Set(['class', 'data-testid', 'data-language', 'data-highlighted', 'data-kind', 'title', 'href', 'target', 'rel', 'start', 'role', 'aria-label', 'aria-live', 'aria-pressed', 'style', 'colspan']);

/** Every start tag of an HTML string, with its attributes (values unescaped). */
function tags(html) {
  const out = [];
  const re = /<([a-zA-Z][^\s/>]*)((?:\s+[^\s=/>]+(?:=(?:"[^"]*"|'[^']*'|[^\s>]+))?)*)\s*\/?>/g;
  let m;
  while ((m = re.exec(html))) {
    const attrs = {};
    const ar = /\s+([^\s=/>]+)(?:=(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g;
    let a;
    while ((a = ar.exec(m[2]))) attrs[a[1].toLowerCase()] = (a[2] ?? a[3] ?? a[4] ?? '').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
    out.push({ name: m[1].toLowerCase(), attrs });
  }
  // Anything that looks like a tag but the pattern did not take is suspicious too.
  const opened = (html.match(/<[a-zA-Z]/g) ?? []).length;
  assert.equal(out.length, opened, `a tag the checker could not read in ${html}`);
  return out;
}

function assertSafe(html, payload) {
  for (const { name, attrs } of tags(html)) {
    assert.ok(TAGS.has(name), `<${name}> from ${JSON.stringify(payload)}`);
    for (const [k, v] of Object.entries(attrs)) {
      assert.ok(ATTRS.has(k), `attribute ${k} on <${name}> from ${JSON.stringify(payload)}`);
      if (k === 'href') assert.match(v, /^(https?:\/\/[^\s"]+|mailto:[^\s"]+)$/, `href ${v} from ${JSON.stringify(payload)}`);
      if (k === 'style') assert.match(v, /^(text-align: (left|right|center);?)?$/, `style ${v}`);
      if (k !== 'title') assert.doesNotMatch(v, /javascript:|vbscript:|data:/i, `${k}=${v} from ${JSON.stringify(payload)}`);
    }
    if (name === 'a') {
      assert.equal(attrs.target, '_blank');
      assert.equal(attrs.rel, 'noopener noreferrer');
    }
  }
}

test('no XSS payload survives: only the allowed elements, attributes and addresses come out', () => {
  for (const p of PAYLOADS) {
    for (const streaming of [false, true]) assertSafe(markdown(p, streaming), p);
  }
});

test('the payloads are shown as the text they are, not dropped', () => {
  assert.match(markdown('<script>alert(1)</script>'), /&lt;script>alert\(1\)&lt;\/script>/);
  assert.match(markdown('a <img src=x onerror=alert(1)> b'), /&lt;img src=x onerror=alert\(1\)>/);
  assert.match(markdown('```html\n<script>alert(1)</script>\n```'), /<code[^>]*>&lt;script>alert\(1\)&lt;\/script><\/code>/);
});

test('safe links open in a new tab without an opener or a referrer; unsafe ones are text', () => {
  const html = markdown('[docs](https://example.com/docs) and [bad](javascript:alert(1)) and <https://example.com/auto> and a@example.com');
  const links = tags(html).filter((t) => t.name === 'a');
  assert.deepEqual(links.map((l) => l.attrs.href), ['https://example.com/docs', 'https://example.com/auto', 'mailto:a@example.com']);
  assert.match(html, /<span class="nolink[^"]*" title="javascript:alert\(1\)">/);
});

test('an image is never loaded: its alt text links to it', () => {
  const html = markdown('![a cat](https://example.com/cat.png)');
  assert.doesNotMatch(html, /<img/);
  const [a] = tags(html).filter((t) => t.name === 'a');
  assert.equal(a.attrs.href, 'https://example.com/cat.png');
  assert.match(html, /a cat/);
});

test('a lone <br> in a table cell breaks the line; a <br> with attributes is text', () => {
  assert.match(markdown('| a |\n|---|\n| one<br>two |'), /one<br\/?>two/);
  assert.match(markdown('x <br onmouseover=alert(1)> y'), /&lt;br onmouseover=alert\(1\)>/);
});

test('no text (a timeline item without one) is an empty message, not an error', () => {
  for (const source of [null, undefined, '']) {
    for (const streaming of [false, true]) {
      const html = markdown(source, streaming);
      assert.match(html, /^<div class="md[^"]*" data-testid="markdown"><\/div>$/, `${source} ${streaming}: ${html}`);
    }
  }
});

test('diffs escape the file\'s text too', () => {
  const html = diff({ path: 'x.html', old: '<p>hi</p>', new: '<script>alert(1)</script>\n<img src=x onerror=alert(1)>' });
  assertSafe(html, 'diff');
  assert.match(html, /&lt;script>alert\(1\)&lt;\/script>/);
  assertSafe(diff({ path: '"><img src=x onerror=alert(1)>.js', new: 'x' }), 'diff path');
  assertSafe(diff({ path: 'a.md', edits: [{ old_string: '<b>', new_string: '<svg onload=alert(1)>' }] }), 'multiedit');
});
