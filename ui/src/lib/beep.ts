// A short beep for an alarm that falls due while the page is on screen: three tones made with
// WebAudio, no sound file. Browsers let a page make sound only after the person has touched it,
// so the first touch or key readies the sound (`primeSound`); until then, or with no audio at
// all, an alarm is silent, never an error: its card in Needs says it either way.

type Ctx = typeof AudioContext;

let ctx: AudioContext | null = null;

function audio(): AudioContext | null {
  if (ctx) return ctx;
  const C: Ctx | undefined = globalThis.AudioContext ?? (globalThis as unknown as { webkitAudioContext?: Ctx }).webkitAudioContext;
  if (!C) return null;
  try {
    ctx = new C();
  } catch {
    return null;
  }
  return ctx;
}

let primed = false;
/** Ready the sound at the person's first touch or key on the page (once): some browsers let a
 * page start sound only inside such a moment. Suspended again at once, so no audio device is
 * held until an alarm. */
export function primeSound(): void {
  if (primed || typeof window === 'undefined') return;
  primed = true;
  const ready = () => {
    window.removeEventListener('pointerdown', ready, true);
    window.removeEventListener('keydown', ready, true);
    try {
      const a = audio();
      void a
        ?.resume()
        .then(() => a.suspend())
        .catch(() => {});
    } catch {
      // No sound on this device.
    }
  };
  window.addEventListener('pointerdown', ready, true);
  window.addEventListener('keydown', ready, true);
}

let letGo: ReturnType<typeof setTimeout> | undefined;

/** How long a browser may take to let the sound start before the beep is left out. */
const START_MS = 500;

/** Beep, if the page is on screen and may make sound; otherwise nothing. */
export async function beep(): Promise<void> {
  try {
    if (typeof document === 'undefined' || document.visibilityState !== 'visible') return;
    const a = audio();
    if (!a) return;
    if (a.state !== 'running') {
      const started = a.resume().catch(() => {});
      await Promise.race([started, new Promise((r) => setTimeout(r, START_MS))]);
    }
    // Not allowed to play (the person has not touched the page yet): silent, rather than a beep
    // that sounds at some later touch, long after the alarm.
    if (a.state !== 'running') return;
    const t = a.currentTime;
    for (const start of [0, 0.22, 0.44]) {
      const osc = a.createOscillator();
      const gain = a.createGain();
      osc.type = 'sine';
      osc.frequency.value = 880;
      gain.gain.setValueAtTime(0.0001, t + start);
      gain.gain.exponentialRampToValueAtTime(0.25, t + start + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, t + start + 0.16);
      osc.connect(gain).connect(a.destination);
      osc.start(t + start);
      osc.stop(t + start + 0.18);
    }
    // The audio device is let go once the last beep is over.
    clearTimeout(letGo);
    letGo = setTimeout(() => void a.suspend().catch(() => {}), 1000);
  } catch {
    // Audio refused or missing: the card is enough.
  }
}
