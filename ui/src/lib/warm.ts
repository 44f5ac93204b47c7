/**
 * Writing in a closed thread starts its session (`threads.warm`), so the send finds it running:
 * the chat and Lumen each keep one of these. It asks once at a time, only while the thread is
 * `closed`, and says nothing of a failure (the send will).
 */
export function warmOnWrite(): (closed: boolean, warm: () => Promise<unknown>) => void {
  let warming = false;
  return (closed, warm) => {
    if (warming || !closed) return;
    warming = true;
    warm()
      .catch(() => {})
      .finally(() => (warming = false));
  };
}
