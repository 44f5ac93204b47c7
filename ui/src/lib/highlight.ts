// The highlighter, on demand: the first code block or diff on screen loads it (one chunk, shared),
// and everything shows as plain text until it is here, so the first paint never waits for it.

type Highlighter = typeof import('./highlighter');

let loading: Promise<Highlighter> | null = null;

/** The highlighter module, loaded once. */
export function highlighter(): Promise<Highlighter> {
  loading ??= import('./highlighter');
  return loading;
}
