// What a thread's turns changed in its folder (issue 25), as the chat and the Changes view show
// it: a short mark per turn from the events (`thread.changed`, `thread.reverted`, never content),
// the turns with their diffs from `threads.changes`, and the words around them (the chat's row,
// the comments sent back to the session, the revert's question). Pure: no DOM, no fetch, so node
// --test covers it (ui/test/changes.test.mjs).

import type { ChangedFile, TurnChanges } from './types';

/** An event as it comes (the stream's and `system.events`' shape). */
export interface Happened {
  id: number;
  at: number;
  type: string;
  thread?: string | null;
  payload?: any;
}

/** A path a turn changed, as `thread.changed` names it. */
export interface ChangedPath {
  path: string;
  status: string;
  announced: boolean;
}

/** One turn's changes as the chat marks them: what `thread.changed` said. */
export interface TurnMark {
  /** `<thread>:<n>`, as events name it. */
  turn: string;
  at: number;
  files: number;
  added: number;
  modified: number;
  deleted: number;
  /** Changed by a command without any tool call saying so. */
  unannounced: number;
  /** The first 100 paths. */
  paths: ChangedPath[];
  /** Why the turn's changes are not known, when they are not. */
  note: string | null;
}

/** A thread's marks, oldest turn first, and the files put back, by turn. */
export interface ChangeLog {
  turns: TurnMark[];
  reverted: Record<string, string[]>;
}

export function emptyLog(): ChangeLog {
  return { turns: [], reverted: {} };
}

/** The turn's number in its thread (`<thread>:<n>` → n), or null. */
export function turnNo(turn: string): number | null {
  const m = /:(\d+)$/.exec(turn);
  return m ? Number(m[1]) : null;
}

