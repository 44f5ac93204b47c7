// How words are sent to a thread while a turn runs (`threads.send`'s `mode`): they join the
// running turn at its next step (steer), or wait for its end (queue, "After this turn"); with no
// turn running, either is a new turn. The composer and the Changes view's comments offer the
// same choice in the same words. Pure, for node --test (ui/test/changes.test.mjs).

/** Whether the words wait for the turn's end: only while one runs, and only when asked. */
export function queues(running: boolean, after: boolean): boolean {
  return running && after;
}

/** The send button's word. */
export function sendWord(running: boolean, after: boolean): 'Send' | 'Steer' | 'Queue' {
  return running ? (after ? 'Queue' : 'Steer') : 'Send';
}

/** What "After this turn" does, said beside it. */
export function afterHint(after: boolean): string {
  return after ? '— waits for the turn to end' : '— joins the running turn';
}
