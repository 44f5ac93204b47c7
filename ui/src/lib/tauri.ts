// The Mac app (Tauri) shows this app in its Lumen window. There, Esc with nothing else to do
// hides the window; in a browser there is no Tauri and nothing happens.

interface TauriInternals {
  invoke: (cmd: string, args?: Record<string, unknown>) => Promise<unknown>;
  metadata?: { currentWindow?: { label?: string } };
}

function internals(w: unknown): TauriInternals | null {
  const t = (w as { __TAURI_INTERNALS__?: TauriInternals } | undefined)?.__TAURI_INTERNALS__;
  return t && typeof t.invoke === 'function' ? t : null;
}

/** Whether this page is shown by the Mac app (so Esc can hide Lumen), not by a browser. */
export function inApp(w: unknown = globalThis): boolean {
  return internals(w) !== null;
}

/** Hide Lumen when this page is Lumen's; whether it asked. Never throws. */
export function hideLumen(w: unknown = globalThis): boolean {
  const t = internals(w);
  // Only Lumen's window may call it (its capability); the main window's label is not `lumen`.
  const label = t?.metadata?.currentWindow?.label;
  if (!t || (label !== undefined && label !== 'lumen')) return false;
  t.invoke('hide_lumen').catch(() => {});
  return true;
}

/** Esc that nothing handled (no turn to interrupt, no menu to close) hides Lumen. */
export function escHidesLumen(target: Window): () => void {
  if (!internals(target)) return () => {};
  const onkey = (e: KeyboardEvent) => {
    if (e.key !== 'Escape' || e.defaultPrevented || e.isComposing) return;
    // After every other handler of this key (the chat's interrupt is on the window too).
    setTimeout(() => {
      if (!e.defaultPrevented) hideLumen(target);
    }, 0);
  };
  target.addEventListener('keydown', onkey);
  return () => target.removeEventListener('keydown', onkey);
}
