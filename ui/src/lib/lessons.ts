// Lessons (spec 7.11): what Vyre learned from how the person corrects it, as the app shows them.
// The Lessons screen's words (where a lesson came from, whether it is checked in code, what its
// check looks for, its counts, where it applies and what it can be narrowed to), the one function
// that folds `lesson.*` events into the list, and the one-line notices a chat shows where a
// lesson was learned or kept. Pure: no DOM, no fetch, so node --test covers it
// (ui/test/lessons.test.mjs). lib/lessons.svelte.ts keeps the list.
// No word here uses an em dash: a lesson people teach first is often "don't use em dashes".

import type { components } from './openapi/generated';

/** A lesson as `learn.lessons` lists it (generated from vyred's published schema). */
export type Lesson = components['schemas']['learn.lessons.Lesson'];
export type Check = components['schemas']['learn.lessons.Check'];
export type Level = components['schemas']['learn.lessons.Level'];
export type Scope = components['schemas']['learn.lessons.Scope'];

/** The levels, least firm first, as the segmented control shows them. */
export const LEVELS: { value: Level; label: string }[] = [
  { value: 'remind', label: 'Remind' },
  { value: 'ask', label: 'Ask' },
  { value: 'block', label: 'Block' },
];

export function levelLabel(level: string): string {
  return LEVELS.find((l) => l.value === level)?.label ?? level;
}

/** Whether a check looks at the answer before the turn ends (else at a command before it runs). */
export function checksAnswer(check: Pick<Check, 'type'> | null | undefined): boolean {
  return check?.type === 'banned' || check?.type === 'touches';
}

/** What a level does, for its button's title: it depends on what the lesson checks. */
export function levelMeaning(level: Level, check: Check | null): string {
  if (!check) return 'A reminder joins every prompt whatever its level; the level counts once it has a check.';
  if (checksAnswer(check)) {
    switch (level) {
      case 'remind':
        return 'An answer that breaks it is sent back to Claude once.';
      case 'ask':
        return 'An answer that breaks it is sent back to Claude up to twice.';
      case 'block':
        return 'An answer that breaks it is sent back until it keeps it (up to three times).';
    }
  }
  switch (level) {
    case 'remind':
      return 'The command runs, and Claude is reminded of the lesson.';
    case 'ask':
      return 'You are asked before the command runs.';
    case 'block':
      return 'The command is refused, with the lesson quoted.';
  }
  return '';
}

/** Whether it is checked in code, or only said: the row's kind. */
export function kindLabel(l: Pick<Lesson, 'check'>): string {
  return l.check ? 'Checked in code' : 'A reminder in every prompt';
}

/** Characters a check can name, by their names (the characters themselves are not written: an
 * em dash on the screen that lists "no em dashes" would read as a mistake). */
const NAMED: Record<string, string> = {
  '\u2014': 'em dash',
  '\u2013': 'en dash',
  ';': 'semicolon',
  '!': 'exclamation mark',
  '\u201C': 'opening quote',
  '\u201D': 'closing quote',
  '\u2018': 'opening single quote',
  '\u2019': 'closing single quote',
  '\u2026': 'ellipsis character',
};

/** A character as words: its name when it has one, and its code point (`U+2014`). */
export function charWords(c: string): string {
  const cp = c.codePointAt(0);
  const code = cp === undefined ? '' : `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
  const name = NAMED[c];
  return name ? `${name} (${code})` : /^[\x21-\x7e]$/.test(c) ? `"${c}"` : code;
}

/** A list in words: "a", "a or b", "a, b or c"; `most` at most, then "or N more". */
function either(words: string[], most = 4): string {
  const shown = words.slice(0, most);
  const more = words.length - shown.length;
  if (more > 0) return `${shown.join(', ')} or ${more} more`;
  if (shown.length <= 1) return shown.join('');
  return `${shown.slice(0, -1).join(', ')} or ${shown[shown.length - 1]}`;
}

/** What a check looks for, in one line ("No em dash (U+2014) in an answer"). */
export function checkWords(check: Check | null): string | null {
  if (!check) return null;
  switch (check.type) {
    case 'banned': {
      const what = [...check.chars.map(charWords), ...check.words.map((w) => `"${w}"`)];
      return what.length ? `No ${either(what)} in an answer` : null;
    }
    case 'command': {
      const cmd = `\`${check.words.join(' ')}\``;
      return check.flags.length ? `No command ${cmd} with ${either(check.flags.map((f) => `\`${f}\``))}` : `No command ${cmd}`;
    }
    case 'requires': {
      const ran = check.ran.map((r) => `\`${r.join(' ')}\``);
      return `\`${check.before.join(' ')}\` only after ${ran.length ? either(ran, 3) : 'the commands it needs'} ran in the same turn`;
    }
    case 'touches':
      return `A turn that changes files changes ${check.path} too`;
  }
  return null;
}

