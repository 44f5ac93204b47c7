import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileRef, resolvePath } from '../.test-build/filepaths.js';

test('inline code that names a file is a path, with its line when one follows', () => {
  assert.deepEqual(fileRef('src/main.rs'), { path: 'src/main.rs', line: null });
  assert.deepEqual(fileRef('src/main.rs:42'), { path: 'src/main.rs', line: 42 });
  assert.deepEqual(fileRef('src/main.rs:42:7'), { path: 'src/main.rs', line: 42 });
  assert.deepEqual(fileRef('./README.md'), { path: './README.md', line: null });
  assert.deepEqual(fileRef('../lib/x.ts'), { path: '../lib/x.ts', line: null });
  assert.deepEqual(fileRef('/home/x/proj/a.txt'), { path: '/home/x/proj/a.txt', line: null });
  assert.deepEqual(fileRef('~/work/b.png'), { path: '~/work/b.png', line: null });
  assert.deepEqual(fileRef('ui/src/components/'), { path: 'ui/src/components/', line: null }, 'a folder');
  assert.deepEqual(fileRef('node_modules/@scope/pkg/index.js'), { path: 'node_modules/@scope/pkg/index.js', line: null });
  assert.deepEqual(fileRef('docs/été/notes'), { path: 'docs/été/notes', line: null });
  assert.deepEqual(fileRef(' Cargo.toml '), { path: 'Cargo.toml', line: null });
});

test('a name with no folder is a file only by a known extension', () => {
  assert.deepEqual(fileRef('main.rs'), { path: 'main.rs', line: null });
  assert.deepEqual(fileRef('package.json:3'), { path: 'package.json', line: 3 });
  assert.deepEqual(fileRef('App.Svelte'), { path: 'App.Svelte', line: null });
  assert.deepEqual(fileRef('.eslintrc.json'), { path: '.eslintrc.json', line: null });
  assert.deepEqual(fileRef('.gitignore'), { path: '.gitignore', line: null });
  for (const code of ['console.log', 'process.env', 'mutex.lock', 'items.map', 'v1.2.3', 'example.com', 'ada@example.com', 'Makefile', '.md', 'foo', 'x.unwrap']) {
    assert.equal(fileRef(code), null, code);
  }
});

test('code that is not a path is not linked', () => {
  for (const code of [
    '',
    '   ',
    'cargo build --release',
    'src/a file.rs',
    'https://example.com/a.txt',
    'http://localhost:8080/x',
    'mailto:ada@example.com',
    'file:///etc/passwd',
    '//cdn.example.com/x.js',
    'github.com/owner/repo',
    'www.example.org/docs',
    '@sveltejs/vite-plugin-svelte',
    'C:\\Users\\ada\\a.txt',
    'a::b/c',
    'git@github.com:owner/repo.git',
    'fn(a/b)',
    '"src/main.rs"',
    '<a/b>',
    '1/2',
    '/',
    '../..',
    '~',
    '~ada/notes.txt',
    'x'.repeat(1100) + '/a.rs',
  ]) {
    assert.equal(fileRef(code), null, code);
  }
});

test('a relative path is read from the thread\'s folder; . and .. are resolved', () => {
  assert.equal(resolvePath('src/main.rs', '/home/ada/proj'), '/home/ada/proj/src/main.rs');
  assert.equal(resolvePath('./README.md', '/home/ada/proj/'), '/home/ada/proj/README.md');
  assert.equal(resolvePath('../other/a.txt', '/home/ada/proj'), '/home/ada/other/a.txt');
  assert.equal(resolvePath('ui/src/', '/p'), '/p/ui/src');
  assert.equal(resolvePath('a.txt', '~/proj'), '~/proj/a.txt');
  assert.equal(resolvePath('/etc/./hosts', '/home/ada'), '/etc/hosts');
  assert.equal(resolvePath('/a//b/../c', null), '/a/c');
  assert.equal(resolvePath('/../..', null), '/');
  assert.equal(resolvePath('~/work/b.png', '/home/ada/proj'), '~/work/b.png');
  assert.equal(resolvePath('~/x/..', null), '~');
});

test('a path that cannot be said is null', () => {
  assert.equal(resolvePath('src/main.rs', null), null, 'relative, with no folder');
  assert.equal(resolvePath('src/main.rs', ''), null);
  assert.equal(resolvePath('~/../etc/passwd', null), null, 'above ~');
  assert.equal(resolvePath('../../a', '~/p'), null);
});
