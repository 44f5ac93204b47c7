// Diffs computed in the browser (pure: unit-tested in node): Myers' O(ND) diff over lines, and
// over words inside a changed line for emphasis; unchanged runs collapsed to a few lines of
// context; rows paired for a side-by-side view.

export type Kind = 'eq' | 'del' | 'ins';

/** One step of an edit script: `a` indexes the old sequence, `b` the new (-1 where none). */
export interface Op {
  kind: Kind;
  a: number;
  b: number;
}

/** Past this many differences the diff stops looking and says "all of it changed". */
export const MAX_EDITS = 1500;

/**
 * The shortest edit script from `a` to `b` (Myers 1986), common prefix and suffix first.
 * When they differ in more than `maxEdits` places, the middle is all deleted then all inserted:
 * a correct script, just not the shortest, found in bounded time and memory.
 */
export function diff<T>(a: readonly T[], b: readonly T[], maxEdits = MAX_EDITS): Op[] {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const out: Op[] = [];
  for (let i = 0; i < pre; i++) out.push({ kind: 'eq', a: i, b: i });
  const midA = a.slice(pre, a.length - suf);
  const midB = b.slice(pre, b.length - suf);
  const mid = myers(midA, midB, maxEdits);
  if (mid) {
    for (const op of mid) out.push({ kind: op.kind, a: op.a < 0 ? -1 : op.a + pre, b: op.b < 0 ? -1 : op.b + pre });
  } else {
    for (let i = 0; i < midA.length; i++) out.push({ kind: 'del', a: pre + i, b: -1 });
    for (let j = 0; j < midB.length; j++) out.push({ kind: 'ins', a: -1, b: pre + j });
  }
  for (let i = suf; i > 0; i--) out.push({ kind: 'eq', a: a.length - i, b: b.length - i });
  return out;
}