/** Where a lesson came from, as its row says it: words, then a link to the session it was
 * learned in (`thread`, when known), and the person's own words (`quote`, when they are not
 * the rule's). */
export interface SourceLabel {
  kind: string;
  words: string;
  thread: string | null;
  quote: string | null;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v : null);

export function sourceLabel(l: Pick<Lesson, 'source' | 'rule'>): SourceLabel {
  const s = (l.source && typeof l.source === 'object' ? l.source : {}) as Record<string, unknown>;
  const kind = str(s.kind) ?? 'unknown';
  const thread = str(s.thread);
  const text = str(s.text);
  const quote = text && text.trim() !== l.rule.trim() ? text.trim() : null;
  switch (kind) {
    case 'person':
      return { kind, words: 'You added it', thread: null, quote: null };
    case 'correction':
      return { kind, words: thread ? 'A correction you made in' : 'A correction you made', thread, quote };
    case 'remember':
      return { kind, words: thread ? '/vyre remember, in' : '/vyre remember', thread, quote };
    case 'denied':
      return { kind, words: thread ? 'A call you denied in' : 'A call you denied', thread, quote };
    default:
      return { kind, words: thread ? 'Learned in' : 'Learned', thread, quote };
  }
}

/** Its counts, as the row says them. */
export function countsLine(l: Pick<Lesson, 'applied' | 'broken'>): string {
  return `applied ${l.applied} · broken ${l.broken}`;
}

/** An agent's name as the app writes it (`juno` → `Juno`, as `pretty` in app.svelte.ts). */
const agentName = (n: string): string => (n ? n[0].toUpperCase() + n.slice(1) : n);

/** Where it applies, in words: "Everywhere", "In project news", "For agent Juno". A narrowed
 * lesson without a name applies nowhere (vyred matches its target), and says so. */
export function scopeWords(l: Pick<Lesson, 'scope' | 'target'>): string {
  if (l.scope === 'project') return l.target ? `In project ${l.target}` : 'Nowhere (no project named)';
  if (l.scope === 'agent') return l.target ? `For agent ${agentName(l.target)}` : 'Nowhere (no agent named)';
  return 'Everywhere';
}

/** Where a lesson applies, as one value a choice can hold: `all`, `project:news`, `agent:juno`. */
export function scopeKey(l: Pick<Lesson, 'scope' | 'target'>): string {
  return l.scope === 'all' ? 'all' : `${l.scope}:${l.target ?? ''}`;
}

/** A `scopeKey` back as `learn.edit`'s fields: everywhere names nothing (its target is cleared),
 * a project or an agent names it. Null for a key that is not a choice. */
export function scopeOfKey(key: string): { scope: Scope; target?: string } | null {
  if (key === 'all') return { scope: 'all' };
  const at = key.indexOf(':');
  const scope = key.slice(0, at);
  const target = key.slice(at + 1);
  return at > 0 && target && (scope === 'project' || scope === 'agent') ? { scope, target } : null;
}

/** One entry of the "where it applies" choice. */
export interface ScopeChoice {
  key: string;
  label: string;
}

/** What a lesson can be narrowed to: everywhere, each project, each agent (by name, sorted), and
 * where it applies now even when that project or agent is gone from the lists. */
export function scopeChoices(
  l: Pick<Lesson, 'scope' | 'target'>,
  projects: string[],
  agents: string[],
): { everywhere: ScopeChoice; projects: ScopeChoice[]; agents: ScopeChoice[] } {
  const names = (list: string[], now: string | null): string[] =>
    [...new Set(now ? [...list, now] : list)].filter((n) => n.trim()).sort((a, b) => a.localeCompare(b, undefined, { sensitivity: 'base' }));
  return {
    everywhere: { key: 'all', label: 'Everywhere' },
    projects: names(projects, l.scope === 'project' ? l.target : null).map((n) => ({ key: `project:${n}`, label: n })),
    agents: names(agents, l.scope === 'agent' ? l.target : null).map((n) => ({ key: `agent:${n}`, label: agentName(n) })),
  };
}

