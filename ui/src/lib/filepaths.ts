// File paths in a session's answer: which inline code spans name a file, and where that file is.
// Pure, for node --test (ui/test/filepaths.test.mjs).

/** A path as an answer wrote it, and the line it points at (`src/main.rs:42`). */
export interface FileRef {
  path: string;
  line: number | null;
}

/** Extensions that make a name with no `/` a file's (`main.rs`). Left out: those that are as
 * often a field or a method in code (`console.log`, `process.env`, `mutex.lock`, `array.map`). */
const EXTENSIONS = new Set(
  (
    'rs ts tsx mts cts js jsx mjs cjs svelte vue astro py pyi ipynb go rb php java kt kts scala swift dart lua zig nim ex exs erl hs ml ' +
    'c h cc cpp cxx hh hpp cs sh bash zsh fish ps1 bat sql graphql proto ' +
    'md mdx markdown txt rst adoc tex json jsonc jsonl ndjson yaml yml toml ini cfg conf xml plist csv tsv ' +
    'html htm css scss sass less png jpg jpeg gif webp svg ico bmp pdf zip gz tgz tar wasm patch diff'
  ).split(' '),
);

/** Dot files named on their own (`.env`, `.gitignore`). */
const DOTFILES = new Set(['.env', '.gitignore', '.gitattributes', '.dockerignore', '.editorconfig', '.npmrc', '.nvmrc', '.bashrc', '.zshrc', '.profile', '.prettierrc', '.eslintrc']);

/** The characters of a path worth linking: no spaces, quotes, brackets, colons or backslashes. */
const PATH = /^~?[\p{L}\p{N}._@+\-/]+$/u;
/** A first folder that is a web address's host (`github.com/owner/repo`, `www.example.org`). */
const HOST = /^(www\.[^/]+|[\w-]+(\.[\w-]+)*\.(com|org|net|io|dev|ai|edu|gov))$/i;

/**
 * The file an inline code span names, or null when it does not look like a path: it holds a `/`
 * or ends in a known extension, has no spaces and is not a web address; `:42` (or `:42:7`) after
 * it is the line.
 */
export function fileRef(code: string): FileRef | null {
  const text = code.trim();
  if (!text || text.length > 1024) return null;
  const m = /^(.*?)(?::(\d+)(?::\d+)?)?$/.exec(text)!;
  const path = m[1];
  const line = m[2] ? Number(m[2]) : null;
  if (!PATH.test(path) || !/\p{L}/u.test(path)) return null;
  if (path.startsWith('//') || path.startsWith('@') || (path.startsWith('~') && !path.startsWith('~/'))) return null;
  if (HOST.test(path.replace(/^~?\/+/, '').split('/')[0])) return null;
  if (!path.includes('/') && !DOTFILES.has(path)) {
    const ext = /.\.([\p{L}\p{N}]+)$/u.exec(path)?.[1]?.toLowerCase();
    if (!ext || !EXTENSIONS.has(ext)) return null;
  }
  return { path, line: line || null };
}

/**
 * `path` as `files.preview` takes it (absolute, or from `~`, with no `.` or `..`): a relative one
 * from `cwd`, the thread's folder. Null when it cannot be said: a relative path with no folder to
 * start from, or one that climbs above `~`.
 */
export function resolvePath(path: string, cwd: string | null | undefined): string | null {
  let base: string;
  let rest: string;
  if (path === '~' || path.startsWith('~/')) {
    base = '~';
    rest = path.slice(1);
  } else if (path.startsWith('/')) {
    base = '';
    rest = path;
  } else {
    if (!cwd) return null;
    const from = resolvePath(cwd, null);
    if (from === null) return null;
    return resolvePath(`${from.replace(/\/+$/, '')}/${path}`, null);
  }
  const parts: string[] = [];
  for (const part of rest.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (!parts.length && base === '~') return null;
      parts.pop();
    } else parts.push(part);
  }
  if (!parts.length) return base || '/';
  return `${base}/${parts.join('/')}`;
}
