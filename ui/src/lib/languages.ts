// Which highlighter language a code fence's tag or a file's name means, and what to call it.
// Small and synchronous: the highlighter itself (lib/highlighter.ts) is loaded only when a code
// block or a diff is on screen, so a view without code (Lumen, most of the chat) never pays for it.

/** The languages the highlighter carries, by the id it registers them under, with their label. */
export const LANGUAGES: Record<string, string> = {
  bash: 'Shell',
  console: 'Console',
  javascript: 'JavaScript',
  typescript: 'TypeScript',
  rust: 'Rust',
  python: 'Python',
  json: 'JSON',
  diff: 'Diff',
  xml: 'HTML',
  css: 'CSS',
  go: 'Go',
  sql: 'SQL',
  yaml: 'YAML',
  ini: 'TOML',
};

/** Fence tags (lower case) → language id. */
const ALIASES: Record<string, string> = {
  sh: 'bash', shell: 'bash', zsh: 'bash', bash: 'bash',
  console: 'console', shellsession: 'console',
  js: 'javascript', jsx: 'javascript', mjs: 'javascript', cjs: 'javascript', javascript: 'javascript',
  ts: 'typescript', tsx: 'typescript', mts: 'typescript', cts: 'typescript', typescript: 'typescript',
  rs: 'rust', rust: 'rust',
  py: 'python', python: 'python', python3: 'python',
  json: 'json', jsonc: 'json', json5: 'json',
  diff: 'diff', patch: 'diff',
  html: 'xml', htm: 'xml', xml: 'xml', svg: 'xml', xhtml: 'xml', svelte: 'xml', vue: 'xml',
  css: 'css', scss: 'css',
  go: 'go', golang: 'go',
  sql: 'sql', postgres: 'sql', postgresql: 'sql', sqlite: 'sql',
  yaml: 'yaml', yml: 'yaml',
  toml: 'ini', ini: 'ini', cfg: 'ini', conf: 'ini',
};

/** File extensions (and a few whole names) → language id. */
const FILES: Record<string, string> = {
  sh: 'bash', bash: 'bash', zsh: 'bash', '.bashrc': 'bash', '.zshrc': 'bash', '.profile': 'bash',
  js: 'javascript', mjs: 'javascript', cjs: 'javascript', jsx: 'javascript',
  ts: 'typescript', mts: 'typescript', cts: 'typescript', tsx: 'typescript',
  rs: 'rust', py: 'python', pyi: 'python',
  json: 'json', jsonc: 'json', json5: 'json', 'package-lock.json': 'json',
  diff: 'diff', patch: 'diff',
  html: 'xml', htm: 'xml', xml: 'xml', svg: 'xml', svelte: 'xml', vue: 'xml', plist: 'xml',
  css: 'css', scss: 'css',
  go: 'go', sql: 'sql', yaml: 'yaml', yml: 'yaml',
  toml: 'ini', ini: 'ini', cfg: 'ini', 'cargo.lock': 'ini',
};

/** The language a fence's info string names (its first word), or null for plain text. */
export function fenceLanguage(info: string | null | undefined): string | null {
  const tag = (info ?? '').trim().split(/[\s{,]/)[0].toLowerCase();
  return ALIASES[tag] ?? null;
}

/** The language of a file, by its name, or null. */
export function fileLanguage(path: string | null | undefined): string | null {
  const name = (path ?? '').split(/[\\/]/).pop()!.toLowerCase();
  if (FILES[name]) return FILES[name];
  const dot = name.lastIndexOf('.');
  return dot >= 0 ? (FILES[name.slice(dot + 1)] ?? null) : null;
}

/** What to call a fence's language above its block: the known name, else the tag as written. */
export function languageLabel(info: string | null | undefined): string {
  const id = fenceLanguage(info);
  const tag = (info ?? '').trim().split(/[\s{,]/)[0];
  // One highlighter grammar serves several names: say the one the fence used.
  if (id === 'ini' || id === 'xml' || id === 'sql') return tag.toUpperCase();
  if (id) return LANGUAGES[id];
  return tag.slice(0, 24) || 'text';
}