/** The list as the screen shows it: those waiting for the person's confirmation first, then
 * the rest oldest first (the order vyred keeps), retired ones only when asked for, last. */
export function shownLessons(list: Lesson[], retired: boolean): Lesson[] {
  const rank = (l: Lesson) => (l.retired ? 2 : l.pending ? 0 : 1);
  return list.filter((l) => retired || !l.retired).sort((a, b) => rank(a) - rank(b) || a.created_at - b.created_at || a.lesson - b.lesson);
}

/** `next` (an answer of learn.add, learn.edit or learn.retire) in the list: in place, or added. */
export function putLesson(list: Lesson[], next: Lesson): Lesson[] {
  return list.some((l) => l.lesson === next.lesson) ? list.map((l) => (l.lesson === next.lesson ? next : l)) : [...list, next];
}

/** An event as it comes (the stream's and `system.events`' shape). */
export interface Happened {
  id: number;
  at: number;
  type: string;
  thread?: string | null;
  payload?: any;
}

const LEVEL_VALUES = new Set<string>(['remind', 'ask', 'block']);
const asLevel = (v: unknown): Level | null => (typeof v === 'string' && LEVEL_VALUES.has(v) ? (v as Level) : null);

/**
 * One `lesson.*` event folded into the list, at once: a break counts (a break is an application
 * too, as vyred counts it), a move up changes the level, a retirement retires. `load`: the event
 * says too little (a lesson learned, an edit), so the list is to be read again. The caller reads
 * it again anyway after a burst: what vyred says wins.
 */
export function foldLesson(list: Lesson[], e: Happened): { list: Lesson[]; load: boolean } {
  const p = (e.payload ?? {}) as Record<string, unknown>;
  const id = typeof p.lesson === 'number' ? p.lesson : null;
  const known = id !== null && list.some((l) => l.lesson === id);
  const change = (f: (l: Lesson) => Lesson) => list.map((l) => (l.lesson === id ? f(l) : l));
  switch (e.type) {
    case 'lesson.broken':
      if (!known) return { list, load: true };
      return { list: change((l) => ({ ...l, broken: l.broken + 1, applied: l.applied + 1 })), load: false };
    case 'lesson.escalated': {
      const to = asLevel(p.to);
      if (!known || !to) return { list, load: true };
      return { list: change((l) => ({ ...l, level: to })), load: false };
    }
    case 'lesson.changed':
      if (known && p.change === 'retired') return { list: change((l) => ({ ...l, retired: true })), load: false };
      return { list, load: true };
    case 'lesson.learned':
      return { list, load: !known };
  }
  return { list, load: false };
}

// ---- The chat's notices ----

/** A one-line notice in a chat, where a lesson was learned or kept. */
export interface LessonNotice {
  /** `learned-<lesson>` (once per lesson) or `broken-<event id>` (once per break). */
  key: string;
  kind: 'learned' | 'broken';
  lesson: number;
  rule: string;
  at: number;
  /** Learned from words no person is known to have typed: it waits for the person. */
  pending?: boolean;
  /** A break: what was wrong, the level the lesson was at, and the level it moved up to. */
  what?: string;
  level?: Level | null;
  to?: Level | null;
}

/** The learned notices a thread's lessons make (those whose source is the thread), for a chat
 * opened after they were learned: where, by when they were made. */
export function learnedNotices(list: Lesson[], thread: string): LessonNotice[] {
  return list
    .filter((l) => sourceLabel(l).thread === thread && l.source && (l.source as Record<string, unknown>).kind !== 'person')
    .map((l) => ({ key: `learned-${l.lesson}`, kind: 'learned' as const, lesson: l.lesson, rule: l.rule, at: l.created_at, pending: l.pending }));
}

/**
 * One event of a thread folded into its notices (a new list; the same list when it changes
 * nothing): `lesson.learned` and `lesson.broken` add one each (once, by its key, however often
 * it is read); `lesson.escalated` says, on the break it followed, the level the lesson moved to.
 */