function myers<T>(a: readonly T[], b: readonly T[], maxD: number): Op[] | null {
  const n = a.length;
  const m = b.length;
  if (!n) return b.map((_, j) => ({ kind: 'ins' as const, a: -1, b: j }));
  if (!m) return a.map((_, i) => ({ kind: 'del' as const, a: i, b: -1 }));
  const limit = Math.min(n + m, maxD);
  const off = limit + 1;
  const v = new Int32Array(2 * limit + 3);
  // trace[d]: v for k in [-d-1, d+1] as it was before round d.
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= limit && found < 0; d++) {
    trace.push(v.slice(off - d - 1, off + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[off + k - 1] < v[off + k + 1]) ? v[off + k + 1] : v[off + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[off + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
  }
  if (found < 0) return null;
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = found; d >= 0; d--) {
    const t = trace[d];
    const at = (k: number) => t[k + d + 1];
    const k = x - y;
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : at(prevK);
    const prevY = d === 0 ? 0 : prevX - prevK;
    while (x > prevX && y > prevY) {
      x--;
      y--;
      ops.push({ kind: 'eq', a: x, b: y });
    }
    if (d > 0) {
      if (x === prevX) ops.push({ kind: 'ins', a: -1, b: prevY });
      else ops.push({ kind: 'del', a: prevX, b: -1 });
    }
    x = prevX;
    y = prevY;
  }
  return ops.reverse();
}

/** One line of a diff. `a`/`b` index the old/new text's lines; the numbers are what to show. */
export interface Line {
  kind: Kind;
  text: string;
  a: number | null;
  b: number | null;
  oldNo: number | null;
  newNo: number | null;
  /** Character ranges [from, to) changed inside this line (word-level emphasis). */
  emph: [number, number][];
}

/** The lines of a text: `\n` or `\r\n` separated, a final newline ending the last line. */
export function splitLines(text: string): string[] {
  if (!text) return [];
  const lines = text.split(/\r?\n/);
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** The line diff of `old` → `next`, numbered from `oldStart`/`newStart`, changed words marked. */
export function lineDiff(old: string, next: string, oldStart = 1, newStart = 1): Line[] {
  const a = splitLines(old);
  const b = splitLines(next);
  const lines: Line[] = diff(a, b).map((op) => ({
    kind: op.kind,
    text: op.kind === 'ins' ? b[op.b] : a[op.a],
    a: op.a < 0 ? null : op.a,
    b: op.b < 0 ? null : op.b,
    oldNo: op.a < 0 ? null : op.a + oldStart,
    newNo: op.b < 0 ? null : op.b + newStart,
    emph: [],
  }));
  emphasize(lines);
  return lines;
}

/** Words, runs of spaces, and single other characters: the units a changed line is compared in. */
export function words(line: string): string[] {
  return line.match(/[\p{L}\p{N}_]+|\s+|[^\p{L}\p{N}_\s]/gu) ?? [];
}

/** Lines longer than this are not compared word by word. */
const MAX_WORDS_LINE = 2000;

/**
 * Mark the changed words of each deleted line paired with an inserted one (the n-th deletion of a
 * change with its n-th insertion), when the two are alike enough for that to help the eye: at
 * least 40% of the longer line unchanged. Otherwise the whole line's colour says it.
 */
export function emphasize(lines: Line[]): void {
  let i = 0;
  while (i < lines.length) {
    if (lines[i].kind === 'eq') {
      i++;
      continue;
    }
    const dels: Line[] = [];
    const ins: Line[] = [];
    while (i < lines.length && lines[i].kind !== 'eq') {
      (lines[i].kind === 'del' ? dels : ins).push(lines[i]);
      i++;
    }
    for (let p = 0; p < Math.min(dels.length, ins.length); p++) pairWords(dels[p], ins[p]);
  }
}

function pairWords(del: Line, ins: Line): void {
  if (del.text.length > MAX_WORDS_LINE || ins.text.length > MAX_WORDS_LINE) return;
  const a = words(del.text);
  const b = words(ins.text);
  const ops = diff(a, b, 400);
  let same = 0;
  const dr: [number, number][] = [];
  const ir: [number, number][] = [];
  let ax = 0;
  let bx = 0;
  for (const op of ops) {
    if (op.kind === 'eq') {
      same += a[op.a].length;
      ax += a[op.a].length;
      bx += b[op.b].length;
    } else if (op.kind === 'del') {
      push(dr, ax, ax + a[op.a].length);
      ax += a[op.a].length;
    } else {
      push(ir, bx, bx + b[op.b].length);
      bx += b[op.b].length;
    }
  }
  if (same < 0.4 * Math.max(del.text.length, ins.text.length)) return;
  del.emph = dr;
  ins.emph = ir;
}

function push(ranges: [number, number][], from: number, to: number): void {
  const last = ranges[ranges.length - 1];
  if (last && last[1] === from) last[1] = to;
  else ranges.push([from, to]);
}

/** A row of a shown diff: a line, or a run of unchanged lines folded away. */
export type Row = { type: 'line'; line: Line } | { type: 'gap'; lines: Line[] };

/**
 * Fold runs of unchanged lines, keeping `context` lines next to each change; a fold that would
 * hide a single line shows it instead.
 */
export function fold(lines: Line[], context = 3): Row[] {
  const rows: Row[] = [];
  let i = 0;
  while (i < lines.length) {
    if (lines[i].kind !== 'eq') {
      rows.push({ type: 'line', line: lines[i++] });
      continue;
    }
    let j = i;
    while (j < lines.length && lines[j].kind === 'eq') j++;
    const run = lines.slice(i, j);
    const keepBefore = i === 0 ? 0 : context;
    const keepAfter = j === lines.length ? 0 : context;
    if (run.length - keepBefore - keepAfter > 1) {
      for (const l of run.slice(0, keepBefore)) rows.push({ type: 'line', line: l });
      rows.push({ type: 'gap', lines: run.slice(keepBefore, run.length - keepAfter) });
      for (const l of run.slice(run.length - keepAfter)) rows.push({ type: 'line', line: l });
    } else {
      for (const l of run) rows.push({ type: 'line', line: l });
    }
    i = j;
  }
  return rows;
}

/** A row of the side-by-side view: the old line left, the new right (null: nothing there). */
export type Pair = { type: 'pair'; left: Line | null; right: Line | null } | { type: 'gap'; lines: Line[] };

/** Rows side by side: unchanged lines on both sides, a change's deletions beside its insertions. */
export function sideBySide(rows: Row[]): Pair[] {
  const out: Pair[] = [];
  let i = 0;
  while (i < rows.length) {
    const r = rows[i];
    if (r.type === 'gap') {
      out.push(r);
      i++;
    } else if (r.line.kind === 'eq') {
      out.push({ type: 'pair', left: r.line, right: r.line });
      i++;
    } else {
      const dels: Line[] = [];
      const ins: Line[] = [];
      while (i < rows.length) {
        const x = rows[i];
        if (x.type !== 'line' || x.line.kind === 'eq') break;
        (x.line.kind === 'del' ? dels : ins).push(x.line);
        i++;
      }
      for (let p = 0; p < Math.max(dels.length, ins.length); p++) out.push({ type: 'pair', left: dels[p] ?? null, right: ins[p] ?? null });
    }
  }
  return out;
}

/** Lines added and removed. */
export function stats(lines: Line[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const l of lines) {
    if (l.kind === 'ins') added++;
    else if (l.kind === 'del') removed++;
  }
  return { added, removed };
}

/** A run of a line's text with its highlight classes and whether it is a changed word. */
export interface Piece {
  text: string;
  cls: string;
  em: boolean;
}

/**
 * Cut a line's highlight segments at its emphasis ranges: the pieces the view shows. `segments`
 * must cover `text` (what lib/highlighter.ts `lines` gives); without them the text is one piece.
 */
export function paint(text: string, segments: { text: string; classes: string[] }[] | null, emph: [number, number][]): Piece[] {
  const segs = segments && segments.map((s) => s.text).join('') === text ? segments : [{ text, classes: [] }];
  const cuts = new Set<number>();
  for (const [f, t] of emph) {
    cuts.add(f);
    cuts.add(t);
  }
  const isEm = (at: number) => emph.some(([f, t]) => at >= f && at < t);
  const out: Piece[] = [];
  let pos = 0;
  for (const s of segs) {
    let start = 0;
    const end = s.text.length;
    const inner = [...cuts].filter((c) => c > pos && c < pos + end).sort((x, y) => x - y);
    for (const c of [...inner, pos + end]) {
      const piece = s.text.slice(start, c - pos);
      if (piece) out.push({ text: piece, cls: s.classes.join(' '), em: isEm(pos + start) });
      start = c - pos;
    }
    pos += end;
  }
  return out;
}
