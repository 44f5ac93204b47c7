// Folders as a person reads them. Pure, for node --test (ui/test/paths.test.mjs).

/** `path` from `~` when it is under `home`. */
export function tilde(path: string, home: string | null | undefined): string {
  if (!home || home === '/') return path;
  const h = home.replace(/\/+$/, '');
  if (path === h) return '~';
  if (path.startsWith(h + '/')) return '~' + path.slice(h.length);
  return path;
}

/** The folder a chat's header shows: none for an agent's own folder (Vyre's, not the
 * person's: `…/vyre/agents/juno`), else the folder from `~`. */
export function headerFolder(cwd: string | null | undefined, home: string | null | undefined, agent: string | null | undefined): string | null {
  if (!cwd) return null;
  if (agent && /\/agents\/[^/]+\/?$/.test(cwd) && cwd.replace(/\/+$/, '').endsWith('/agents/' + agent)) return null;
  return tilde(cwd, home);
}