export function foldNotice(notices: LessonNotice[], e: Happened): LessonNotice[] {
  const p = (e.payload ?? {}) as Record<string, unknown>;
  if (typeof p.lesson !== 'number') return notices;
  const lesson = p.lesson;
  const rule = typeof p.rule === 'string' ? p.rule : '';
  switch (e.type) {
    case 'lesson.learned': {
      const key = `learned-${lesson}`;
      if (notices.some((n) => n.key === key)) return notices;
      return [...notices, { key, kind: 'learned', lesson, rule, at: e.at, pending: p.pending === true }];
    }
    case 'lesson.broken': {
      const key = `broken-${e.id}`;
      if (notices.some((n) => n.key === key)) return notices;
      return [...notices, { key, kind: 'broken', lesson, rule, at: e.at, what: typeof p.what === 'string' ? p.what : '', level: asLevel(p.level), to: null }];
    }
    case 'lesson.escalated': {
      const to = asLevel(p.to);
      // The newest break of the lesson at or before it: vyred says it moved up right after.
      let i = -1;
      notices.forEach((n, j) => {
        if (n.kind === 'broken' && n.lesson === lesson && n.at <= e.at && (i < 0 || n.at >= notices[i].at)) i = j;
      });
      if (i < 0 || !to || notices[i].to === to) return notices;
      return notices.map((n, j) => (j === i ? { ...n, to } : n));
    }
  }
  return notices;
}

/** Notices from both places (the lessons' list and the events), once each by key, oldest first. */
export function mergeNotices(...lists: LessonNotice[][]): LessonNotice[] {
  const byKey = new Map<string, LessonNotice>();
  for (const list of lists) for (const n of list) if (!byKey.has(n.key)) byKey.set(n.key, n);
  return [...byKey.values()].sort((a, b) => a.at - b.at || (a.key < b.key ? -1 : 1));
}

/** What happened when a lesson was kept: the answer went back, or (a command) by its level. Its
 * check says which; without it (a lesson not in the list), what vyred said was wrong. */
export function keptWords(n: Pick<LessonNotice, 'what' | 'level'>, check: Check | null | undefined): string {
  const answer = check ? checksAnswer(check) : !/^(the command|`)/.test(n.what ?? '');
  if (answer) return 'sent back to Claude';
  switch (n.level) {
    case 'ask':
      return 'you were asked first';
    case 'block':
      return 'the command was refused';
    default:
      return 'Claude was reminded';
  }
}

/** A notice's line: "Learned: <rule>", "Lesson kept: <rule> · sent back to Claude". */
export function noticeLine(n: LessonNotice, check?: Check | null): string {
  if (n.kind === 'learned') return n.pending ? `Learned, once you confirm it: ${n.rule}` : `Learned: ${n.rule}`;
  const up = n.to ? ` · now at ${levelLabel(n.to)}` : '';
  return `Lesson kept: ${n.rule} · ${keptWords(n, check)}${up}`;
}

/** What placing needs of a timeline item. */
export interface Placed {
  key: string;
  kind: string;
  /** Missing for a message sent here and not confirmed yet, or an answer still streaming. */
  at?: number;
}

/**
 * Where each notice goes among `items` (oldest first): before the first item after it in time,
 * or after the last. A learned notice belongs right after the person's message that taught it:
 * one that lands before that message (a message read from the transcript is stamped when Claude
 * Code wrote it, which may be after vyred learned from it) moves after it. `older`: the timeline
 * has older pages not loaded; a notice from before what is loaded belongs up there.
 */
export function placeNotices<T extends Placed>(items: T[], notices: LessonNotice[], older = false): { before: Map<string, LessonNotice[]>; end: LessonNotice[] } {
  const before = new Map<string, LessonNotice[]>();
  const end: LessonNotice[] = [];
  const at = (i: Placed) => i.at ?? Infinity;
  for (const n of [...notices].sort((a, b) => a.at - b.at)) {
    let i = items.findIndex((it) => at(it) > n.at);
    if (i < 0) i = items.length;
    if (older && i === 0) continue;
    if (n.kind === 'learned' && !(i > 0 && items[i - 1].kind === 'user') && i < items.length && items[i].kind === 'user' && items[i].at !== undefined) i++;
    if (i >= items.length) end.push(n);
    else before.set(items[i].key, [...(before.get(items[i].key) ?? []), n]);
  }
  return { before, end };
}
