// A unified diff as git writes it (`diff --git`, `index`, `---`, `+++`, then `@@ -a,b +c,d @@`
// hunks), read back into what Diff.svelte draws: each hunk's old and new text and the line each
// starts at in its file. `threads.changes` gives one such diff per file. Pure: unit-tested in
// node (ui/test/hunks.test.mjs).

export interface Hunk {
  /** The line of the file before where `old` starts (1-based; git's `a`, 0 for an empty side). */
  oldStart: number;
  /** The line of the file after where `new` starts. */
  newStart: number;
  /** The hunk's lines as they were: its unchanged and removed lines, each ending in a newline. */
  old: string;
  /** The hunk's lines as they are: its unchanged and added lines. */
  new: string;
  /** What git wrote after the closing `@@` (the function the hunk is in), often empty. */
  section: string;
}

export interface Unified {
  hunks: Hunk[];
  /** Git said "Binary files ... differ" (or sent a binary patch): there are no lines to draw. */
  binary: boolean;
}

const HEAD = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$/;

/**
 * The hunks of one file's unified diff. A hunk is read by its counts, so a line of the file that
 * looks like a header (`diff --git`, `--- a`) is still a line of it; "\ No newline at end of
 * file" is git's remark, not a line. A diff cut short (its last hunk incomplete) gives what it
 * has. Anything before the first hunk (git's header lines) is skipped.
 */
export function parseUnified(text: string | null | undefined): Unified {
  const out: Unified = { hunks: [], binary: false };
  if (!text) return out;
  const lines = text.split(/\r?\n/);
  // A final newline ends the last line; it does not start an empty one.
  if (lines[lines.length - 1] === '') lines.pop();
  let i = 0;
  while (i < lines.length) {
    const line = lines[i++];
    const m = HEAD.exec(line);
    if (!m) {
      if (/^Binary files .* differ$/.test(line) || line === 'GIT binary patch') out.binary = true;
      continue;
    }
    let oldLeft = m[2] === undefined ? 1 : Number(m[2]);
    let newLeft = m[4] === undefined ? 1 : Number(m[4]);
    const old: string[] = [];
    const next: string[] = [];
    while (i < lines.length && (oldLeft > 0 || newLeft > 0)) {
      const l = lines[i];
      if (l.startsWith('\\')) {
        i++;
        continue;
      }
      const sign = l[0];
      // A line of context whose one space an editor or a mail trimmed away is still context.
      const body = l.slice(1);
      if (sign === '-' && oldLeft > 0) {
        old.push(body);
        oldLeft--;
      } else if (sign === '+' && newLeft > 0) {
        next.push(body);
        newLeft--;
      } else if ((sign === ' ' || l === '') && oldLeft > 0 && newLeft > 0) {
        old.push(body);
        next.push(body);
        oldLeft--;
        newLeft--;
      } else break;
      i++;
    }
    // Git's remark after the hunk's last line.
    while (i < lines.length && lines[i].startsWith('\\')) i++;
    out.hunks.push({
      oldStart: Number(m[1]),
      newStart: Number(m[3]),
      old: old.map((l) => l + '\n').join(''),
      new: next.map((l) => l + '\n').join(''),
      section: (m[5] ?? '').trim(),
    });
  }
  return out;
}