/** Turns in the thread's order: by number, then by time. */
function byTurn<T extends { turn: string; at: number }>(a: T, b: T): number {
  return (turnNo(a.turn) ?? 0) - (turnNo(b.turn) ?? 0) || a.at - b.at;
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/**
 * One event folded into the log (a new log; the same one when it changes nothing): a turn's
 * `thread.changed` is its mark (once per turn, the latest wins), `thread.reverted` adds the paths
 * put back to its turn.
 */
export function foldChange(log: ChangeLog, e: Happened): ChangeLog {
  const p = (e.payload ?? {}) as Record<string, unknown>;
  const turn = typeof p.turn === 'string' ? p.turn : null;
  if (!turn) return log;
  if (e.type === 'thread.changed') {
    const paths = Array.isArray(p.paths)
      ? p.paths
          .filter((x): x is Record<string, unknown> => !!x && typeof (x as Record<string, unknown>).path === 'string')
          .map((x) => ({ path: String(x.path), status: typeof x.status === 'string' ? x.status : 'modified', announced: x.announced === true }))
      : [];
    const mark: TurnMark = {
      turn,
      at: e.at,
      files: num(p.files),
      added: num(p.added),
      modified: num(p.modified),
      deleted: num(p.deleted),
      unannounced: num(p.unannounced),
      paths,
      note: typeof p.note === 'string' && p.note ? p.note : null,
    };
    return { ...log, turns: [...log.turns.filter((t) => t.turn !== turn), mark].sort(byTurn) };
  }
  if (e.type === 'thread.reverted') {
    const paths = Array.isArray(p.paths) ? p.paths.filter((x): x is string => typeof x === 'string') : [];
    const had = log.reverted[turn] ?? [];
    const more = paths.filter((x) => !had.includes(x));
    if (!more.length) return log;
    return { ...log, reverted: { ...log.reverted, [turn]: [...had, ...more] } };
  }
  return log;
}

/** A turn as `threads.changes` gives it, marked as `thread.changed` would (for a turn the events
 * read back no longer hold). */
export function markOf(t: TurnChanges): TurnMark {
  const count = (s: string) => t.files.filter((f) => f.status === s).length;
  return {
    turn: t.turn,
    at: t.at,
    files: t.files.length,
    added: count('added'),
    modified: count('modified') + count('type'),
    deleted: count('deleted'),
    unannounced: t.files.filter((f) => !f.announced).length,
    paths: t.files.map((f) => ({ path: f.path, status: f.status, announced: f.announced })),
    note: t.note ?? null,
  };
}

/** How many files the thread's turns changed: each path once, and those the events did not name
 * (past their first 100) counted too. */
export function filesChanged(log: ChangeLog): number {
  const seen = new Set<string>();
  let unnamed = 0;
  for (const t of log.turns) {
    for (const p of t.paths) seen.add(p.path);
    unnamed += Math.max(0, t.files - t.paths.length);
  }
  return seen.size + unnamed;
}

const files = (n: number) => `${n} file${n === 1 ? '' : 's'}`;

/** The chat's row: "Changed 2 files · 2 without a tool saying so", "Changed notes.txt". */
export function markWords(m: TurnMark): string {
  if (m.note && !m.files) return `This turn's file changes are not known: ${m.note}`;
  const what = m.files === 1 && m.paths.length === 1 ? `Changed ${m.paths[0].path}` : `Changed ${files(m.files)}`;
  if (!m.unannounced) return what;
  if (m.files === 1) return `${what} · without a tool saying so`;
  return `${what} · ${m.unannounced} without a tool saying so`;
}

/** A file's status in a word. */
export function statusWord(status: string): string {
  switch (status) {
    case 'added':
      return 'added';
    case 'deleted':
      return 'deleted';
    case 'type':
      return 'type changed';
    default:
      return 'modified';
  }
}

/** `threads.changes` answers merged: a turn read again replaces the one before; oldest first. */
export function mergeTurns(have: TurnChanges[], got: TurnChanges[]): TurnChanges[] {
  const keys = new Set(got.map((t) => t.turn));
  return [...have.filter((t) => !keys.has(t.turn)), ...got].sort(byTurn);
}

// ---- Where the marks go in the chat ----

/** The marks the chat shows: every turn that changed files, and of the turns whose changes are
 * not known (a session in the home folder: each of its turns) only the newest, said once. */
export function chatMarks(turns: TurnMark[]): TurnMark[] {
  const noted = turns.filter((t) => !t.files && t.note);
  const last = noted[noted.length - 1];
  return turns.filter((t) => t.files > 0 || t === last);
}

/** What placing needs of a timeline item. */
export interface Placed {
  key: string;
  /** Missing for a message sent here and not confirmed yet, or an answer still streaming. */
  at?: number;
}

/**
 * Where each turn's mark goes among `items` (oldest first): before the first item after it in
 * time, or after the last. `older`: the timeline has older pages not loaded; a mark from before
 * what is loaded belongs up there, not at the top of what is.
 */
export function placeMarks<T extends Placed>(items: T[], marks: TurnMark[], older = false): { before: Map<string, TurnMark[]>; end: TurnMark[] } {
  const before = new Map<string, TurnMark[]>();
  const end: TurnMark[] = [];
  for (const m of [...marks].sort((a, b) => a.at - b.at)) {
    let i = items.findIndex((it) => (it.at ?? Infinity) > m.at);
    if (i < 0) i = items.length;
    if (older && i === 0) continue;
    if (i >= items.length) end.push(m);
    else before.set(items[i].key, [...(before.get(items[i].key) ?? []), m]);
  }
  return { before, end };
}

// ---- The Changes view's address ----

/** What the address says the Changes view opens at (`?changes=`): `all` for the newest turn, or
 * a turn by its number in the thread (a turn id with no number as it is). */
export function changesFor(turn: string | null): string {
  if (!turn) return 'all';
  const n = turnNo(turn);
  return n !== null ? String(n) : turn;
}

/** The turn the address names among those read (`all`, or one not among them: null, the newest). */
export function turnAt<T extends { turn: string }>(turns: T[], at: string | null): string | null {
  if (!at || at === 'all') return null;
  const t = turns.find((x) => x.turn === at || String(turnNo(x.turn)) === at);
  return t ? t.turn : null;
}

// ---- Comments on lines ----

/** A diff's line as a comment names it: the new file's line, or the old file's removed line. */
export interface LineAt {
  kind: 'eq' | 'del' | 'ins';
  oldNo: number | null;
  newNo: number | null;
}

/** A comment the person wrote on a line, waiting to be sent. */
export interface LineComment {
  /** Unique in the list (the turn, the path and the line). */
  key: string;
  turn: string;
  path: string;
  /** `new` for a line of the file as it is, `old` for a removed line. */
  side: 'new' | 'old';
  line: number;
  text: string;
}

/** Where a comment is, by its line: a removed line by its old number, any other by its new one;
 * null for a line with no number (it cannot be named). */
export function sideOf(l: LineAt): { side: 'new' | 'old'; line: number } | null {
  if (l.kind === 'del') return l.oldNo != null ? { side: 'old', line: l.oldNo } : null;
  return l.newNo != null ? { side: 'new', line: l.newNo } : null;
}

export function commentKey(turn: string, path: string, at: { side: 'new' | 'old'; line: number }): string {
  return `${turn}\u0000${path}\u0000${at.side}${at.line}`;
}

/** A path in backticks: a backtick inside it doubles the fence, as Markdown wants. */
function code(s: string): string {
  const fence = s.includes('`') ? '``' : '`';
  const pad = s.startsWith('`') || s.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${s}${pad}${fence}`;
}

/** "On `notes.txt:1`", "On `notes.txt`, the removed line 2". */
export function commentWhere(c: Pick<LineComment, 'path' | 'side' | 'line'>): string {
  return c.side === 'new' ? `On ${code(`${c.path}:${c.line}`)}` : `On ${code(c.path)}, the removed line ${c.line}`;
}

/** One comment as the session reads it: "On `notes.txt:1`: keep the old wording". */
export function commentLine(c: Pick<LineComment, 'path' | 'side' | 'line' | 'text'>): string {
  return `${commentWhere(c)}: ${c.text.trim()}`;
}

/** The message the comments make, in the order they were written, a blank line between two. */
export function commentsMessage(list: Pick<LineComment, 'path' | 'side' | 'line' | 'text'>[]): string {
  return list
    .filter((c) => c.text.trim())
    .map(commentLine)
    .join('\n\n');
}

/** A comment added, or put in place of the one on the same line. */
export function putComment(list: LineComment[], c: LineComment): LineComment[] {
  return list.some((x) => x.key === c.key) ? list.map((x) => (x.key === c.key ? c : x)) : [...list, c];
}

// ---- Putting back ----

/** What the confirmation says before a file, or a turn's files, are put back. */
export function revertQuestion(turn: string, files: Pick<ChangedFile, 'path' | 'status'>[], one: boolean): { title: string; body: string; ok: string } {
  const n = turnNo(turn);
  const of = n !== null ? `turn ${n}` : 'this turn';
  if (one && files.length === 1) {
    const f = files[0];
    const body =
      f.status === 'added'
        ? `${f.path} was made in ${of}: putting it back removes it from the folder.`
        : f.status === 'deleted'
          ? `${f.path} was deleted in ${of}: putting it back writes it again as it was.`
          : `${f.path} goes back to how it was before ${of}. What ${of} wrote in it is lost.`;
    return { title: `Put back ${f.path}?`, body: `${body} Nothing is written if the file changed again since.`, ok: 'Put back' };
  }
  const made = files.filter((f) => f.status === 'added').length;
  const body = `${files.length === 1 ? 'Its file goes' : `Its ${files.length} files go`} back to how they were before ${of}${made ? ` (${made === 1 ? 'the file it made is' : `the ${made} files it made are`} removed)` : ''}. Nothing is written if one of them changed again since.`;
  return { title: `Put back what ${of} changed?`, body, ok: 'Put back all' };
}
