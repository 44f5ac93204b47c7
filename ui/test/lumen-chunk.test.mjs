// Lumen (the Mac app's capsule) loads as its own small chunk: what src/Lumen.svelte imports,
// followed through every static local import, must not reach the app's shell (App.svelte), the
// chat's Markdown, the syntax highlighter, or their packages. The highlighter may come only on
// demand (lib/highlight.ts's import('./highlighter'), its own chunk, when a diff is shown).
// A walk of the sources, so it holds whatever the bundler decides to split.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));
// A static import (not `import type`, which is erased), or a dynamic import() (not `typeof import()`).
const IMPORT = /(?:^|[\s;])import\s+(?!type\s)(?:[^'"]*?\sfrom\s+)?['"]([^'"]+)['"]|(?<!typeof\s+)import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Every module reachable from `entry` by static imports (paths relative to src/, and bare
 * package names), and the modules those load on demand. */
function reach(entry) {
  const seen = new Set();
  const packages = new Set();
  const onDemand = new Set();
  const todo = [join(SRC, entry)];
  while (todo.length) {
    const file = todo.pop();
    const rel = relative(SRC, file);
    if (seen.has(rel)) continue;
    seen.add(rel);
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const spec = m[1] ?? m[2];
      if (m[2]) {
        onDemand.add(relative(SRC, join(dirname(file), spec)));
        continue;
      }
      if (!spec.startsWith('.')) {
        packages.add(spec.split('/')[0]);
        continue;
      }
      const base = join(dirname(file), spec);
      // `./x.js` may name x.ts (a module the node tests load as tsc writes it: lib/watchers.ts).
      const found = [base, base + '.ts', base + '.js', base.replace(/\.js$/, '.ts')].find((p) => existsSync(p) && !p.endsWith('/'));
      assert.ok(found, `${rel} imports ${spec}, which is not there`);
      todo.push(found);
    }
  }
  return { modules: seen, packages, onDemand };
}

test("Lumen's imports reach neither the app's shell nor the Markdown and highlighter code", () => {
  const { modules, packages, onDemand } = reach('Lumen.svelte');
  for (const m of ['components/AskList.svelte', 'components/DueCard.svelte', 'components/StatusDot.svelte', 'components/Toast.svelte']) assert.ok(modules.has(m), `Lumen uses ${m}`);
  const heavy = ['App.svelte', 'components/Chat.svelte', 'components/Markdown.svelte', 'components/Code.svelte', 'lib/markdown.ts', 'lib/highlighter.ts'];
  for (const m of heavy) assert.ok(!modules.has(m), `Lumen reaches ${m}: ${[...modules].sort().join(', ')}`);
  for (const p of ['highlight.js', 'lowlight', 'mdast-util-from-markdown', 'mdast-util-gfm', 'micromark-extension-gfm']) assert.ok(!packages.has(p), `Lumen reaches the package ${p}`);
  assert.deepEqual([...onDemand], ['lib/highlighter'], 'Lumen loads on demand only the highlighter (a diff in an ask)');
});

test('the walk sees what the app reaches (the check above can fail)', () => {
  const { modules, packages } = reach('App.svelte');
  assert.ok(modules.has('components/Markdown.svelte'));
  assert.ok(modules.has('lib/markdown.ts'));
  assert.ok(modules.has('components/AskList.svelte'));
  assert.ok(packages.has('svelte'));
});
