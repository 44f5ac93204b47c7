// Vyre's runner for a watcher written in JavaScript (spec 7.6): it loads the watcher's script,
// calls its `watch({vault, since, emit, log})`, and speaks the watchers' protocol for it (see
// protocol.rs): one JSON line in on stdin, JSON lines out on stdout. The script sees only what
// it declared: `vault.get(name)` (or `vault[name]`) for an item it does not have throws.
//
// Usage: node runner.mjs <script>
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');

function readInput() {
  const text = readFileSync(0, 'utf8');
  const line = text.split('\n')[0] || '{}';
  return JSON.parse(line);
}

function vaultOf(values) {
  const have = Object.assign(Object.create(null), values || {});
  const refuse = (name) => {
    throw new Error(`the vault item ${JSON.stringify(String(name))} is not among what this watcher needs (watcher.json "needs") and was granted`);
  };
  const get = (name) => (Object.prototype.hasOwnProperty.call(have, name) ? have[name] : refuse(name));
  return new Proxy(
    { get },
    {
      get(target, prop) {
        if (prop === 'get') return get;
        if (typeof prop === 'symbol' || prop === 'then' || prop === 'toJSON') return undefined;
        return get(prop);
      },
      set() {
        throw new Error('the vault is read-only here');
      },
      ownKeys() {
        return [];
      },
    },
  );
}

async function load(script) {
  try {
    return await import(pathToFileURL(script).href);
  } catch (e) {
    // Node before 22 reads a .js file as CommonJS, where `export` is a syntax error: read it
    // again as a module (its relative imports then do not resolve; a watcher is one file).
    if (!(e instanceof SyntaxError)) throw e;
    const source = readFileSync(script, 'utf8');
    return await import('data:text/javascript;base64,' + Buffer.from(source).toString('base64'));
  }
}

async function main() {
  const script = process.argv[2];
  const input = readInput();
  const mod = await load(script);
  const watch = mod.watch ?? mod.default?.watch ?? mod.default;
  if (typeof watch !== 'function') {
    throw new Error(`${script} exports no watch function: export async function watch({vault, since, emit, log})`);
  }
  let since = input.since ?? null;
  const emit = (item) => out({ emit: item });
  const log = (...parts) => out({ log: parts.map((p) => (typeof p === 'string' ? p : JSON.stringify(p))).join(' ') });
  const result = await watch({
    vault: vaultOf(input.vault),
    since,
    emit,
    log,
    dryRun: Boolean(input.dry_run),
    // What its webhook was called with (JSON, or the body as text), for a webhook watcher.
    webhook: input.webhook ?? null,
    setSince: (next) => {
      since = next;
    },
  });
  // A watch may return its new cursor, or set it; either moves it.
  if (result !== undefined) since = result;
  if (since !== (input.since ?? null)) out({ since });
}

main().then(
  () => process.exit(0),
  (e) => {
    out({ error: String(e && e.message ? e.message : e) });
    process.exit(1);
  },
);
