// Copy text: the Clipboard API where the page may use it (a secure context: https, localhost, the
// Mac app), else a hidden textarea and the older copy command (a phone on a box's plain-http
// address has no Clipboard API).

/** Copy `text`; true when the browser says it did. */
export async function copyText(text: string): Promise<boolean> {
  if (typeof navigator !== 'undefined' && navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      // Refused (no permission, the page not focused): try the old way.
    }
  }
  return copyByCommand(text);
}

function copyByCommand(text: string): boolean {
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.top = '0';
  area.style.left = '-9999px';
  area.style.opacity = '0';
  document.body.appendChild(area);
  const focused = document.activeElement as HTMLElement | null;
  area.select();
  area.setSelectionRange(0, text.length);
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  area.remove();
  focused?.focus?.();
  return ok;
}

/** How long a copied secret (the vault's generator) stays on the clipboard. */
export const CLEAR_AFTER_MS = 30_000;

/** What `copyForAWhile` needs of the clipboard and the clock (a test gives its own). */
export interface ClipIO {
  copy(text: string): Promise<boolean>;
  /** What the clipboard holds now; null when the page may not read it. */
  read(): Promise<string | null>;
  /** Empty it; true when that worked. */
  clear(): Promise<boolean>;
  later(f: () => void, ms: number): () => void;
}

/** Whether to empty the clipboard once a copied `copied` is due to go: only when it still holds
 * that (the person copied nothing since). When the page may not read it (`held` null), only when
 * nothing else was copied from this page since (`lastHere`, this page's last copy). */
export function shouldClear(held: string | null, copied: string, lastHere: string | null): boolean {
  return held === null ? lastHere === copied : held === copied;
}

const browserIO: ClipIO = {
  copy: copyText,
  async read() {
    // Read only where the person already allowed it: asking for it 30 s later would be a
    // question out of nowhere.
    try {
      if (!navigator.clipboard || !window.isSecureContext || !navigator.permissions) return null;
      const p = await navigator.permissions.query({ name: 'clipboard-read' as PermissionName });
      return p.state === 'granted' ? await navigator.clipboard.readText() : null;
    } catch {
      return null;
    }
  },
  async clear() {
    if (typeof navigator !== 'undefined' && navigator.clipboard && window.isSecureContext) {
      try {
        await navigator.clipboard.writeText('');
        return true;
      } catch {
        // Refused: the old way.
      }
    }
    return copyByCommand(' ');
  },
  later(f, ms) {
    const t = setTimeout(f, ms);
    return () => clearTimeout(t);
  },
};

/** This page's last copy through `copyForAWhile`, while it is due to go. */
let lastHere: string | null = null;
let cancelLast: (() => void) | null = null;

/** Copy `text` (a secret), and empty the clipboard `ms` later if it still holds it. True when
 * the copy worked. */
export async function copyForAWhile(text: string, ms = CLEAR_AFTER_MS, io: ClipIO = browserIO): Promise<boolean> {
  if (!(await io.copy(text))) return false;
  cancelLast?.();
  lastHere = text;
  cancelLast = io.later(() => {
    cancelLast = null;
    void io.read().then(async (held) => {
      if (shouldClear(held, text, lastHere)) await io.clear();
      if (lastHere === text) lastHere = null;
    });
  }, ms);
  return true;
}
