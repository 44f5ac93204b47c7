// A popup that closes as people expect: Esc (before anything else hears it, so it does not
// also interrupt a turn or hide Lumen) and a press anywhere outside it. A Svelte action:
// `<div use:dismiss={close}>`; `ignore` is an element whose own clicks toggle the popup.

export function dismiss(node: HTMLElement, close: (() => void) | { close: () => void; ignore?: HTMLElement | null }) {
  let opts = typeof close === 'function' ? { close, ignore: null } : close;
  const onkey = (e: KeyboardEvent) => {
    if (e.key !== 'Escape' || e.defaultPrevented) return;
    e.preventDefault();
    e.stopPropagation();
    opts.close();
  };
  const onpress = (e: PointerEvent) => {
    const t = e.target as Node | null;
    if (!t || node.contains(t) || opts.ignore?.contains(t)) return;
    opts.close();
  };
  // Capture: before the chat's own Esc (interrupt) and Lumen's (hide), which run on bubbling.
  document.addEventListener('keydown', onkey, true);
  document.addEventListener('pointerdown', onpress, true);
  return {
    update(next: typeof close) {
      opts = typeof next === 'function' ? { close: next, ignore: null } : next;
    },
    destroy() {
      document.removeEventListener('keydown', onkey, true);
      document.removeEventListener('pointerdown', onpress, true);
    },
  };
}
